"""Alamo engine (seed 000, RULES AL-1..AL-8, G-3, G-6, G-7): rule cases and properties."""

from __future__ import annotations

import json
from collections.abc import MutableSequence, Sequence
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardhall.engine.base import Event, IllegalAction
from cardhall.engine.bots.random_bot import RandomBot
from cardhall.engine.cards import CardError, standard_deck, validate
from cardhall.engine.games.alamo import Alamo
from cardhall.engine.rng import FairRandom
from cardhall.engine.seats import clockwise


# -- a scripted random source ---------------------------------------------------
class Scripted:
    """Deals a chosen order (first shuffle), leaves later shuffles (winnings) as they
    are, and answers ``randbelow`` from a script (then 0: the first face-down card)."""

    def __init__(self, deal: Sequence[str] | None = None, draws: Sequence[int] = ()) -> None:
        self.deal = list(deal) if deal is not None else None
        self.draws = list(draws)
        self.shuffles = 0

    def shuffle(self, items: MutableSequence[Any]) -> None:
        if self.shuffles == 0 and self.deal is not None:
            assert sorted(self.deal) == sorted(items)
            items[:] = self.deal
        self.shuffles += 1

    def randbelow(self, n: int) -> int:
        value = self.draws.pop(0) if self.draws else 0
        assert 0 <= value < n
        return value

    def to_data(self) -> dict[str, Any]:
        return {"kind": "fair", "key": "00" * 32, "position": 0}


def deal_order(seats: list[int], dealer: int, tops: dict[int, list[str]], jokers: bool = False) -> list[str]:
    """A deck order that gives each seat a stack starting (top first) with ``tops[seat]``."""
    deck = standard_deck(2 if jokers else 0)
    used = {c for cards in tops.values() for c in cards}
    rest = [c for c in deck if c not in used]
    order = clockwise(seats, after=dealer)
    size = len(deck) // len(order)
    stacks = []
    for seat in order:
        stack = list(tops.get(seat, []))
        while len(stack) < size:
            stack.append(rest.pop(0))
        stacks.append(stack)
    out = [""] * len(deck)
    for k, stack in enumerate(stacks):
        for j, card in enumerate(stack):
            out[k + len(order) * j] = card
    return out


def new_game(seats, dealer, tops, draws=(), **options) -> tuple[Alamo, list[Event]]:
    jokers = options.get("jokers", len(seats) == 3)
    rng = Scripted(deal_order(seats, dealer, tops, bool(jokers)), draws)
    game = Alamo.new(seats, {"dealer": dealer, **options}, rng)
    return game, game.start()


def between_hands(stacks: dict[int, list[str]], dealer: int, hand: int = 4, draws=(), **options) -> Alamo:
    """A match paused before hand ``hand + 1`` with these stacks (top first)."""
    game = Alamo.new(sorted(stacks), options, Scripted(draws=draws))
    data = game.to_data()
    data.update(
        started=True,
        hand_number=hand,
        dealer=dealer,
        stacks={str(s): list(c) for s, c in stacks.items()},
        pending="hand",
    )
    restored = Alamo.from_data(data)
    restored.rng = game.rng
    return restored


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events]


def of(events: list[Event], kind: str) -> list[dict[str, Any]]:
    return [e.data for e in events if e.type == kind]


def check_audit(game: Alamo) -> None:
    audit = game.audit()
    assert audit["counted"] == audit["expected"], audit


# -- AL-1: deck, stacks, first dealer, rotation -----------------------------------
@pytest.mark.parametrize(
    "name,seats,options,deck,each",
    [
        ("two_players_52_cards", [1, 2], {}, 52, 26),
        ("two_players_jokers_option", [1, 2], {"jokers": True}, 54, 27),
        ("three_players_54_cards", [1, 2, 3], {}, 54, 18),
        ("three_players_any_seats", [2, 4, 6], {}, 54, 18),
    ],
)
def test_AL1_stacks(name, seats, options, deck, each):
    game = Alamo.new(seats, options, FairRandom(name.encode()))
    game.start()
    assert game.audit()["expected"] == deck
    start = game.hand_record  # no completed hand yet
    assert start() is None
    # each player's stack was `each` before the ante and the pull
    for seat in seats:
        assert len(game.piles[seat]) + game.contributed[seat] + 2 == each
    check_audit(game)


