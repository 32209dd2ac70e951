"""Loco Poker engine (seed 002_4b30a22f310a1e26, RULES LO-1..LO-7) and its bot.

Hands are stacked with :class:`cardhall.engine.stacked.StackedDeck` (its ``shuffle``
writes a chosen order) following the dealing order the module docstring
promises, spelled out independently in :func:`stack`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardhall.engine.base import Event, IllegalAction
from cardhall.engine.bots.loco_poker import LocoBot
from cardhall.engine.bots.random_bot import RandomBot
from cardhall.engine.bots.registry import make_bot
from cardhall.engine.cards import RANKS, SUITS, parse_cards, standard_deck
from cardhall.engine.games.loco_poker import LocoPoker
from cardhall.engine.play import play_match, win_rate
from cardhall.engine.registry import engine_class
from cardhall.engine.rng import FairRandom
from cardhall.engine.stacked import StackedDeck

# -- helpers ------------------------------------------------------------------


def stack(players: Sequence[int], holes: Mapping[int, str] | None = None, board: str = "") -> list[str]:
    """A deck order dealing ``holes`` (seat -> "AhKd") to ``players`` (the
    dealing order: clockwise from left of the dealer) and ``board`` (up to five
    cards: flop, turn, river) as the module docstring specifies: Pk gets
    D[k-1] and D[n+k-1]; burns at D[2n], D[2n+4], D[2n+6]; flop D[2n+1..2n+3],
    turn D[2n+5], river D[2n+7]. Everything else: the unused cards in
    canonical order."""
    n = len(players)
    slots: list[str | None] = [None] * 52
    for k, seat in enumerate(players):
        if holes and seat in holes:
            slots[k], slots[n + k] = parse_cards(holes[seat])
    for pos, card in zip([2 * n + 1, 2 * n + 2, 2 * n + 3, 2 * n + 5, 2 * n + 7], parse_cards(board)):
        slots[pos] = card
    rest = iter(c for c in standard_deck() if c not in slots)
    return [c if c is not None else next(rest) for c in slots]


def game(seats: Sequence[int], *orders: list[str], draws: Sequence[int] = (), **options: Any) -> LocoPoker:
    """A started match whose hands are dealt from ``orders``."""
    engine = LocoPoker.new(list(seats), options, StackedDeck(*orders, draws=draws))
    engine.start()
    return engine


def play(engine: LocoPoker, *steps: tuple[int, str] | str) -> list[Event]:
    """Apply ``(seat, type)`` actions; ``"advance"`` takes a dealer step."""
    events: list[Event] = []
    for step in steps:
        if step == "advance":
            events += engine.advance()
        else:
            seat, kind = step
            events += engine.apply(seat, {"type": kind})
    return events


def run_out(engine: LocoPoker) -> list[Event]:
    """Take dealer steps until a decision, the next hand or the end is due."""
    events: list[Event] = []
    while engine.pending in ("street", "showdown"):
        events += engine.advance()
    return events


def of_type(events: Sequence[Event], kind: str) -> list[dict[str, Any]]:
    return [e.data for e in events if e.type == kind]


def hand_end(events: Sequence[Event]) -> dict[str, Any]:
    (end,) = of_type(events, "hand_end")
    return end


def check_round(engine: LocoPoker) -> list[Event]:
    """Everyone still in checks (one street's betting)."""
    events: list[Event] = []
    while engine.to_act is not None:
        events += engine.apply(engine.to_act, {"type": "check"})
    return events


def state(engine: LocoPoker) -> dict[str, Any]:
    return engine.to_data()


# -- LO-1: players, deal, dealer, first to act --------------------------------


@pytest.mark.parametrize("count", [2, 8])
def test_LO1_two_to_eight_players_accepted(count: int) -> None:
    engine = LocoPoker.new(list(range(1, count + 1)), {"dealer": 1}, FairRandom(b"x"))
    engine.start()
    assert engine.view(None)["players"] == [*range(2, count + 1), 1]


@pytest.mark.parametrize(
    ("seats", "options", "word"),
    [
        ([1], {}, "seats"),
        (list(range(1, 10)), {}, "seats"),
        ([1, 1, 2], {}, "distinct"),
        ([0, 1], {}, "seats"),
        ([1, 2], {"points_to_win": 0}, "points_to_win"),
        ([1, 2], {"points_to_win": "3"}, "points_to_win"),
        ([1, 2], {"points_to_win": True}, "points_to_win"),
        ([1, 2], {"multi_call": "everyone"}, "multi_call"),
        ([1, 2], {"dealer": 3}, "dealer"),
        ([1, 2], {"blinds": 1}, "blinds"),
    ],
    ids=["one_player", "nine_players", "repeated_seat", "seat_zero", "points_zero", "points_string",
         "points_bool", "multi_call_unknown", "dealer_not_seated", "unknown_option"],
)
def test_LO1_bad_seats_and_options_raise_value_error(seats: list[int], options: dict[str, Any], word: str) -> None:
    with pytest.raises(ValueError, match=word):
        LocoPoker.new(seats, options, FairRandom(b"x"))


def test_LO1_registered_under_its_protocol_name() -> None:
    assert engine_class("loco_poker") is LocoPoker


@pytest.mark.parametrize(("seats", "draw", "dealer"), [([1, 2, 3], 0, 1), ([1, 2, 3], 2, 3), ([2, 5, 7, 8], 1, 5)])
def test_LO1_first_dealer_at_random_through_the_generator(seats: list[int], draw: int, dealer: int) -> None:
    engine = game(seats, standard_deck(), draws=[draw])
    assert engine.dealer == dealer
    assert engine.view(None)["players"][-1] == dealer


def test_LO1_G2_cards_follow_the_documented_dealing_order_from_the_seed() -> None:
    """Rebuild the deck from the same generator key as a client would from the
    revealed seed, and check every hole and board card and burn."""
    seats, dealer = [1, 3, 4, 6], 4
    engine = LocoPoker.new(seats, {"dealer": dealer}, FairRandom(b"seed", [b"client"]))
    engine.start()
    while engine.view(None)["street"] != "river" or engine.pending is None:
        if engine.pending:
            engine.advance()
        else:
            engine.apply(engine.to_act, {"type": "check"})
    record = engine.hand_record()
    deck = standard_deck()
    FairRandom(b"seed", [b"client"]).shuffle(deck)
    players = [6, 1, 3, 4]  # clockwise from left of seat 4
    n = len(players)
    assert record["players"] == players
    for k, seat in enumerate(players):
        assert record["hole"][str(seat)] == [deck[k], deck[n + k]]
    assert record["burns"] == [deck[2 * n], deck[2 * n + 4], deck[2 * n + 6]]
    assert record["board"] == [*deck[2 * n + 1 : 2 * n + 4], deck[2 * n + 5], deck[2 * n + 7]]


FIRST_TO_ACT = [
    ("heads_up_dealer_1", [1, 2], 1, 2),
    ("heads_up_dealer_2", [1, 2], 2, 1),
    ("three_dealer_3_wraps", [1, 2, 3], 3, 1),
    ("gaps_in_seats", [2, 5, 7], 5, 7),
    ("gaps_wrap", [2, 5, 7], 7, 2),
]


@pytest.mark.parametrize(("name", "seats", "dealer", "first"), FIRST_TO_ACT, ids=[c[0] for c in FIRST_TO_ACT])
def test_LO1_first_to_act_is_left_of_the_dealer_on_every_street(name: str, seats: list[int], dealer: int, first: int) -> None:
    engine = game(seats, standard_deck(), dealer=dealer)
    for street in ("preflop", "flop", "turn", "river"):
        assert engine.view(None)["street"] == street
        assert engine.to_act == first
        check_round(engine)
        if engine.pending == "street":
            engine.advance()
    assert engine.pending == "hand"


def test_LO1_first_to_act_skips_a_folded_player_on_later_streets() -> None:
    engine = game([1, 2, 3], standard_deck(), dealer=3)
    play(engine, (1, "fold"), (2, "check"), (3, "check"), "advance")
    assert engine.to_act == 2


def test_LO1_dealer_passes_clockwise_and_skips_knocked_out_players() -> None:
    # hand 1, dealer 3 (order 1, 2, 3): seat 1 all-in with kings, 2 folds, 3 calls with aces: 1 is out
    first = stack([1, 2, 3], {1: "KcKd", 3: "AcAd"}, "2h7s9dJc4h")
    engine = game([1, 2, 3], first, stack([3, 2]), stack([2, 3]), dealer=3)
    play(engine, (1, "all_in"), (2, "fold"), (3, "call"))
    run_out(engine)
    assert engine.view(None)["alive"] == [2, 3]
    play(engine, "advance")  # the seat left of 3 is 1, knocked out: the dealer is 2
    assert engine.dealer == 2 and engine.view(None)["players"] == [3, 2]
    play(engine, (3, "fold"), "advance")  # next dealer: 3
    assert engine.dealer == 3 and engine.view(None)["players"] == [2, 3]


def test_LO1_FL5_one_burn_before_flop_turn_and_river() -> None:
    order = stack([1, 2], {1: "AcAd", 2: "KcKd"}, "2h7s9dJc4h")
    engine = game([1, 2], order, dealer=2)
    events = play(engine, (1, "check"), (2, "check"), "advance")
    assert of_type(events, "street") == [{"type": "street", "hand": 1, "street": "flop", "cards": ["2h", "7s", "9d"],
                                         "board": ["2h", "7s", "9d"]}]
    for _ in range(2):
        play(engine, (1, "check"), (2, "check"), "advance")
    assert engine.view(None)["board"] == parse_cards("2h7s9dJc4h")
    play(engine, (1, "check"), (2, "check"))
    assert engine.hand_record()["burns"] == [order[4], order[8], order[10]]


# -- LO-2: actions and the answer to an all-in -------------------------------


def test_LO2_legal_actions_without_and_with_an_all_in() -> None:
    engine = game([1, 2, 3], standard_deck(), dealer=3)
    assert [a.to_data() for a in engine.legal_actions()] == [{"type": "check"}, {"type": "fold"}, {"type": "all_in"}]
    play(engine, (1, "all_in"))
    assert [a.to_data() for a in engine.legal_actions()] == [{"type": "call"}, {"type": "fold"}]


def test_LO2_players_answer_from_the_all_in_players_left_including_those_who_checked() -> None:
    engine = game([1, 2, 3, 4], standard_deck(), dealer=4)
    play(engine, (1, "check"), (2, "check"), (3, "all_in"))
    answered = []
    while engine.to_act is not None:
        answered.append(engine.to_act)
        play(engine, (engine.to_act, "call"))
    assert answered == [4, 1, 2]
    assert engine.view(None)["callers"] == [4, 1, 2]


def test_LO2_a_player_who_folded_earlier_is_not_asked() -> None:
    engine = game([1, 2, 3, 4], standard_deck(), dealer=4)
    play(engine, (1, "fold"), (2, "check"), (3, "check"), (4, "check"), "advance", (2, "all_in"))
    asked = []
    while engine.to_act is not None:
        asked.append(engine.to_act)
        play(engine, (engine.to_act, "fold"))
    assert asked == [3, 4]


def test_LO2_called_all_in_deals_the_board_one_street_per_step_then_the_showdown() -> None:
    engine = game([1, 2], stack([2, 1], {1: "AcAd", 2: "KcKd"}, "2h7s9dJc4h"), dealer=1)
    play(engine, (2, "all_in"), (1, "call"))
    steps = []
    while engine.pending in ("street", "showdown"):
        steps.append((engine.pending, [e.type for e in engine.advance()]))
    assert steps == [("street", ["street"]), ("street", ["street"]), ("street", ["street"]),
                     ("showdown", ["showdown", "knocked_out", "hand_end", "match_end"])]


def test_LO2_all_in_on_the_river_goes_straight_to_the_showdown() -> None:
    engine = game([1, 2], stack([2, 1], {1: "AcAd", 2: "KcKd"}, "2h7s9dJc4h"), dealer=1)
    for _ in range(3):
        play(engine, (2, "check"), (1, "check"), "advance")
    play(engine, (2, "check"), (1, "all_in"), (2, "call"))
    assert engine.pending == "showdown"


def test_LO2_an_unanswered_all_in_blocks_nothing_else() -> None:
    """After an all-in the to-act player may only call or fold (no check, no second all-in)."""
    engine = game([1, 2, 3], standard_deck(), dealer=3)
    play(engine, (1, "all_in"))
    for kind in ("check", "all_in"):
        with pytest.raises(IllegalAction) as info:
            engine.apply(2, {"type": kind})
        assert info.value.code == "illegal_action" and info.value.rule == "LO-2"


ILLEGAL = [
    ("wrong_seat", [], 2, {"type": "check"}, "not_your_turn"),
    ("unknown_seat", [], 9, {"type": "check"}, "not_your_turn"),
    ("call_without_all_in", [], 1, {"type": "call"}, "illegal_action"),
    ("raise_does_not_exist", [], 1, {"type": "raise"}, "unknown_action"),
    ("bet_does_not_exist", [], 1, {"type": "bet", "amount": 1}, "bad_action"),
    ("extra_field", [], 1, {"type": "check", "amount": 5}, "bad_action"),
    ("no_type", [], 1, {}, "bad_action"),
    ("type_not_string", [], 1, {"type": 3}, "bad_action"),
    ("not_a_map", [], 1, "check", "bad_action"),
    ("check_facing_all_in", [(1, "all_in")], 2, {"type": "check"}, "illegal_action"),
    ("all_in_seat_answers_itself", [(1, "all_in")], 1, {"type": "call"}, "not_your_turn"),
    ("act_while_street_pending", [(1, "check"), (2, "check")], 1, {"type": "check"}, "not_your_turn"),
]


@pytest.mark.parametrize(("name", "before", "seat", "action", "code"), ILLEGAL, ids=[c[0] for c in ILLEGAL])
def test_LO2_illegal_actions_are_rejected_and_change_nothing(name: str, before: list, seat: int, action: Any, code: str) -> None:
    engine = game([1, 2], standard_deck(), dealer=2)
    play(engine, *before)
    snapshot = state(engine)
    with pytest.raises(IllegalAction) as info:
        engine.apply(seat, action)
    assert info.value.code == code
    assert state(engine) == snapshot


def test_LO2_dealer_steps_and_start_are_guarded() -> None:
    engine = LocoPoker.new([1, 2], {"dealer": 1}, StackedDeck(standard_deck()))
    with pytest.raises(IllegalAction) as info:
        engine.apply(2, {"type": "check"})
    assert info.value.code == "not_started"
    engine.start()
    with pytest.raises(IllegalAction) as info:
        engine.start()
    assert info.value.code == "already_started"
    with pytest.raises(IllegalAction) as info:
        engine.advance()
    assert info.value.code == "nothing_pending"


# -- LO-3: folds ------------------------------------------------------------------


def test_LO3_fold_without_an_all_in_is_allowed_and_the_hand_goes_on() -> None:
    engine = game([1, 2, 3], standard_deck(), dealer=3)
    play(engine, (1, "fold"))
    assert engine.to_act == 2 and engine.view(None)["in_hand"] == [2, 3]


def test_LO3_all_but_one_fold_without_an_all_in_nobody_scores() -> None:
    engine = game([1, 2, 3], standard_deck(), dealer=3)
    events = play(engine, (1, "check"), (2, "fold"), (3, "fold"))
    end = hand_end(events)
    assert end["result"] == "folded_around" and end["scored"] is None
    assert end["points"] == {"1": 0, "2": 0, "3": 0}
    assert engine.pending == "hand" and not of_type(events, "showdown")


# -- the seed's four outcomes -----------------------------------------------------


def test_seed_uncalled_all_in_scores_one_point() -> None:
    engine = game([1, 2, 3], standard_deck(), dealer=3)
    events = play(engine, (1, "check"), (2, "all_in"), (3, "fold"), (1, "fold"))
    assert of_type(events, "point") == [{"type": "point", "hand": 1, "seat": 2, "points": 1}]
    end = hand_end(events)
    assert end["result"] == "uncalled_all_in" and end["scored"] == 2
    assert engine.view(None)["points"] == {"1": 0, "2": 1, "3": 0}
    assert engine.view(None)["shown"] == {} and engine.view(None)["board"] == []


def test_seed_called_all_in_all_in_player_wins_caller_knocked_out() -> None:
    engine = game([1, 2, 3], stack([1, 2, 3], {1: "AcAd", 2: "KcKd"}, "2h7s9dJc4h"), dealer=3)
    play(engine, (1, "all_in"), (2, "call"), (3, "fold"))
    events = run_out(engine)
    assert of_type(events, "knocked_out") == [{"type": "knocked_out", "hand": 1, "seats": [2]}]
    end = hand_end(events)
    assert end["result"] == "all_in_won" and end["scored"] is None
    assert end["points"] == {"1": 0, "2": 0, "3": 0}
    assert engine.view(None)["alive"] == [1, 3]


def test_seed_called_all_in_all_in_player_loses_is_knocked_out_whatever_their_points() -> None:
    # hands 1 and 2: seat 1 scores twice uncalled; hand 3 (dealer 2, order 3, 1, 2): seat 1 all-in, loses
    third = stack([3, 1, 2], {1: "KcKd", 2: "AcAd"}, "2h7s9dJc4h")
    engine = game([1, 2, 3], standard_deck(), standard_deck(), third, dealer=3)
    play(engine, (1, "all_in"), (2, "fold"), (3, "fold"), "advance")
    play(engine, (2, "check"), (3, "check"), (1, "all_in"), (2, "fold"), (3, "fold"), "advance")
    assert engine.view(None)["points"]["1"] == 2
    play(engine, (3, "check"), (1, "all_in"), (2, "call"), (3, "fold"))
    events = run_out(engine)
    assert of_type(events, "knocked_out")[0]["seats"] == [1]
    assert hand_end(events)["result"] == "all_in_lost"
    assert engine.view(None)["points"] == {"1": 0, "2": 0, "3": 0}
    assert engine.view(None)["alive"] == [2, 3]


def test_seed_checked_through_to_the_river_nobody_scores_and_nothing_is_shown() -> None:
    engine = game([1, 2, 3], stack([1, 2, 3], {1: "AcAd"}, "2h7s9dJc4h"), dealer=3)
    events: list[Event] = []
    for _ in range(3):
        events += play(engine, (1, "check"), (2, "check"), (3, "check"), "advance")
    events += play(engine, (1, "check"), (2, "check"), (3, "check"))
    end = hand_end(events)
    assert end["result"] == "checked_down" and end["scored"] is None and end["knocked_out"] == []
    assert not of_type(events, "showdown") and engine.view(None)["shown"] == {}
    assert engine.pending == "hand"


# -- LO-4: several callers ---------------------------------------------------------

BOARD = "2c7d9hJs4c"  # no straight or flush for the hands below
# seat 1 goes all-in (dealer 3: order 1, 2, 3), seats 2 and 3 call
MULTI = [
    # name, multi_call, holes 1/2/3, knocked out, result, duels (seat -> winner)
    ("LO4_best_hand_all_in_alone_best_every_caller_out", "best_hand", ("AhAd", "KhKd", "QhQd"), [2, 3], "all_in_won", None),
    ("LO4_best_hand_second_caller_best_only_all_in_out", "best_hand", ("KhKd", "QhQd", "AhAd"), [1], "all_in_lost", None),
    ("LO4_best_hand_first_caller_best_only_all_in_out", "best_hand", ("KhKd", "AhAd", "QhQd"), [1], "all_in_lost", None),
    ("LO4_best_hand_caller_between_survives", "best_hand", ("QhQd", "KhKd", "AhAd"), [1], "all_in_lost", None),
    ("LO5_best_hand_all_in_ties_best_caller_push", "best_hand", ("AcKd", "QhTd", "AhKs"), [], "push", None),
    ("LO4_best_hand_callers_tie_for_best_all_in_out", "best_hand", ("5h6s", "AcKd", "AhKs"), [1], "all_in_lost", None),
    ("LO4_duels_all_in_beats_both", "duels", ("AhAd", "KhKd", "QhQd"), [2, 3], "all_in_won", {2: 1, 3: 1}),
    ("LO4_duels_all_in_beats_one_loses_to_other", "duels", ("KhKd", "QhQd", "AhAd"), [1, 2], "all_in_lost", {2: 1, 3: 3}),
    ("LO4_duels_all_in_loses_to_both", "duels", ("QhQd", "KhKd", "AhAd"), [1], "all_in_lost", {2: 2, 3: 3}),
    ("LO5_duels_tie_is_a_push_other_duel_won", "duels", ("AcKd", "AhKs", "5h6s"), [3], "all_in_won", {2: None, 3: 1}),
    ("LO5_duels_tie_is_a_push_other_duel_lost", "duels", ("AcKd", "AhKs", "QhQd"), [1], "all_in_lost", {2: None, 3: 3}),
    ("LO5_duels_all_pushes", "duels", ("AcKd", "AhKs", "AsKc"), [], "push", {2: None, 3: None}),
]


@pytest.mark.parametrize(("name", "mode", "holes", "out", "result", "duels"), MULTI, ids=[c[0] for c in MULTI])
def test_LO4_LO5_several_callers(name: str, mode: str, holes: tuple[str, str, str], out: list[int], result: str,
                                 duels: dict[int, int | None] | None) -> None:
    engine = game([1, 2, 3, 4], stack([1, 2, 3, 4], dict(zip([1, 2, 3], holes)), BOARD), dealer=4,
                  multi_call=mode)
    play(engine, (1, "all_in"), (2, "call"), (3, "call"), (4, "fold"))
    events = run_out(engine)
    end = hand_end(events)
    assert end["knocked_out"] == out and end["result"] == result and end["scored"] is None
    assert engine.view(None)["alive"] == [s for s in (1, 2, 3, 4) if s not in out]
    assert set(engine.view(None)["points"].values()) == {0}
    if duels is None:
        assert "duels" not in end
    else:
        assert end["duels"] == [{"seat": s, "winner": w} for s, w in duels.items()]


def test_LO4_exact_case_three_players_caller_C_best_A_out_B_survives_nobody_scores() -> None:
    # A = seat 1 (all-in), B = seat 2, C = seat 3 holds the best hand; dealer 3
    engine = game([1, 2, 3], stack([1, 2, 3], {1: "KhKd", 2: "QhQd", 3: "AhAd"}, BOARD), dealer=3,
                  multi_call="best_hand")
    play(engine, (1, "all_in"), (2, "call"), (3, "call"))
    events = run_out(engine)
    assert of_type(events, "knocked_out") == [{"type": "knocked_out", "hand": 1, "seats": [1]}]
    assert engine.view(None)["alive"] == [2, 3]
    assert engine.view(None)["points"] == {"1": 0, "2": 0, "3": 0}
    assert not of_type(events, "point")
    assert engine.pending == "hand" and not engine.finished


def test_LO5_heads_up_tie_is_a_push() -> None:
    engine = game([1, 2], stack([2, 1], {2: "AcKd", 1: "AhKs"}, BOARD), dealer=1)
    play(engine, (2, "all_in"), (1, "call"))
    events = run_out(engine)
    end = hand_end(events)
    assert end["result"] == "push" and end["knocked_out"] == [] and end["scored"] is None
    assert engine.view(None)["alive"] == [1, 2] and engine.pending == "hand"
    assert of_type(events, "showdown")[0]["best"] == [2, 1]


# -- LO-6: the match's end ---------------------------------------------------------


def test_LO6_points_to_win_ends_the_match() -> None:
    engine = game([1, 2, 3], standard_deck(), standard_deck(), dealer=3, points_to_win=2)
    play(engine, (1, "all_in"), (2, "fold"), (3, "fold"), "advance")
    events = play(engine, (2, "check"), (3, "check"), (1, "all_in"), (2, "fold"), (3, "fold"))
    assert engine.finished and engine.pending is None and engine.to_act is None
    result = engine.result()
    assert result == {"ranking": [[1], [2, 3]], "winners": [1], "points": {"1": 2, "2": 0, "3": 0}, "hands": 2}
    assert of_type(events, "match_end") == [{"type": "match_end", **result}]
    with pytest.raises(IllegalAction) as info:
        engine.apply(1, {"type": "check"})
    assert info.value.code == "match_over"


def test_LO6_default_is_three_points() -> None:
    # heads-up, the first to act alternates 1, 2, 1; seat 1 goes all-in every hand, seat 2 folds
    engine = game([1, 2], standard_deck(), standard_deck(), standard_deck(), dealer=2)
    play(engine, (1, "all_in"), (2, "fold"), "advance", (2, "check"), (1, "all_in"), (2, "fold"), "advance")
    assert not engine.finished and engine.view(None)["points"] == {"1": 2, "2": 0}
    play(engine, (1, "all_in"), (2, "fold"))
    assert engine.finished and engine.result()["winners"] == [1] and "loser" not in engine.result()


def test_LO6_last_player_left_wins_first_knocked_out_shares_the_loss() -> None:
    # 4 players, dealer 4 (order 1, 2, 3, 4): seat 1 all-in with aces, 2 and 3 call and lose, 4 folds
    first = stack([1, 2, 3, 4], {1: "AhAd", 2: "KhKd", 3: "QhQd"}, BOARD)
    # hand 2: dealer 1 among {1, 4}: order 4, 1; seat 4 all-in with aces, 1 calls with kings and is out
    second = stack([4, 1], {4: "AhAd", 1: "KhKd"}, BOARD)
    engine = game([1, 2, 3, 4], first, second, dealer=4)
    play(engine, (1, "all_in"), (2, "call"), (3, "call"), (4, "fold"))
    run_out(engine)
    assert engine.view(None)["knocked_out"] == [{"hand": 1, "seats": [2, 3]}]
    play(engine, "advance", (4, "all_in"), (1, "call"))
    events = run_out(engine)
    assert engine.finished
    result = engine.result()
    assert result["winners"] == [4] and result["loser"] == [2, 3]
    assert result["ranking"] == [[4], [1], [2, 3]]
    assert of_type(events, "match_end")[0]["loser"] == [2, 3]


def test_LO6_knocked_out_player_is_dealt_no_more_hands() -> None:
    first = stack([1, 2, 3], {1: "AhAd", 2: "KhKd"}, BOARD)
    engine = game([1, 2, 3], first, stack([3, 1]), dealer=3)
    play(engine, (1, "all_in"), (2, "call"), (3, "fold"))
    run_out(engine)
    events = play(engine, "advance")
    assert of_type(events, "hand_start")[0]["players"] == [3, 1]
    assert of_type(events, "hole_cards")[0]["counts"] == {"3": 2, "1": 2}
    assert engine.view(2)["hole_cards"] is None


def test_LO6_result_is_none_until_the_match_ends() -> None:
    engine = game([1, 2], standard_deck(), dealer=2)
    assert engine.result() is None and not engine.finished


# -- LO-7: Loco! --------------------------------------------------------------------

LOCO = [
    # name, holes for seats 1 (all-in), 2 and 3 (callers; None: folds), board, loco seats, beaten by
    ("LO7_set_beaten_by_river_flush", "9c9d", "AhKh", None, "9s2h5hJc3h", [1], [2]),
    ("LO7_no_loco_when_the_turn_leader_wins", "9c9d", "AhKh", None, "9s2h5hJc4c", None, None),
    ("LO7_turn_leader_not_flop_leader_is_judged", "AcAd", "KcKd", None, "2s7h9dKsAs", [2], [1]),
    ("LO7_no_loco_when_flop_leader_loses_to_the_turn", "AcAd", "KcKd", None, "2s7h9dKs3h", None, None),
    ("LO7_no_loco_on_a_push", "AcKd", "AhKs", None, BOARD, None, None),
    ("LO7_tied_turn_leaders_one_wins_no_loco", "AhKh", "AdKc", None, "2h7h9cJs3h", None, None),
    ("LO7_tied_turn_leaders_both_beaten", "AhKd", "AdKh", "5c6d", "2s7h9cJs8s", [1, 2], [3]),
]


@pytest.mark.parametrize(("name", "hole1", "hole2", "hole3", "board", "seats", "beaten_by"), LOCO,
                         ids=[c[0] for c in LOCO])
def test_LO7_loco_event(name: str, hole1: str, hole2: str, hole3: str | None, board: str, seats: list[int] | None,
                        beaten_by: list[int] | None) -> None:
    holes = {1: hole1, 2: hole2, **({3: hole3} if hole3 else {})}
    engine = game([1, 2, 3], stack([1, 2, 3], holes, board), dealer=3)
    play(engine, (1, "all_in"), (2, "call"), (3, "call" if hole3 else "fold"))
    events = run_out(engine)
    loco = [e for e in events if e.type == "loco"]
    if seats is None:
        assert loco == []
    else:
        assert [e.data for e in loco] == [{"type": "loco", "hand": 1, "seats": seats, "beaten_by": beaten_by}]
        assert loco[0].private is None and loco[0].view(None) == loco[0].data  # everyone sees it


def test_LO7_all_in_on_the_river_still_judges_the_turn() -> None:
    engine = game([1, 2], stack([2, 1], {2: "9c9d", 1: "AhKh"}, "9s2h5hJc3h"), dealer=1)
    for _ in range(3):
        play(engine, (2, "check"), (1, "check"), "advance")
    play(engine, (2, "check"), (1, "all_in"), (2, "call"))
    events = run_out(engine)
    assert of_type(events, "loco") == [{"type": "loco", "hand": 1, "seats": [2], "beaten_by": [1]}]


# -- events and views: what each viewer sees --------------------------------------


def test_hole_cards_event_shows_counts_publicly_and_cards_only_to_their_seat() -> None:
    order = stack([2, 3, 1], {1: "AhAd", 2: "KhKd", 3: "QhQd"})
    engine = LocoPoker.new([1, 2, 3], {"dealer": 1}, StackedDeck(order))
    events = engine.start()
    (hole,) = [e for e in events if e.type == "hole_cards"]
    assert hole.view(None) == {"type": "hole_cards", "hand": 1, "counts": {"2": 2, "3": 2, "1": 2}}
    assert hole.view(1)["cards"] == ["Ah", "Ad"]
    assert hole.view(3)["cards"] == ["Qh", "Qd"]
    assert engine.view(2)["hole_cards"] == ["Kh", "Kd"]
    assert engine.view(None)["hole_cards"] is None


def test_showdown_shows_all_in_player_and_callers_never_a_folded_hand() -> None:
    engine = game([1, 2, 3], stack([1, 2, 3], {1: "AhAd", 2: "KhKd", 3: "QhQd"}, BOARD), dealer=3)
    events = play(engine, (1, "all_in"), (2, "fold"), (3, "call"))
    events += run_out(engine)
    (showdown,) = of_type(events, "showdown")
    assert [h["seat"] for h in showdown["hands"]] == [1, 3]
    assert showdown["hands"][0] == {"seat": 1, "cards": ["Ah", "Ad"], "hand": "Pair"}
    assert engine.view(None)["shown"] == {"1": ["Ah", "Ad"], "3": ["Qh", "Qd"]}
    for viewer in (None, 1, 3):
        for event in events:
            assert "Kh" not in str(event.view(viewer)) and "Kd" not in str(event.view(viewer))
        assert "Kh" not in str(engine.view(viewer))
    assert engine.view(2)["hole_cards"] == ["Kh", "Kd"]  # the folder still sees their own cards
    record = engine.hand_record()
    assert record["hole"] == {"1": ["Ah", "Ad"], "2": ["Kh", "Kd"], "3": ["Qh", "Qd"]}
    assert record["outcome"]["result"] == "all_in_won" and record["callers"] == [3]
    assert [a["type"] for a in record["actions"]] == ["all_in", "fold", "call"]


def test_uncalled_all_in_shows_nothing() -> None:
    engine = game([1, 2], stack([2, 1], {1: "AhAd", 2: "KhKd"}), dealer=1)
    events = play(engine, (2, "all_in"), (1, "fold"))
    for event in events:
        assert "Kh" not in str(event.view(None)) and "Kh" not in str(event.view(1))


@pytest.mark.parametrize(
    ("before", "seat", "expected"),
    [([], 1, {"type": "check"}), ([(1, "all_in")], 2, {"type": "fold"}), ([], 2, {"type": "fold"})],
    ids=["G3_check_when_legal", "G3_fold_facing_all_in", "G3_not_to_act"],
)
def test_G3_timeout_action(before: list, seat: int, expected: dict[str, str]) -> None:
    engine = game([1, 2, 3], standard_deck(), dealer=3)
    play(engine, *before)
    assert engine.timeout_action(seat) == expected


def test_hand_record_is_none_before_the_first_hand_ends() -> None:
    engine = game([1, 2], standard_deck(), dealer=2)
    assert engine.hand_record() is None
    play(engine, (1, "fold"))
    assert engine.hand_record()["outcome"]["result"] == "folded_around"


# -- properties over random matches -------------------------------------------------

CARDS = {r + s for r in RANKS for s in SUITS}
PROBES: list[Any] = [
    {"type": "check"}, {"type": "fold"}, {"type": "all_in"}, {"type": "call"}, {"type": "raise"},
    {"type": "bet", "amount": 10}, {"type": "check", "seat": 1}, {}, "fold", None, {"type": ["check"]},
]


def cards_in(value: Any) -> set[str]:
    """Every card string anywhere in ``value`` (keys included)."""
    if isinstance(value, str):
        return {value} if value in CARDS else set()
    if isinstance(value, Mapping):
        return set().union(*(cards_in(k) | cards_in(v) for k, v in value.items())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(cards_in(v) for v in value)) if value else set()
    return set()


def visible(engine: LocoPoker, viewer: int | None) -> set[str]:
    """The cards ``viewer`` may see now: board, shown hands, own hole cards."""
    data = engine.to_data()["hand"]
    if data is None:
        return set()
    allowed = set(data["board"]) | {c for cards in data["shown"].values() for c in cards}
    if viewer is not None:
        allowed |= set(data["hole"].get(str(viewer), []))
    return allowed


def check_conservation(engine: LocoPoker) -> None:
    hand = engine.to_data()["hand"]
    if hand is None:
        return
    cards = hand["deck"] + hand["board"] + hand["burns"] + [c for h in hand["hole"].values() for c in h]
    assert sorted(cards) == sorted(standard_deck())


def roundtrip(engine: LocoPoker) -> LocoPoker:
    data = engine.to_data()
    packed = msgpack.unpackb(msgpack.packb(data))
    assert packed == data
    restored = LocoPoker.from_data(packed)
    assert restored.to_data() == data
    return restored


match_setup = st.fixed_dictionaries({
    "seed": st.binary(min_size=1, max_size=8),
    "players": st.integers(2, 8),
    "points_to_win": st.integers(1, 3),
    "multi_call": st.sampled_from(["best_hand", "duels"]),
})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(setup=match_setup, data=st.data())
def test_property_random_matches_keep_every_invariant(setup: dict[str, Any], data: st.DataObject) -> None:
    """Random legal play: cards conserved, every listed action accepted,
    everything else rejected with the state unchanged, exact round trips
    through msgpack at every step (the restored engine continues identically),
    and no view or event shows a card its viewer may not see."""
    seats = list(range(1, setup["players"] + 1))
    options = {"points_to_win": setup["points_to_win"], "multi_call": setup["multi_call"]}
    engine = LocoPoker.new(seats, options, FairRandom(setup["seed"]))
    events = engine.start()
    viewers: list[int | None] = [None, *seats]
    for _step in range(400):
        check_conservation(engine)
        for viewer in viewers:
            allowed = visible(engine, viewer)
            assert cards_in(engine.view(viewer)) <= allowed
            for event in events:
                assert cards_in(event.view(viewer)) <= allowed
        twin = roundtrip(engine)
        if engine.finished:
            break
        seat = engine.to_act
        if seat is None:
            assert engine.pending in ("street", "showdown", "hand") and engine.legal_actions() == []
            events = engine.advance()
            assert [e.to_data() for e in twin.advance()] == [e.to_data() for e in events]
            continue
        legal = [a.to_data() for a in engine.legal_actions()]
        for action in legal:  # every listed action is accepted
            LocoPoker.from_data(engine.to_data()).apply(seat, action)
        probe_seat = data.draw(st.sampled_from([seat, *(s for s in seats if s != seat), 0]), label="probe seat")
        probe = data.draw(st.sampled_from(PROBES), label="probe")
        if not (probe_seat == seat and probe in legal):
            before = engine.to_data()
            with pytest.raises(IllegalAction):
                engine.apply(probe_seat, probe)
            assert engine.to_data() == before
        action = data.draw(st.sampled_from(legal), label="action")
        events = engine.apply(seat, action)
        assert [e.to_data() for e in twin.apply(seat, action)] == [e.to_data() for e in events]
    result = engine.result()
    if engine.finished:
        assert result is not None and len(result["winners"]) == 1
        ranked = [s for group in result["ranking"] for s in group]
        assert sorted(ranked) == seats


@settings(max_examples=15, deadline=None)
@given(seed=st.binary(min_size=1, max_size=8), players=st.integers(2, 8))
def test_property_bots_finish_matches_and_stay_legal(seed: bytes, players: int) -> None:
    """LocoBot and random bots only ever choose legal actions (play_match
    raises IllegalAction otherwise) and every match ends with one winner."""
    seats = list(range(1, players + 1))
    root = FairRandom(seed)
    bots = {s: (make_bot("loco_poker", None, root.spawn(f"bot{s}")) if s % 2 else RandomBot(root.spawn(f"r{s}")))
            for s in seats}
    result = play_match(LocoPoker.new(seats, None, root.spawn("match")), bots).result
    assert len(result["winners"]) == 1
    assert sorted(s for g in result["ranking"] for s in g) == seats


def test_from_data_rejects_malformed_state() -> None:
    engine = game([1, 2], standard_deck(), dealer=2)
    data = engine.to_data()
    for broken in ({**data, "game": "avalanche"}, {**data, "phase": "dancing"}, {k: v for k, v in data.items() if k != "hand"},
                   {**data, "hand": {**data["hand"], "queue": []}}):
        with pytest.raises(ValueError):
            LocoPoker.from_data(broken)


# -- the bot ------------------------------------------------------------------------


def bot_choice(engine: LocoPoker, seat: int) -> str:
    bot = LocoBot(FairRandom(b"bot-test"))
    return bot.choose(engine.view(seat), [a.to_data() for a in engine.legal_actions()])["type"]


def test_bot_goes_all_in_with_aces_and_checks_trash_heads_up() -> None:
    engine = game([1, 2], stack([2, 1], {2: "AhAd"}), dealer=1)
    assert bot_choice(engine, 2) == "all_in"
    engine = game([1, 2], stack([2, 1], {2: "7h2d"}), dealer=1)
    assert bot_choice(engine, 2) == "check"


def test_bot_calls_with_the_nuts_and_folds_trash_to_an_all_in() -> None:
    board = "QhJhTh2c3d"
    engine = game([1, 2, 3], stack([1, 2, 3], {2: "AhKh", 3: "7c2d"}, board), dealer=3)
    for _ in range(3):
        check_round(engine)
        engine.advance()
    play(engine, (1, "all_in"))
    assert bot_choice(engine, 2) == "call"
    play(engine, (2, "fold"))
    assert bot_choice(engine, 3) == "fold"


def test_bot_calls_anything_when_folding_would_hand_over_the_match() -> None:
    """Heads-up, the opponent one point from winning: folding loses the match for sure."""
    engine = game([1, 2], standard_deck(), stack([2, 1], {2: "7c2d"}), dealer=2, points_to_win=2)
    play(engine, (1, "all_in"), (2, "fold"), "advance")  # seat 1 has 1 point; dealer 1, order 2, 1
    play(engine, (2, "check"), (1, "all_in"))
    assert bot_choice(engine, 2) == "call"


@pytest.mark.parametrize(("players", "matches", "floor"), [(4, 100, 0.35), (6, 100, 0.28)])
def test_bot_beats_random_clearly(players: int, matches: int, floor: float) -> None:
    """Fair share is 1/players (0.25 and 0.17); measured about 0.45 and 0.40."""
    assert win_rate("loco_poker", players, matches, seed="test").rate >= floor


@settings(max_examples=10, deadline=None)
@given(seed=st.binary(min_size=1, max_size=8), players=st.integers(2, 8))
def test_property_audit_counts_all_52_cards_at_every_step(seed: bytes, players: int) -> None:
    """LO-1: Hold'em deal with burns; every card is in the deck, a hand, the board or the burns."""
    root = FairRandom(seed)
    seen: list[dict] = []
    play_match(LocoPoker.new(list(range(1, players + 1)), None, root.spawn("match")),
               {s: RandomBot(root.spawn(f"r{s}")) for s in range(1, players + 1)}, observe=lambda e: seen.append(e.audit()))
    assert seen and all(a["counted"] == a["expected"] == 52 for a in seen)


def test_audit_detects_a_lost_or_duplicated_card() -> None:
    engine = game([1, 2, 3], standard_deck(), dealer=3)
    data = engine.to_data()
    lost = {**data, "hand": {**data["hand"], "deck": data["hand"]["deck"][1:]}}
    assert LocoPoker.from_data(lost).audit()["counted"] == 51
    doubled = {**data, "hand": {**data["hand"], "deck": [data["hand"]["deck"][1]] + data["hand"]["deck"][1:]}}
    assert LocoPoker.from_data(doubled).audit()["counted"] < 52
