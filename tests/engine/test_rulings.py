"""The protocol-conformance rulings in the engines (RULES AL-5, LO-7, AV-1; SPEC "Games").

Each case is one point where the SPEC, the schemas or a ruling and an engine
disagreed: Alamo's actions take the Hold'em forms (a ``call`` may state the
cards it adds, AL-5) and a fold on any turn (AL-5: "At any time a player may
fold"); Loco Poker's "Loco!" with ``multi_call`` = ``duels`` and ties for the
best hand after the turn (LO-7); Avalanche's three decks for any number of
players (AV-1), the order of a sorted hand and what ``rank`` + ``count`` plays.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardhall.engine.base import IllegalAction
from cardhall.engine.cards import parse_cards, standard_deck
from cardhall.engine.games.alamo import Alamo
from cardhall.engine.games.avalanche import Avalanche
from cardhall.engine.games.loco_poker import LocoPoker
from cardhall.engine.rng import FairRandom
from cardhall.engine.stacked import StackedDeck

# -- Alamo (AL-5) ------------------------------------------------------------------------


class Unshuffled:
    """A random source that leaves every list as it is and answers 0 (the first face-down card)."""

    def shuffle(self, items: MutableSequence[Any]) -> None:
        pass

    def randbelow(self, n: int) -> int:
        return 0

    def to_data(self) -> dict[str, Any]:
        return {"kind": "fair", "key": "00" * 32, "position": 0}


def alamo_on_the_flop(preflop: bool = False) -> Alamo:
    """Two players, dealer 1; seat 2 (left of the dealer) to act first."""
    game = Alamo.new([1, 2], {"dealer": 1, "preflop_betting": preflop}, Unshuffled())
    game.start()
    if not preflop:
        game.advance()
    assert game.to_act == 2
    return game


@pytest.mark.parametrize(
    ("name", "before", "action", "error"),
    [
        ("call_stating_the_cards_added", [{"type": "bet", "amount": 3}], {"type": "call", "amount": 3}, None),
        ("call_without_amount", [{"type": "bet", "amount": 3}], {"type": "call"}, None),
        ("call_with_the_wrong_count", [{"type": "bet", "amount": 3}], {"type": "call", "amount": 4}, "bad_amount"),
        ("call_with_a_text_amount", [{"type": "bet", "amount": 3}], {"type": "call", "amount": "3"}, "bad_amount"),
        ("call_raised_bet_counts_only_the_cards_added",
         [{"type": "bet", "amount": 2}, {"type": "raise", "amount": 5}], {"type": "call", "amount": 3}, None),
        ("all_in_stating_its_total", [], {"type": "all_in", "amount": 22}, None),
        ("all_in_with_another_total", [], {"type": "all_in", "amount": 21}, "bad_amount"),
        ("fold_with_an_amount", [], {"type": "fold", "amount": 0}, "bad_amount"),
    ],
)
def test_AL5_actions_take_the_holdem_forms(name: str, before: list[dict[str, Any]], action: dict[str, Any],
                                           error: str | None) -> None:
    """SPEC "Alamo": actions as Hold'em's; a ``call``'s ``amount``, if given, is the cards it adds."""
    game = alamo_on_the_flop()
    for step in before:
        game.apply(game.to_act, step)
    seat = game.to_act
    assert seat is not None
    state = game.to_data()
    if error is None:
        events = game.apply(seat, action)
        done = next(e.data for e in events if e.type == "action")
        assert done["seat"] == seat
        if action["type"] == "call":
            assert done["action"] == "call" and done["cards"] == action.get("amount", done["cards"])
        else:
            assert done["all_in"] and done["bet"] == action["amount"]
    else:
        with pytest.raises(IllegalAction) as info:
            game.apply(seat, action)
        assert (info.value.code, info.value.rule) == (error, "AL-5")
        assert game.to_data() == state