@pytest.mark.parametrize(
    "name,seats,options",
    [
        ("three_players_without_jokers", [1, 2, 3], {"jokers": False}),
        ("four_players", [1, 2, 3, 4], {}),
        ("one_player", [1], {}),
        ("bad_dealer", [1, 2], {"dealer": 3}),
        ("bad_max_hands", [1, 2], {"max_hands": 0}),
        ("unknown_option", [1, 2], {"blinds": 3}),
    ],
)
def test_AL1_bad_options_raise_value_error(name, seats, options):
    with pytest.raises(ValueError):
        Alamo.new(seats, options, FairRandom(b"x"))


def test_AL1_first_dealer_drawn_at_random_through_the_rng():
    game = Alamo.new([1, 2, 3], None, Scripted(draws=[2]))
    events = game.start()
    assert events[0].data["dealer"] == 3 and game.dealer == 3
    dealers = set()
    for i in range(20):
        g = Alamo.new([1, 2, 3], None, FairRandom(f"dealer{i}".encode()))
        g.start()
        dealers.add(g.dealer)
    assert dealers == {1, 2, 3}


def test_G7_rematch_dealer_option_consumes_no_draw():
    game = Alamo.new([1, 2], {"dealer": 2}, Scripted(draws=[]))
    game.start()
    assert game.dealer == 2 and game.players == [1, 2]


def test_AL1_deal_gives_kth_player_left_of_dealer_every_nth_card():
    deck = standard_deck()
    game = Alamo.new([1, 2], {"dealer": 1}, Scripted(deck))
    game.start()
    # seat 2 is left of the dealer: deck[0::2]; seat 1 (the dealer): deck[1::2]
    assert game.hand_start["stacks"]["2"] == deck[0::2]
    assert game.hand_start["stacks"]["1"] == deck[1::2]


def test_AL1_dealer_passes_clockwise_among_players_still_in():
    stacks = {1: standard_deck(2)[:2], 2: standard_deck(2)[2:28], 3: standard_deck(2)[28:]}
    game = between_hands(stacks, dealer=3)
    game.advance()
    # seat 1 cannot ante and pull (AL-7), so the chip passes from 3 to 2
    assert game.dealer == 2 and game.players == [3, 2]


# -- AL-4: stacks as chips -----------------------------------------------------------
def test_AL4_ante_and_hole_cards_come_off_the_top():
    s2 = ["2c", "3c", "4c", "5c", "6c", "7c"]
    s1 = ["2d", "3d", "4d", "5d", "6d", "7d"]
    game, events = new_game([1, 2], 1, {2: s2, 1: s1})
    assert game.face_down == ["2c", "3c", "2d", "3d"]  # antes clockwise from the dealer's left
    assert game.hole == {2: ["4c", "5c"], 1: ["4d", "5d"]}
    assert game.piles[2][:2] == ["6c", "7c"] and len(game.piles[2]) == 22
    hole = of(events, "hole_cards")[0]
    assert "cards" not in hole
    ev = next(e for e in events if e.type == "hole_cards")
    assert ev.view(2)["cards"] == ["4c", "5c"] and ev.view(1)["cards"] == ["4d", "5d"]
    assert "cards" not in ev.view(None)


def test_AL4_bet_cards_off_the_top_uncalled_return_to_the_top_in_order():
    s2 = ["2c", "3c", "4c", "5c", "6c", "7c", "8c", "9c", "Tc", "Jc"]
    game, _ = new_game([1, 2], 1, {2: s2})
    before = list(game.piles[2])
    game.advance()  # flop
    assert game.to_act == 2  # left of the dealer (AL-5)
    events = game.apply(2, {"type": "bet", "amount": 5})
    assert game.piles[2] == before[5:]
    assert game.face_down[-5:] == ["6c", "7c", "8c", "9c", "Tc"]
    events = game.apply(1, {"type": "fold"})
    assert of(events, "uncalled") == [{"type": "uncalled", "seat": 2, "cards": 5, "stack": 22}]
    # the five bet cards are back on top in order, the winnings go under the stack
    assert game.piles[2][:22] == before
    assert sorted(game.piles[2][22:]) == sorted(game.record["winnings"]["2"])
    assert len(game.piles[2]) == 30 and len(game.piles[1]) == 22
    check_audit(game)


def test_AL4_partial_uncalled_bet_returns_the_last_cards_bet():
    deck = standard_deck()
    stacks = {1: deck[:7], 2: deck[7:]}  # seat 1: ante 2, hole 2, 3 behind
    game = between_hands(stacks, dealer=2)
    game.advance()  # hand 5: dealer 1, seat 2 acts first
    assert game.dealer == 1 and game.to_act is None
    game.advance()  # flop
    two = list(game.piles[2])
    game.apply(2, {"type": "bet", "amount": 5})
    events = game.apply(1, {"type": "call"})
    assert of(events, "uncalled")[0]["cards"] == 2
    assert game.piles[2][:2] == two[3:5]  # the 4th and 5th cards bet, in order
    assert game.contributed == {2: 5, 1: 5}
    check_audit(game)


def test_AL4_folded_hole_cards_are_set_aside_never_turned_and_go_to_the_winner():
    tops = {1: ["2c", "Ah", "Ad", "9h", "9d"], 2: ["3c", "Kh", "Kd", "Jh", "Jd"], 3: ["4c", "7s", "2s"]}
    game, _ = new_game([1, 2, 3], 3, tops)
    game.advance()  # flop: all three antes
    assert game.board == ["2c", "3c", "4c"] and game.face_down == []
    game.apply(1, {"type": "bet", "amount": 2})
    game.apply(2, {"type": "call"})
    events = game.apply(3, {"type": "fold"})
    assert 3 in game.folded and "7s" not in game.face_down
    while not game.pending == "hand":
        events += game.advance() if game.to_act is None else game.apply(game.to_act, {"type": "check"})
    for event in events:
        for viewer in (None, 1, 2):
            assert "7s" not in json.dumps(event.view(viewer))
    record = game.record
    assert record["folded"] == [3]
    assert record["board"] == ["2c", "3c", "4c", "9h", "9d"] and list(record["winnings"]) == ["1"]
    assert {"7s", "2s", "Kh", "Kd", "Ah", "Ad"} <= set(record["winnings"]["1"])
    assert "7s" not in record["board"]
    check_audit(game)


def test_AL4_side_pots_counted_in_cards():
    # seat 1 has 6 cards: ante 1, hole 2, 3 behind; seats 2 and 3 cover
    one = ["2c", "Ah", "As", "9s", "9d", "Jc"]
    rest = [c for c in standard_deck(2) if c not in one + ["3c", "Kh", "Ks", "4c", "Qh", "Qs"]]
    stacks = {1: one, 2: ["3c", "Kh", "Ks"] + rest[:21], 3: ["4c", "Qh", "Qs"] + rest[21:]}
    assert list(map(len, stacks.values())) == [6, 24, 24]
    game = between_hands(stacks, dealer=2)
    game.advance()
    assert game.dealer == 3 and game.players == [1, 2, 3]
    game.advance()  # flop: the three antes
    assert game.board == ["2c", "3c", "4c"]
    game.apply(1, {"type": "all_in"})  # bets 3: 9s 9d Jc
    game.apply(2, {"type": "raise", "amount": 10})
    game.apply(3, {"type": "call"})
    while game.pending != "hand":
        game.advance() if game.to_act is None else game.apply(game.to_act, {"type": "check"})
    record = game.record
    assert record["board"] == ["2c", "3c", "4c", "9s", "9d"]
    # main pot: 3 antes + 3 x 3 = 12 (plus the 6 hole cards); side pot: 2 x 7 = 14
    assert [(p["cards"], p["eligible"], p["winners"]) for p in record["pots"]] == [
        (12, [1, 2, 3], [1]),
        (14, [2, 3], [2]),
    ]
    assert record["pots"][0]["shares"] == {"1": 18} and record["pots"][1]["shares"] == {"2": 14}
    assert {s: len(c) for s, c in game.piles.items()} == {1: 18, 2: 25, 3: 11}
    check_audit(game)