@pytest.mark.parametrize("preflop", [False, True])
def test_AL5_fold_on_any_turn_even_when_checking_is_free(preflop: bool) -> None:
    """AL-5 (seed: "At any time a player may fold"): ``fold`` is legal and listed with nothing to call."""
    game = alamo_on_the_flop(preflop)
    legal = [a.to_data() for a in game.legal_actions()]
    assert {"type": "check"} in legal and legal[0] == {"type": "fold"}
    assert game.view(2)["legal_actions"][0] == {"type": "fold"}
    events = game.apply(2, {"type": "fold"})
    end = next(e.data for e in events if e.type == "hand_end")
    assert end["reason"] == "fold" and end["winnings"] == {"1": 8}  # two antes of 2 and both hole cards
    assert game.record["folded"] == [2]


def test_AL5_fold_when_free_in_a_three_way_round_keeps_the_round_going() -> None:
    game = Alamo.new([1, 2, 3], {"dealer": 3}, Unshuffled())
    game.start()
    game.advance()
    assert game.to_act == 1
    game.apply(1, {"type": "check"})
    events = game.apply(2, {"type": "fold"})
    assert [e.type for e in events] == ["action", "turn"] and game.to_act == 3
    assert game.folded == [2] and game.view(None)["set_aside"] == 2


def test_AL5_timeout_still_checks_when_checking_is_free() -> None:
    """G-3: the timeout action checks when it can, although a fold is legal too."""
    game = alamo_on_the_flop()
    assert game.timeout_action(2) == {"type": "check"}


def test_AL5_equity_bot_never_folds_when_checking_is_free() -> None:
    from cardhall.engine.bots.alamo import AlamoBot

    bot = AlamoBot(FairRandom(b"free-fold"))
    for seed in range(6):
        game = Alamo.new([1, 2], {"dealer": 1}, FairRandom(f"al5-{seed}".encode()))
        game.start()
        game.advance()
        seat = game.to_act
        assert seat is not None
        choice = bot.choose(game.view(seat), [a.to_data() for a in game.legal_actions()])
        assert choice["type"] != "fold"


# -- Loco Poker (LO-7) --------------------------------------------------------------------


def stack(players: Sequence[int], holes: dict[int, str], board: str) -> list[str]:
    """The deck order of LocoPoker's docstring (and SPEC "Randomness"): Pk gets D[k-1] and
    D[n+k-1]; flop D[2n+1..2n+3], turn D[2n+5], river D[2n+7]; the rest in canonical order."""
    n = len(players)
    slots: list[str | None] = [None] * 52
    for k, seat in enumerate(players):
        if seat in holes:
            slots[k], slots[n + k] = parse_cards(holes[seat])
    for pos, card in zip([2 * n + 1, 2 * n + 2, 2 * n + 3, 2 * n + 5, 2 * n + 7], parse_cards(board)):
        slots[pos] = card
    rest = iter(c for c in standard_deck() if c not in slots)
    return [c if c is not None else next(rest) for c in slots]


LOCO_DUELS = [
    # name, holes of seats 1 (all-in), 2 and 3 (callers), board, (loco seats, beaten by) or None,
    # and what best_hand mode says about the same cards
    ("caller_leader_wins_its_duel_another_caller_best", "2c3d", "AcAd", "7h8h", "2h9hKs4cTh",
     None, ([2], [3])),
    ("caller_leader_loses_its_duel", "7h8h", "AcAd", "5c5d", "2h9hKs4cTh", ([2], [1]), ([2], [1])),
    ("all_in_leader_beaten_by_a_caller", "AcAd", "7h8h", "5c5d", "2h9hKs4cTh", ([1], [2]), ([1], [2])),
    ("caller_leader_pushes_its_duel_another_caller_best", "2c2d", "AcAd", "Kh3c", "8s9dTcJhQs",
     None, ([2], [3])),
    ("tied_leaders_both_lose_their_duels", "AcKc", "AdKd", "Tc9c", "QcJc4h2s8c", ([1, 2], [1, 3]), ([1, 2], [3])),
    ("tied_leaders_one_wins_its_duel", "AdKd", "AcKc", "Tc9c", "QcJc4h2s8c", None, ([1, 2], [3])),
    ("leader_wins_every_duel", "AcAd", "KcKd", "QcQd", "2h7s9dJc3h", None, None),
]


@pytest.mark.parametrize("mode", ["duels", "best_hand"])
@pytest.mark.parametrize(("name", "h1", "h2", "h3", "board", "duels", "best_hand"), LOCO_DUELS,
                         ids=[c[0] for c in LOCO_DUELS])