# -- AL-3: the board comes from the face-down pot cards ---------------------------------
def test_AL3_board_cards_are_uniform_picks_of_face_down_pot_cards_and_name_the_dealer():
    game, _ = new_game([1, 2], 1, {2: ["2c", "3c"], 1: ["2d", "3d"]}, draws=[3, 0, 1])
    events = game.advance()
    assert game.board == ["3d", "2c", "2d"]  # picks 3 of [2c 3c 2d 3d], then 0 of [2c 3c 2d], 1 of [3c 2d]
    board = of(events, "board")[0]
    assert board["dealer"] == 1 and board["street"] == "flop" and board["face_down"] == 1


# -- AL-5: betting in cards ---------------------------------------------------------------
def test_AL5_no_preflop_betting_by_default():
    game, events = new_game([1, 2], 1, {})
    assert game.pending == "street" and game.to_act is None and game.legal_actions() == []
    with pytest.raises(IllegalAction) as info:
        game.apply(2, {"type": "check"})
    assert info.value.code == "not_your_turn"


def test_AL5_preflop_betting_option():
    game, events = new_game([1, 2, 3], 2, {}, preflop_betting=True)
    assert game.to_act == 3 and game.board == []
    assert [a.to_data() for a in game.legal_actions()] == [
        {"type": "fold"},  # AL-5: on any turn
        {"type": "check"},
        {"type": "bet", "min": 1, "max": 15},
        {"type": "all_in", "min": 15, "max": 15, "as": "bet"},
    ]


@pytest.mark.parametrize(
    "name,actions,error,rule",
    [
        ("AL5_min_bet_is_one_card", [("bet", 0)], "amount_too_small", "AL-5"),
        ("AL5_bet_above_the_stack", [("bet", 23)], "amount_too_large", "AL-5"),
        ("NL2_raise_at_least_the_last_bet", [("bet", 3), ("raise", 5)], "amount_too_small", "AL-5"),
        ("cannot_check_facing_a_bet", [("bet", 3), ("check", None)], "cannot_check", "AL-5"),
        ("bet_must_be_a_whole_number", [("bet", 2.5)], "bad_amount", "AL-5"),
        ("call_amount_must_be_the_cards_added", [("bet", 3), ("call", 2)], "bad_amount", "AL-5"),
        ("call_amount_must_be_a_whole_number", [("bet", 3), ("call", "3")], "bad_amount", "AL-5"),
        ("all_in_amount_must_be_the_total", [("all_in", 5)], "bad_amount", "AL-5"),
        ("fold_takes_no_amount", [("fold", 1)], "bad_amount", "AL-5"),
        ("check_takes_no_amount", [("check", 0)], "bad_amount", "AL-5"),
        ("unknown_action", [("snowfall", None)], "unknown_action", "AL-5"),
    ],
)
def test_AL5_illegal_amounts(name, actions, error, rule):
    game, _ = new_game([1, 2], 1, {})
    game.advance()
    *ok, (kind, amount) = actions
    for k, a in ok:
        game.apply(game.to_act, {"type": k, "amount": a} if a is not None else {"type": k})
    before = game.to_data()
    action = {"type": kind} if amount is None else {"type": kind, "amount": amount}
    with pytest.raises(IllegalAction) as info:
        game.apply(game.to_act, action)
    assert info.value.code == error and info.value.rule == rule
    assert game.to_data() == before


def test_AL5_raise_legal_range_is_nl2():
    game, _ = new_game([1, 2], 1, {})
    game.advance()
    game.apply(2, {"type": "bet", "amount": 3})
    legal = {a.type: a.to_data() for a in game.legal_actions()}
    assert legal["call"] == {"type": "call", "min": 3, "max": 3}
    assert legal["raise"] == {"type": "raise", "min": 6, "max": 22}


def test_AL5_first_to_act_is_left_of_the_dealer():
    game, _ = new_game([1, 2, 3], 1, {})
    game.advance()
    assert game.to_act == 2


def test_G3_timeout_checks_if_free_else_folds():
    game, _ = new_game([1, 2], 1, {})
    game.advance()
    assert game.timeout_action(2) == {"type": "check"}
    game.apply(2, {"type": "bet", "amount": 1})
    assert game.timeout_action(1) == {"type": "fold"}


# -- AL-6: showdown with fewer than five board cards ---------------------------------------
def test_AL6_two_players_no_bets_showdown_on_four_card_board():
    # antes: seat 2 (left of dealer 1) Ah Kh, seat 1 7c 2d; hole: seat 2 Qh Jd, seat 1 7d 7s
    game, _ = new_game([1, 2], 1, {2: ["Ah", "Kh", "Qh", "Jd"], 1: ["7c", "2d", "7d", "7s"]})
    assert game.view(None)["face_down"] == 4 and game.view(None)["pot"] == 4
    game.advance()
    assert game.board == ["Ah", "Kh", "7c"] and len(game.face_down) == 1
    game.apply(2, {"type": "check"})
    game.apply(1, {"type": "check"})
    assert game.pending == "street"
    game.advance()
    assert game.board == ["Ah", "Kh", "7c", "2d"] and game.face_down == []
    game.apply(2, {"type": "check"})
    game.apply(1, {"type": "check"})
    assert game.pending == "showdown"  # no face-down card for the river
    events = game.advance()
    shows = {e["seat"]: e["hand"] for e in of(events, "show")}
    assert shows == {2: "High Card", 1: "Trips"}  # best five of six
    assert game.record["board"] == ["Ah", "Kh", "7c", "2d"]
    assert of(events, "hand_end")[0]["winnings"] == {"1": 8}
    assert len(game.piles[1]) == 30 and len(game.piles[2]) == 22
    check_audit(game)


def test_AL6_two_players_river_only_from_cards_bet_on_flop_or_turn():
    game, _ = new_game([1, 2], 1, {2: ["Ah", "Kh", "Qh", "Jd", "9c"], 1: ["7c", "2d", "7d", "7s", "9d"]})
    game.advance()
    game.apply(2, {"type": "bet", "amount": 1})
    game.apply(1, {"type": "call"})
    assert sorted(game.face_down) == sorted(["2d", "9c", "9d"])
    game.advance()  # turn: the first face-down card, 2d (an ante)
    assert game.board[-1] == "2d"
    game.apply(2, {"type": "check"})
    game.apply(1, {"type": "check"})
    game.advance()  # river: only bet cards remain
    assert game.board[-1] in {"9c", "9d"} and len(game.board) == 5
    assert game.pending is None and game.to_act == 2


def test_AL6_three_players_no_bets_showdown_on_the_flop():
    game, _ = new_game([1, 2, 3], 3, {1: ["Ac", "As", "Ad"], 2: ["Kc", "Ks", "Kd"], 3: ["Qc", "2h", "3h"]})
    game.advance()
    assert game.face_down == [] and len(game.board) == 3
    for seat in (1, 2, 3):
        game.apply(seat, {"type": "check"})
    assert game.pending == "showdown"
    events = game.advance()
    assert of(events, "hand_end")[0]["winnings"] == {"1": 9}  # 3 antes (the board) + 6 hole cards


def test_AL6_all_in_runs_out_the_streets_without_betting():
    game, _ = new_game([1, 2], 1, {})
    game.advance()
    game.apply(2, {"type": "all_in"})
    events = game.apply(1, {"type": "call"})
    assert sorted(e["seat"] for e in of(events, "show")) == [1, 2]  # hands turned up: no more betting
    assert game.pending == "street" and game.to_act is None
    game.advance()
    assert game.pending == "street" and game.to_act is None
    game.advance()
    assert len(game.board) == 5 and game.pending == "showdown"
    game.advance()
    assert game.finished
    result = game.result()
    assert result["reason"] == "all_cards"
    assert len(game.piles[result["winners"][0]]) == 52