def test_LO7_loco_with_ties_and_duels(mode: str, name: str, h1: str, h2: str, h3: str, board: str,
                                      duels: tuple[list[int], list[int]] | None,
                                      best_hand: tuple[list[int], list[int]] | None) -> None:
    """LO-7: tied turn leaders are each "the player"; in ``duels`` a leader loses the showdown
    only when it loses its own duel with the all-in player (a push is not a loss)."""
    order = stack([1, 2, 3], {1: h1, 2: h2, 3: h3}, board)
    game = LocoPoker.new([1, 2, 3], {"dealer": 3, "multi_call": mode}, StackedDeck(order))
    game.start()
    game.apply(1, {"type": "all_in"})
    game.apply(2, {"type": "call"})
    events = game.apply(3, {"type": "call"})
    while game.pending in ("street", "showdown"):
        events += game.advance()
    loco = [e.data for e in events if e.type == "loco"]
    expected = duels if mode == "duels" else best_hand
    if expected is None:
        assert loco == []
    else:
        seats, beaten_by = expected
        assert loco == [{"type": "loco", "hand": 1, "seats": seats, "beaten_by": beaten_by}]


# -- Avalanche (AV-1, SPEC "Avalanche") -----------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6, 7, 8])
def test_AV1_three_decks_for_any_number_of_players(players: int) -> None:
    """AV-1: ``decks`` = 3 is required for 7 or 8 players and allowed for fewer."""
    game = Avalanche.new(range(1, players + 1), {"decks": 3}, FairRandom(b"av1"))
    events = game.start()
    assert events[0].data["decks"] == 3 and events[0].data["deck_total"] == 165
    assert game.audit()["counted"] == 165


def test_AV1_two_decks_refused_for_seven() -> None:
    with pytest.raises(ValueError, match="decks"):
        Avalanche.new(range(1, 8), {"decks": 2}, FairRandom(b"av1"))


def card_order(card: str) -> tuple[int, str]:
    """SPEC "Avalanche": by rank (2..A, X), then by the card string (suits c, d, h, s; Xb before Xr)."""
    return "23456789TJQKAX".index(card[0]), card


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), players=st.integers(2, 8))
def test_deal_and_hands_sorted_by_rank_then_card_string(seed: int, players: int) -> None:
    game = Avalanche.new(range(1, players + 1), None, FairRandom(f"sort-{seed}".encode()))
    events = game.start()
    deal = events[1]
    for seat in range(1, players + 1):
        cards = deal.view(seat)["cards"]
        assert cards == sorted(cards, key=card_order)
        assert game.view(seat)["hand"] == cards


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_play_by_rank_and_count_takes_the_first_cards_of_that_rank_in_the_sorted_hand(seed: int) -> None:
    """The second form of ``play`` (the timeout action's): ``rank`` + ``count`` plays the first
    ``count`` cards of that rank in the hand's sorted order, as ``play.cards`` then shows."""
    game = Avalanche.new([1, 2], None, FairRandom(f"play-{seed}".encode()))
    game.start()
    seat = game.to_act
    assert seat is not None
    groups = next(a for a in game.legal_actions() if a.type == "play").extra["groups"]
    rank = max(groups, key=lambda r: (groups[r], r))
    count = groups[rank]
    same = [c for c in game.view(seat)["hand"] if c[0] == rank]
    events = game.apply(seat, {"type": "play", "rank": rank, "count": count})
    played = next(e.data for e in events if e.type == "play")
    assert played["cards"] == same[:count] and played["count"] == count and played["rank"] == rank


def test_avalanche_counts_are_counts() -> None:
    """SPEC "Avalanche": ``groups`` maps rank -> how many cards; ``game_end.last_hand`` and
    ``to_neutral`` are numbers of cards, not card lists."""
    game = Avalanche.new([1, 2], {"dealer": 2}, FairRandom(b"counts"))
    game.start()
    events: list[Any] = []
    while not game.finished:
        seat = game.to_act
        assert seat is not None
        legal = {a.type: a for a in game.legal_actions()}
        groups = legal["play"].extra["groups"]
        hand = game.view(seat)["hand"]
        assert groups == {r: sum(1 for c in hand if c[0] == r) for r in groups}
        assert all(type(n) is int for n in groups.values())
        action = {"type": "snowfall"} if "snowfall" in legal else game.timeout_action(seat)
        events = game.apply(seat, action)
    end = next(e.data for e in events if e.type == "game_end")
    assert type(end["last_hand"]) is int and type(end["to_neutral"]) is int
    record = game.hand_record()
    assert record is not None
    assert end["last_hand"] == len(record["end"]["last_hand"]) and end["to_neutral"] == len(record["end"]["to_neutral"])