# -- AL-7: eliminations and the ante ---------------------------------------------------------
def test_AL7_three_players_short_player_eliminated_before_ante_then_ante_is_two():
    deck = standard_deck(2)
    stacks = {1: deck[:2], 2: deck[2:28], 3: deck[28:]}
    game = between_hands(stacks, dealer=3)
    events = game.advance()
    assert types(events)[:4] == ["eliminated", "hand_start", "antes", "hole_cards"]
    assert of(events, "eliminated")[0] == {"type": "eliminated", "seat": 1, "hand": 5, "cards": 2}
    start = of(events, "hand_start")[0]
    assert start["ante"] == 2 and start["players"] == [3, 2]
    assert deck[0] in game.face_down and deck[1] in game.face_down  # into this hand's pot
    assert len(game.face_down) == 2 + 2 * 2 and game.view(None)["pot"] == 6
    assert game.piles[1] == [] and len(game.piles[2]) == len(game.piles[3]) == 22
    assert game.contributed == {3: 2, 2: 2} and game.dead == 2
    check_audit(game)


def test_AL7_elimination_check_runs_again_with_the_new_ante():
    deck = standard_deck(2)
    stacks = {1: deck[:3], 2: deck[3:4], 3: deck[4:]}  # seat 2 short at ante 1; then seat 1 short at ante 2
    game = between_hands(stacks, dealer=1)
    events = game.advance()
    assert [e["seat"] for e in of(events, "eliminated")] == [2, 1]
    assert game.finished and game.result()["ranking"] == [[3], [1], [2]]
    assert len(game.piles[3]) == 54
    check_audit(game)


def test_AL7_two_players_the_player_who_cannot_ante_loses():
    deck = standard_deck()
    game = between_hands({1: deck[:3], 2: deck[3:]}, dealer=1)
    game.advance()
    assert game.finished
    assert game.result()["winners"] == [2] and game.result()["ranking"] == [[2], [1]]
    assert len(game.piles[2]) == 52


def test_AL7_three_player_ante_is_one_and_exact_stack_is_not_eliminated():
    deck = standard_deck(2)
    game = between_hands({1: deck[:3], 2: deck[3:30], 3: deck[30:]}, dealer=3)
    events = game.advance()
    assert of(events, "eliminated") == [] and game.ante == 1
    assert game.piles[1] == []  # all in from the ante and the pull


# -- AL-8: ties, match end, max_hands ---------------------------------------------------------
def test_AL8_tie_splits_odd_card_to_first_winner_left_of_dealer():
    game, _ = new_game([1, 2, 3], 3, {1: ["Ac", "Js", "Tc"], 2: ["Kd", "Jd", "Th"], 3: ["Qh", "2c", "3d"]})
    game.advance()
    for seat in (1, 2, 3):
        game.apply(seat, {"type": "check"})
    events = game.advance()
    pots = of(events, "award")[0]["pots"]
    assert pots[0]["winners"] == [1, 2] and pots[0]["shares"] == {"1": 5, "2": 4}
    assert of(events, "hand_end")[0]["winnings"] == {"1": 5, "2": 4}
    check_audit(game)


def test_AL8_tie_two_players_even_split():
    game, _ = new_game([1, 2], 1, {2: ["Kc", "Qd", "As", "2c"], 1: ["Jh", "Ts", "Ad", "3d"]})
    game.advance()
    game.apply(2, {"type": "check"})
    game.apply(1, {"type": "check"})
    game.advance()
    game.apply(2, {"type": "check"})
    game.apply(1, {"type": "check"})
    events = game.advance()
    assert of(events, "hand_end")[0]["winnings"] == {"2": 4, "1": 4}
    assert len(game.piles[1]) == len(game.piles[2]) == 26


def test_AL8_max_hands_ends_the_match_for_the_largest_stack():
    game, _ = new_game([1, 2], 1, {2: ["Ah", "Kh", "Qh", "Jd"], 1: ["7c", "2d", "7d", "7s"]}, max_hands=1)
    game.advance()
    for _ in range(2):
        game.apply(2, {"type": "check"})
        game.apply(1, {"type": "check"})
        game.advance()
    assert game.finished
    result = game.result()
    assert result["reason"] == "max_hands" and result["winners"] == [1] and result["ranking"] == [[1], [2]]
    with pytest.raises(IllegalAction):
        game.advance()


def test_AL2_joker_wins_as_five_of_a_kind_at_showdown():
    game, _ = new_game([1, 2, 3], 3, {1: ["Ac", "Ad", "Xr"], 2: ["As", "Kc", "Kd"], 3: ["Ah", "Qh", "Jh"]})
    game.advance()
    for seat in (1, 2, 3):
        game.apply(seat, {"type": "check"})
    events = game.advance()
    shows = {e["seat"]: e["hand"] for e in of(events, "show")}
    assert shows[1] == "Five of a Kind"
    assert of(events, "hand_end")[0]["winnings"] == {"1": 9}


# -- records, views ------------------------------------------------------------------------
def test_hand_record_is_json_and_holds_the_hidden_cards():
    game, _ = new_game([1, 2], 1, {})
    game.advance()
    game.apply(2, {"type": "bet", "amount": 1})
    game.apply(1, {"type": "fold"})
    record = json.loads(json.dumps(game.hand_record()))
    assert record["game"] == "alamo" and record["hand"] == 1 and record["reason"] == "fold"
    assert set(record["hole_cards"]) == {"1", "2"} and record["pot_face_down"] == game.record["pot_face_down"]
    assert len(record["pot_face_down"]) == 1  # the turn's card; the uncalled bet went back
    assert len(record["starting_stacks"]["1"]) == 26


def test_view_shows_counts_never_stack_or_face_down_cards():
    game, _ = new_game([1, 2], 1, {})
    game.advance()
    for viewer in (None, 1, 2):
        view = game.view(viewer)
        cards = cards_in(view)
        own = set(game.hole.get(viewer, [])) if viewer else set()
        assert cards <= set(game.board) | own
        assert view["face_down"] == 1 and view["pot"] == 4 and view["stacks"] == {"1": 22, "2": 22}
    assert game.view(2)["legal_actions"][:2] == [{"type": "fold"}, {"type": "check"}]  # AL-5
    assert "legal_actions" not in game.view(1)


# -- properties over random matches -----------------------------------------------------------
def cards_in(data: Any) -> set[str]:
    """Every card string anywhere in ``data``."""
    found: set[str] = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
            stack.extend(k for k in item if isinstance(k, str))
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, str) and len(item) == 2:
            try:
                found.add(validate(item))
            except CardError:
                pass
    return found


def visible(game: Alamo, viewer: int | None) -> set[str]:
    """Cards ``viewer`` may see now: board, shown hands, own hole cards, and the last
    completed hand's board, shown hands and own hole cards."""
    out = set(game.board)
    out |= {c for s in game.shown for c in game.hole.get(s, [])}
    if viewer is not None:
        out |= set(game.hole.get(viewer, []))
    record = game.hand_record()
    if record:
        out |= set(record["board"])
        out |= {c for s in record["shown"] for c in record["hole_cards"][str(s)]}
        if viewer is not None and str(viewer) in record["hole_cards"]:
            out |= set(record["hole_cards"][str(viewer)])
    return out