# -- Hold'em hand histories: the burn cards (FL-5, SPEC "Randomness") ------------------------


@pytest.mark.parametrize(("game", "players"), [("no_limit_holdem", 2), ("no_limit_holdem", 3),
                                               ("fixed_limit_holdem", 4)])
@pytest.mark.parametrize("seed", range(4))
def test_phh_records_carry_the_burn_cards(game: str, players: int, seed: int) -> None:
    """SPEC "Randomness": the hands endpoint shows every hidden card, burns included. PHH has no
    burn action: ``_cardhall_burns`` (a user-defined field) holds ``deck[2n]``, ``deck[2n+4]``,
    ``deck[2n+6]`` for the streets reached; pokerkit reads the text without a warning, and
    :func:`cardhall.engine.phh.deck_order` rebuilds every dealt card of the deck from it."""
    import warnings

    import pokerkit

    from cardhall.engine import phh
    from cardhall.engine.registry import engine_class

    class Recording(FairRandom):
        """The match's generator, keeping each shuffled deck."""

        decks: list[list[str]] = []

        def shuffle(self, items: MutableSequence[Any]) -> None:
            super().shuffle(items)
            self.decks.append(list(items))

    rng = Recording(f"burns-{seed}".encode())
    rng.decks = []
    engine = engine_class(game).new(list(range(1, players + 1)), {"blind_levels": None}, rng)
    engine.start()
    bot = FairRandom(f"bot-{seed}".encode())
    records: dict[int, dict[str, Any]] = {}
    while not engine.finished and len(records) < 12:
        if engine.to_act is not None:
            legal = [a.to_data() for a in engine.legal_actions() if a.type != "fold"]
            choice = legal[bot.randbelow(len(legal))]
            action = {"type": choice["type"]}
            if choice["type"] in ("bet", "raise"):
                action["amount"] = choice["min"]
            engine.apply(engine.to_act, action)
        else:
            engine.advance()
        record = engine.hand_record()
        if record is not None:
            records[record["_cardhall_hand"]] = record
    reached: dict[int, int] = {}
    for number, record in records.items():
        deck = rng.decks[number - 1]
        n = len(record["_cardhall_seats"])
        board = "".join(a[5:] for a in record["actions"] if a.startswith("d db "))
        streets = {0: 0, 6: 1, 8: 2, 10: 3}[len(board)]
        reached[streets] = reached.get(streets, 0) + 1
        assert record["_cardhall_burns"] == [deck[2 * n], deck[2 * n + 4], deck[2 * n + 6]][:streets]
        text = phh.dumps(record)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            theirs = pokerkit.HandHistory.loads(text)
        assert theirs.user_defined_fields["_cardhall_burns"] == record["_cardhall_burns"]
        dealt = 2 * n + (0, 4, 6, 8)[streets]
        assert phh.deck_order(phh.loads(text))[:dealt] == deck[:dealt]
    assert max(reached) >= 1, reached  # at least one hand saw a flop


def test_phh_deck_order_refuses_bad_burns() -> None:
    from cardhall.engine import phh

    hand = {"starting_stacks": [100, 100], "actions": ["d dh p1 AhAd", "d dh p2 KhKd", "d db 2c3c4c"],
            "_cardhall_burns": ["Ah"]}
    with pytest.raises(phh.PHHError, match="more than once"):
        phh.deck_order(hand)
    with pytest.raises(phh.PHHError, match="_cardhall_burns"):
        phh.deck_order({**hand, "_cardhall_burns": ["Zz"]})
    assert phh.deck_order({**hand, "_cardhall_burns": ["9s"]})[4] == "9s"