def concrete(legal: dict[str, Any]) -> list[dict[str, Any]]:
    kind = legal["type"]
    if kind in ("bet", "raise"):
        amounts = sorted({legal["min"], legal["max"], (legal["min"] + legal["max"]) // 2})
        return [{"type": kind, "amount": a} for a in amounts]
    return [{"type": kind}]


def illegal_candidates(game: Alamo) -> list[tuple[int, dict[str, Any]]]:
    seat = game.to_act
    assert seat is not None
    legal = {a.type: a for a in game.legal_actions()}
    others = [s for s in game.seats if s != seat]
    out: list[tuple[int, dict[str, Any]]] = [(others[0], {"type": "check"}), (seat, {"type": "dance"}), (seat, {})]
    for kind in ("bet", "raise"):
        if kind in legal:
            out.append((seat, {"type": kind, "amount": legal[kind].min - 1}))
            out.append((seat, {"type": kind, "amount": legal[kind].max + 1}))
            out.append((seat, {"type": kind, "amount": "3"}))
        else:
            out.append((seat, {"type": kind, "amount": 1}))
    if "check" not in legal:
        out.append((seat, {"type": "check"}))
    if "call" not in legal:
        out.append((seat, {"type": "call"}))
    if "fold" not in legal:
        out.append((seat, {"type": "fold"}))
    return out


def play_checked(seed: int, players: int, options: dict[str, Any], max_steps: int = 400) -> Alamo:
    seats = list(range(1, players + 1))
    game = Alamo.new(seats, options, FairRandom(f"alamo-prop-{seed}".encode()))
    bot = RandomBot(FairRandom(f"alamo-bot-{seed}".encode()))
    events = game.start()
    for _ in range(max_steps):
        check_step(game, events, seats)
        if game.finished:
            break
        seat = game.to_act
        if seat is None:
            assert game.pending in ("street", "showdown", "hand")
            with pytest.raises(IllegalAction):
                game.apply(1, {"type": "check"})
            events = game.advance()
            continue
        assert game.pending is None
        data = game.to_data()
        # every listed legal action is accepted
        for legal in game.legal_actions():
            for action in concrete(legal.to_data()):
                Alamo.from_data(data).apply(seat, action)
        # no illegal move is accepted, and a rejected one leaves the state unchanged
        for who, action in illegal_candidates(game):
            with pytest.raises(IllegalAction):
                game.apply(who, action)
            assert game.to_data() == data
        action = bot.choose(game.view(seat), [a.to_data() for a in game.legal_actions()])
        events = game.apply(seat, action)
    return game


def check_step(game: Alamo, events: list[Event], seats: list[int]) -> None:
    check_audit(game)
    data = game.to_data()
    packed = msgpack.unpackb(msgpack.packb(data))
    assert packed == data
    assert Alamo.from_data(packed).to_data() == data
    for viewer in [None, *seats]:
        allowed = visible(game, viewer)
        view = game.view(viewer)
        assert cards_in(view) <= allowed, (viewer, cards_in(view) - allowed)
        assert msgpack.unpackb(msgpack.packb(view)) == view
        for event in events:
            seen = cards_in(event.view(viewer))
            assert seen <= allowed, (viewer, event.data["type"], seen - allowed)
    if game.to_act is None:
        assert game.legal_actions() == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), players=st.sampled_from([2, 3]), preflop=st.booleans())
def test_property_random_matches_conserve_cards_reject_illegal_round_trip_and_leak_nothing(seed, players, preflop):
    game = play_checked(seed, players, {"preflop_betting": preflop})
    if game.finished:
        result = game.result()
        assert result["reason"] in ("all_cards", "last_player")
        (winner,) = result["winners"]
        assert len(game.piles[winner]) == game.deck_size


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), jokers=st.booleans())
def test_property_two_players_with_and_without_jokers(seed, jokers):
    play_checked(seed, 2, {"jokers": jokers, "max_hands": 6})


def test_whole_matches_end_with_one_player_holding_every_card():
    for seed in range(30):
        for players in (2, 3):
            game = Alamo.new(list(range(1, players + 1)), None, FairRandom(f"whole-{seed}".encode()))
            bot = RandomBot(FairRandom(f"whole-bot-{seed}".encode()))
            game.start()
            while not game.finished:
                seat = game.to_act
                if seat is None:
                    game.advance()
                else:
                    game.apply(seat, bot.choose(game.view(seat), [a.to_data() for a in game.legal_actions()]))
            result = game.result()
            assert len(game.piles[result["winners"][0]]) == game.deck_size
            assert sorted(s for group in result["ranking"] for s in group) == list(range(1, players + 1))
