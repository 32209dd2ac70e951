"""Avalanche engine: seed 003 and RULES AV-1..AV-7, G-3; invariants as properties.

Positions are reached by real actions from a stacked deck (``cardhall.engine.stacked``).
Positions that need an empty deck (drop-outs, the end) are restored from plain
data with ``Avalanche.from_data``, the checkpoint interface, by :func:`position`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardhall.engine.base import Event, IllegalAction
from cardhall.engine.base import test_rng as fair_rng
from cardhall.engine.bots.base import Bot
from cardhall.engine.bots.random_bot import RandomBot
from cardhall.engine.cards import multi_deck, parse_cards, rank_value
from cardhall.engine.games.avalanche import Avalanche, outcome
from cardhall.engine.rng import FairRandom
from cardhall.engine.seats import clockwise
from cardhall.engine.stacked import StackedDeck

# -- helpers ------------------------------------------------------------------


def full_deck(decks: int = 2) -> list[str]:
    return multi_deck(decks, 3 * decks)


def stacked_order(
    seats: Sequence[int], dealer: int, hands: Mapping[int, str], deck: str = "", decks: int = 2
) -> list[str]:
    """A shuffle result that deals ``hands`` (seat -> cards text, topped up with
    the lowest unused cards to ten) and then puts ``deck`` on top of the deck."""
    rest = Counter(full_deck(decks))
    wanted = {s: parse_cards(hands.get(s, "")) for s in seats}
    top = parse_cards(deck)
    for card in [c for h in wanted.values() for c in h] + top:
        assert rest[card] > 0, f"{card} used too often"
        rest[card] -= 1
    spare = []
    for card in full_deck(decks):
        if rest[card] > 0:
            rest[card] -= 1
            spare.append(card)
    for s in seats:
        while len(wanted[s]) < 10:
            wanted[s].append(spare.pop(0))
    order_seats = clockwise(seats, after=dealer)
    dealt = [wanted[order_seats[i % len(seats)]][i // len(seats)] for i in range(10 * len(seats))]
    return dealt + top + spare


def new_game(
    seats: Sequence[int], dealer: int, hands: Mapping[int, str], deck: str = "", decks: int | None = None
) -> tuple[Avalanche, list[Event]]:
    """A started game dealt from a stacked deck, dealer fixed by option."""
    n = decks or (2 if len(seats) <= 6 else 3)
    rng = StackedDeck(stacked_order(seats, dealer, hands, deck, n))
    game = Avalanche.new(seats, {"dealer": dealer, "decks": decks}, rng)
    return game, game.start()


def position(
    hands: Mapping[int, str],
    turn: int,
    deck: str = "",
    avalanche: Sequence[tuple[int, str]] = (),
    stored: Mapping[int, int] = {},
) -> Avalanche:
    """A mid-game state restored from plain data (as a checkpoint would be):
    ``hands`` seat -> cards, ``deck`` top first, the avalanche's plays, stored
    pile sizes; every other card is on the neutral pile. Seats with no cards
    and an empty deck are out (AV-5)."""
    seats = sorted(hands)
    game = Avalanche.new(seats, {"dealer": seats[-1]}, fair_rng("position"))
    game.start()
    data = game.to_data()
    rest = Counter(full_deck(data["options"]["decks"]))

    def take(text: str) -> list[str]:
        cards = parse_cards(text)
        for c in cards:
            assert rest[c] > 0, c
            rest[c] -= 1
        return cards

    data["hands"] = {str(s): sorted(take(h), key=lambda c: (rank_value(c), c)) for s, h in hands.items()}
    data["deck"] = take(deck)
    data["avalanche"] = [{"seat": s, "cards": take(text)} for s, text in avalanche]
    data["stored"] = {str(s): [] for s in seats}
    for s, n in stored.items():
        pile = []
        for _ in range(n):
            card = next(c for c in sorted(rest) if rest[c] > 0)
            rest[card] -= 1
            pile.append(card)
        data["stored"][str(s)] = pile
    data["neutral"] = sorted(rest.elements())
    data["out"] = [s for s in seats if not hands[s]] if not deck else []
    data["turn"] = turn
    return Avalanche.from_data(data)


def play(game: Avalanche, seat: int, cards: str) -> list[Event]:
    return game.apply(seat, {"type": "play", "cards": parse_cards(cards)})


def all_cards(game: Avalanche) -> Counter[str]:
    every = [c for h in game.hands.values() for c in h] + game.deck + game.neutral
    every += [c for p in game.avalanche for c in p["cards"]] + [c for s in game.stored.values() for c in s]
    return Counter(every)


def of_type(events: Sequence[Event], kind: str) -> list[dict[str, Any]]:
    return [e.data for e in events if e.type == kind]


def bot_action(game: Avalanche, bot: Bot) -> tuple[int, dict[str, Any]]:
    """The seat to act and ``bot``'s choice from that seat's view."""
    seat = game.to_act
    assert seat is not None
    return seat, bot.choose(game.view(seat), [a.to_data() for a in game.legal_actions()])


def run_sequence(
    seats: Sequence[int], dealer: int, sequence: Sequence[tuple[int, str]]
) -> tuple[Avalanche, list[Event]]:
    """Deal each seat the cards it plays in ``sequence`` and play them in turn."""
    hands: dict[int, list[str]] = {s: [] for s in seats}
    for seat, cards in sequence:
        hands[seat] += parse_cards(cards)
    game, _ = new_game(seats, dealer, {s: " ".join(h) for s, h in hands.items()})
    events: list[Event] = []
    for seat, cards in sequence:
        assert game.to_act == seat
        events += play(game, seat, cards)
    return game, events


# -- seed 003 worked examples -----------------------------------------------------


def test_seed_example_1_fall_to_player_of_king() -> None:
    """4, 9, 9, K, 3: fallen, cards won by the player who played the king."""
    game, events = run_sequence(
        [1, 2, 3], 3, [(1, "4c"), (2, "9c"), (3, "9d"), (1, "Kh"), (2, "3s")]
    )
    assert [e["outcome"] for e in of_type(events, "play")] == ["start", "grow", "grow", "grow", "fall"]
    [fallen] = of_type(events, "fallen")
    assert fallen["to"] == 1 and fallen["seat"] == 2 and fallen["count"] == 5
    assert Counter(game.stored[1]) == Counter(["4c", "9c", "9d", "Kh", "3s"])
    assert game.avalanche == [] and game.to_act == 3  # AV-4: left of the one who let it fall


def test_seed_example_2_stopped_to_neutral_pile() -> None:
    """9, joker, 5-5, 5-5, 8-8, 6-6-6-6, 4-4-4-4: stopped, cards belong to no one."""
    seq = [(1, "9c"), (2, "Xr"), (3, "5c5d"), (4, "5h5s"), (1, "8c8d"), (2, "6c6d6h6s"), (3, "4c4d4h4s")]
    game, events = run_sequence([1, 2, 3, 4], 4, seq)
    assert [e["outcome"] for e in of_type(events, "play")] == ["start"] + ["grow"] * 5 + ["stop"]
    [stopped] = of_type(events, "stopped")
    assert stopped["count"] == 16 and stopped["seat"] == 3
    assert Counter(game.neutral) == Counter(parse_cards("9cXr5c5d5h5s8c8d6c6d6h6s4c4d4h4s"))
    assert all(not pile for pile in game.stored.values())
    assert game.to_act == 4


def test_seed_example_3_fall_to_player_of_queens() -> None:
    """6, 6, 7-7, 4-4-4, Q-Q-Q, A: fallen, cards won by the player of the queens."""
    seq = [(1, "6c"), (2, "6d"), (3, "7c7d"), (1, "4c4d4h"), (2, "QcQdQh"), (3, "Ac")]
    game, events = run_sequence([1, 2, 3], 3, seq)
    assert [e["outcome"] for e in of_type(events, "play")] == ["start"] + ["grow"] * 4 + ["fall"]
    [fallen] = of_type(events, "fallen")
    assert fallen["to"] == 2 and fallen["count"] == 11
    assert len(game.stored[2]) == 11 and game.to_act == 1


# -- AV-1 -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "decks", "total", "jokers"),
    [(2, None, 110, 6), (6, None, 110, 6), (7, None, 165, 9), (8, 3, 165, 9), (4, 3, 165, 9), (6, 2, 110, 6)],
)
def test_AV1_deck_composition(players: int, decks: int | None, total: int, jokers: int) -> None:
    game = Avalanche.new(range(1, players + 1), {"decks": decks}, fair_rng("av1"))
    game.start()
    assert game.audit() == {
        "unit": "cards",
        "expected": total,
        "counted": total,
        "where": {"hands": 10 * players, "deck": total - 10 * players, "avalanche": 0, "stored": 0, "neutral": 0},
    }
    assert all_cards(game) == Counter(full_deck(total // 55))
    assert sum(1 for c in game.deck + [c for h in game.hands.values() for c in h] if c[0] == "X") == jokers
    assert all(len(h) == 10 for h in game.hands.values())


@pytest.mark.parametrize(
    ("seats", "options", "field"),
    [
        ([1], {}, "seats"),
        (list(range(1, 10)), {}, "seats"),
        ([1, 1, 2], {}, "seats"),
        ([0, 1], {}, "seats"),
        (list(range(1, 8)), {"decks": 2}, "decks"),
        ([1, 2], {"decks": 4}, "decks"),
        ([1, 2], {"decks": "2"}, "decks"),
        ([1, 2], {"dealer": 3}, "dealer"),
        ([1, 2], {"jokers": 2}, "jokers"),
    ],
)
def test_AV1_bad_options_rejected(seats: list[int], options: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Avalanche.new(seats, options, fair_rng())


@pytest.mark.parametrize(("draw", "dealer", "first"), [(0, 1, 3), (1, 3, 6), (2, 6, 1)])
def test_AV1_random_dealer_from_injected_rng(draw: int, dealer: int, first: int) -> None:
    """The dealer is seats[randbelow(len(seats))], drawn before the shuffle; left of it plays first."""
    seats = [1, 3, 6]
    order = stacked_order(seats, dealer, {})
    game = Avalanche.new(seats, None, StackedDeck(order, draws=[draw]))
    events = game.start()
    assert game.dealer == dealer and game.to_act == first
    assert events[0].data == {"type": "game_start", "seats": seats, "dealer": dealer, "decks": 2, "deck_total": 110}
    assert game.view(None)["dealer"] == dealer


def test_AV1_random_dealer_covers_every_seat() -> None:
    dealers = set()
    for i in range(40):
        game = Avalanche.new([1, 2, 3, 4], None, fair_rng(f"dealer{i}"))
        game.start()
        dealers.add(game.dealer)
    assert dealers == {1, 2, 3, 4}


@pytest.mark.parametrize(("seats", "dealer", "first"), [([1, 2, 4], 2, 4), ([1, 2, 4], 4, 1), ([2, 5], 5, 2)])
def test_AV1_deal_ten_each_one_at_a_time_from_dealers_left(seats: list[int], dealer: int, first: int) -> None:
    order = full_deck()
    game = Avalanche.new(seats, {"dealer": dealer}, StackedDeck(order))
    events = game.start()
    ring = clockwise(seats, after=dealer)
    for k, seat in enumerate(ring):
        assert Counter(game.hands[seat]) == Counter(order[k : 10 * len(seats) : len(seats)])
    assert game.deck == order[10 * len(seats) :]
    assert game.to_act == first
    deal = events[1]
    assert deal.data == {"type": "deal", "hands": {str(s): 10 for s in seats}, "deck": 110 - 10 * len(seats)}
    assert deal.view(seats[0])["cards"] == game.hands[seats[0]]


@pytest.mark.parametrize(
    ("first", "second", "result"),
    [("Ac", "Xr", "grow"), ("Xb", "Ac", "fall"), ("9s", "9h", "grow"), ("Xr", "Xb", "grow"), ("Tc", "9c", "fall")],
)
def test_AV1_rank_order_joker_high_suits_ignored(first: str, second: str, result: str) -> None:
    _, events = run_sequence([1, 2], 2, [(1, first), (2, second)])
    assert of_type(events, "play")[1]["outcome"] == result


# -- AV-2 -------------------------------------------------------------------------

AV2_CASES = [
    # previous play, this play, outcome
    ("9c9d", "2c2d2h", "grow"),  # m > n, any rank
    ("9c9d", "9h9s", "grow"),  # m = n, equal rank
    ("9c9d", "KcKd", "grow"),  # m = n, higher rank
    ("9c9d", "5c5d", "stop"),  # m = n, lower rank, n >= 2
    ("AcAdAh", "2c2d2h", "stop"),
    ("9c", "5c", "fall"),  # m = n = 1, lower rank
    ("9c", "9d", "grow"),
    ("9c9d", "Ac", "fall"),  # m < n
    ("4c4d4h4s", "XrXb", "fall"),
    ("Xr", "2c2d", "grow"),
    ("2c", "Xr", "grow"),
]


@pytest.mark.parametrize(("previous", "this", "expected"), AV2_CASES)
def test_AV2_grow_stop_fall(previous: str, this: str, expected: str) -> None:
    game, events = run_sequence([1, 2], 1, [(2, previous), (1, this)])
    plays = of_type(events, "play")
    assert plays[1]["outcome"] == expected
    prev, cur = parse_cards(previous), parse_cards(this)
    assert outcome(len(prev), prev[0][0], len(cur), cur[0][0]) == expected
    if expected == "grow":
        assert len(game.avalanche) == 2 and game.to_act == 2
    else:
        assert game.avalanche == []


def test_AV2_play_by_rank_and_count_takes_cards_of_that_rank() -> None:
    game, _ = new_game([1, 2], 2, {1: "9c 9d 9h Kc"})
    events = game.apply(1, {"type": "play", "rank": "9", "count": 2})
    assert of_type(events, "play")[0]["cards"] == ["9c", "9d"]
    assert Counter(game.hands[1])["9h"] == 1 and sum(c[0] == "9" for c in game.hands[1]) == 1


# -- AV-3 -------------------------------------------------------------------------


def test_AV3_fall_includes_falling_play_and_goes_to_previous_player() -> None:
    game, events = run_sequence([1, 2, 3], 3, [(1, "5c"), (2, "8c8d"), (3, "2c")])
    [fallen] = of_type(events, "fallen")
    assert fallen == {"type": "fallen", "seat": 3, "to": 2, "cards": ["5c", "8c", "8d", "2c"], "count": 4, "stored": 4}
    assert sorted(game.stored[2]) == sorted(["5c", "8c", "8d", "2c"]) and not game.stored[1]


def test_AV3_stop_puts_everything_with_the_stopping_play_on_the_neutral_pile() -> None:
    game, events = run_sequence([1, 2], 2, [(1, "QcQd"), (2, "3c3d")])
    [stopped] = of_type(events, "stopped")
    assert stopped["cards"] == ["Qc", "Qd", "3c", "3d"] and stopped["neutral"] == 4
    assert sorted(game.neutral) == sorted(["Qc", "Qd", "3c", "3d"])


def test_AV3_fall_goes_to_previous_player_even_after_they_ran_out() -> None:
    # seat 1 played its last card (deck empty: out); seat 2 lets it fall
    game = position({1: "", 2: "3c 7d", 3: "5c 5d"}, turn=2, avalanche=[(3, "9c"), (1, "Kh")])
    assert game.view(None)["out"] == [1]
    events = play(game, 2, "3c")
    [fallen] = of_type(events, "fallen")
    assert fallen["to"] == 1 and sorted(game.stored[1]) == sorted(["9c", "Kh", "3c"])
    assert game.to_act == 3  # AV-5: seat 1 is skipped


# -- AV-4 -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sequence", "next_seat"),
    [
        ([(1, "5c"), (3, "2c")], 6),  # fall caused by 3 -> 6 opens
        ([(1, "5c5d"), (3, "2c2d")], 6),  # stop caused by 3 -> 6 opens
        ([(1, "5c"), (3, "6c"), (6, "2c")], 1),  # fall caused by 6 -> 1 opens
    ],
)
def test_AV4_next_player_after_fall_or_stop_may_snowfall_or_start(
    sequence: list[tuple[int, str]], next_seat: int
) -> None:
    game, events = run_sequence([1, 3, 6], 6, sequence)
    assert game.to_act == next_seat
    assert [a.type for a in game.legal_actions()] == ["snowfall", "play"]
    assert events[-1].data == {"type": "turn", "seat": next_seat, "avalanche": False, "snowfall": True}


def test_AV4_no_snowfall_during_an_avalanche() -> None:
    game, _ = run_sequence([1, 2], 2, [(1, "5c")])
    assert [a.type for a in game.legal_actions()] == ["play"]
    before = game.to_data()
    with pytest.raises(IllegalAction) as err:
        game.apply(2, {"type": "snowfall"})
    assert err.value.code == "snowfall_not_allowed" and err.value.rule == "AV-4"
    assert game.to_data() == before


def test_AV4_snowfall_draws_the_top_card_and_passes_the_turn() -> None:
    game, _ = new_game([1, 2, 3], 3, {}, deck="Xr Ah")
    events = game.apply(1, {"type": "snowfall"})
    assert events[0].data == {"type": "snowfall", "seat": 1, "hand": 11, "deck": 79}
    assert events[0].view(1)["card"] == "Xr" and "card" not in events[0].view(2)
    assert "Xr" in game.hands[1] and game.to_act == 2 and game.deck[0] == "Ah"


def test_AV4_turns_go_clockwise() -> None:
    game, _ = new_game([2, 4, 7], 7, {})
    seen = []
    for _ in range(6):
        seat = game.to_act
        assert seat is not None
        seen.append(seat)
        game.apply(seat, {"type": "snowfall"})
    assert seen == [2, 4, 7, 2, 4, 7]


# -- AV-5 -------------------------------------------------------------------------


def test_AV5_empty_hand_draws_ten_from_the_deck() -> None:
    top = "Ac Ad Ah As Kc Kd Kh Ks Qc Qd Jc"
    game, _ = new_game([1, 2], 2, {1: "2c2d2h2s2c2d2h2s3c3d", 2: "4c"}, deck=top)
    play(game, 1, "2c2d2h2s2c2d2h2s")  # start
    play(game, 2, "4c")  # fall onto 1
    events = play(game, 1, "3c3d")  # start with the last two cards: refill
    [refill] = [e for e in events if e.type == "refill"]
    assert refill.data == {"type": "refill", "seat": 1, "count": 10, "hand": 10, "deck": 80}
    assert Counter(refill.view(1)["cards"]) == Counter(parse_cards(top)[:10])
    assert "cards" not in refill.view(2) and "cards" not in refill.view(None)
    assert game.deck[0] == "Jc" and game.to_act == 2


def test_AV5_refill_takes_what_is_left_when_fewer_than_ten() -> None:
    game = position({1: "9c", 2: "5c 6c"}, turn=1, deck="Ac Ad Ah")
    events = play(game, 1, "9c")
    [refill] = of_type(events, "refill")
    assert refill["count"] == 3 and refill["deck"] == 0 and sorted(game.hands[1]) == ["Ac", "Ad", "Ah"]


def test_AV5_empty_deck_players_out_and_skipped() -> None:
    game = position({1: "9c", 2: "5c 6c", 3: "7c 8c"}, turn=1)
    events = play(game, 1, "9c")
    assert of_type(events, "out") == [{"type": "out", "seat": 1}]
    assert game.to_act == 2
    play(game, 2, "5c")  # fall onto 1 (out)
    assert sorted(game.stored[1]) == ["5c", "9c"]
    assert game.to_act == 3
    play(game, 3, "7c")  # start
    assert game.to_act == 2  # 1 skipped
    play(game, 2, "6c")  # a lower single: falls onto 3; 2 is out, only 3 holds cards: the end
    result = game.result()
    assert game.finished and result is not None and result["stored"] == {"1": 2, "2": 0, "3": 3}


def test_AV5_empty_deck_no_avalanche_must_start() -> None:
    game = position({1: "9c 4d", 2: "5c 6c"}, turn=1)
    assert [a.to_data() for a in game.legal_actions()] == [
        {"type": "play", "min": 1, "max": 1, "groups": {"4": 1, "9": 1}}
    ]
    with pytest.raises(IllegalAction) as err:
        game.apply(1, {"type": "snowfall"})
    assert (err.value.code, err.value.rule) == ("snowfall_not_allowed", "AV-5")


# -- AV-6 -------------------------------------------------------------------------


def test_AV6_last_holder_stores_hand_unresolved_avalanche_to_neutral() -> None:
    game = position({1: "9c", 2: "5c 6c 7c"}, turn=1, avalanche=[(2, "2c")], stored={1: 4, 2: 1})
    neutral_before = len(game.neutral)
    events = play(game, 1, "9c")  # grow with the last card: 1 out, 2 alone holds cards
    end = events[-1].data
    assert end["type"] == "game_end" and end["last"] == 2 and end["last_hand"] == 3 and end["to_neutral"] == 2
    assert game.finished and game.to_act is None and game.legal_actions() == []
    assert len(game.stored[2]) == 4 and len(game.neutral) == neutral_before + 2
    assert game.result() == {
        "ranking": [[1, 2]],
        "winners": [1, 2],
        "stored": {"1": 4, "2": 4},
        "neutral": neutral_before + 2,
    }
    audit = game.audit()
    assert audit["counted"] == audit["expected"] == 110
    assert audit["where"]["hands"] == audit["where"]["deck"] == audit["where"]["avalanche"] == 0


@pytest.mark.parametrize(
    ("stored", "ranking", "winners"),
    [
        ({1: 9, 2: 3, 3: 5}, [[1], [3], [2]], [1]),
        ({1: 5, 2: 8, 3: 8}, [[2, 3], [1]], [2, 3]),
        ({1: 2, 2: 2, 3: 2}, [[1, 2, 3]], [1, 2, 3]),
    ],
)
def test_AV6_ranking_by_stored_cards_ties_share(
    stored: dict[int, int], ranking: list[list[int]], winners: list[int]
) -> None:
    # seat 2 is out; seat 1 starts with its last card and goes out; seat 3 stores its king (AV-6)
    game = position({1: "2c", 2: "", 3: "Kc"}, turn=1, stored={1: stored[1], 2: stored[2], 3: stored[3] - 1})
    play(game, 1, "2c")  # 1 out; only 3 holds cards: it stores its king
    assert game.result() == {
        "ranking": ranking,
        "winners": winners,
        "stored": {str(s): n for s, n in stored.items()},
        "neutral": len(game.neutral),
    }
    assert game.view(2)["result"] == game.result()


def test_AV6_hand_record_has_everything() -> None:
    game, _ = new_game([1, 2], 2, {})
    bot = RandomBot(FairRandom(b"record"))
    while not game.finished:
        assert game.hand_record() is None
        game.apply(*bot_action(game, bot))
    record = game.hand_record()
    assert record is not None
    assert msgpack.unpackb(msgpack.packb(record)) == record
    assert Counter(record["deck_order"]) == Counter(full_deck())
    assert {s: len(h) for s, h in record["deal"].items()} == {"1": 10, "2": 10}
    assert sum(len(p) for p in record["stored"].values()) + len(record["neutral"]) == 110
    assert record["result"] == game.result()
    # the moves replay the whole game from the deal
    hands = {int(s): Counter(h) for s, h in record["deal"].items()}
    for move in record["moves"]:
        if move["type"] == "play":
            hands[move["seat"]] -= Counter(move["cards"])
        elif move["type"] == "snowfall":
            hands[move["seat"]][move["card"]] += 1
        elif move["type"] == "refill":
            hands[move["seat"]] += Counter(move["cards"])
    last = record["end"]["last"]
    if last is not None:
        assert hands.pop(last) == Counter(record["end"]["last_hand"])
    assert all(not +h for h in hands.values())


# -- AV-7 -------------------------------------------------------------------------


def test_AV7_views_show_own_hand_and_public_counts_only() -> None:
    game, _ = run_sequence([1, 2, 3], 3, [(1, "5c"), (2, "8c8d")])
    spectator = game.view(None)
    assert "hand" not in spectator
    assert spectator["hand_sizes"] == {"1": 9, "2": 8, "3": 10}
    assert spectator["avalanche"] == [
        {"seat": 1, "cards": ["5c"], "rank": "5", "count": 1},
        {"seat": 2, "cards": ["8c", "8d"], "rank": "8", "count": 2},
    ]
    assert spectator["deck"] == 80 and spectator["to_act"] == 3 and spectator["stored"] == {"1": 0, "2": 0, "3": 0}
    for seat in (1, 2, 3):
        mine = game.view(seat)
        assert mine.pop("hand") == game.hands[seat]
        assert mine == spectator
    assert game.view(9) == spectator  # not a seat: spectator view


# -- G-3 timeout ------------------------------------------------------------------


def test_G3_timeout_snowfalls_when_legal() -> None:
    game, _ = new_game([1, 2], 2, {})
    assert game.timeout_action(1) == {"type": "snowfall"}


def test_G3_timeout_plays_one_lowest_card_during_an_avalanche() -> None:
    game, _ = new_game([1, 2], 2, {1: "Kc", 2: "7c 7d 5h 9s Xr Ac Ad Ah As Qs"})
    play(game, 1, "Kc")
    assert game.timeout_action(2) == {"type": "play", "rank": "5", "count": 1}
    game.apply(2, game.timeout_action(2))


def test_G3_timeout_with_empty_deck_starts_with_lowest_single() -> None:
    game = position({1: "Qc Qd 8s", 2: "5c"}, turn=1)
    assert game.timeout_action(1) == {"type": "play", "rank": "8", "count": 1}
    with pytest.raises(IllegalAction):
        game.timeout_action(2)


# -- illegal actions --------------------------------------------------------------

ILLEGAL = [
    (2, {"type": "snowfall"}, "not_your_turn", "AV-4"),
    (1, {"type": "fold"}, "unknown_action", "AV-4"),
    (1, {}, "unknown_action", "AV-4"),
    (1, ["play"], "bad_action", "AV-4"),
    (1, {"type": "play"}, "bad_action", "AV-2"),
    (1, {"type": "play", "rank": "9"}, "bad_action", "AV-2"),
    (1, {"type": "play", "rank": "10", "count": 1}, "bad_rank", "AV-2"),
    (1, {"type": "play", "rank": "9", "count": 0}, "bad_count", "AV-2"),
    (1, {"type": "play", "rank": "9", "count": True}, "bad_count", "AV-2"),
    (1, {"type": "play", "rank": "9", "count": 3}, "not_in_hand", "AV-2"),
    (1, {"type": "play", "rank": "A", "count": 1}, "not_in_hand", "AV-2"),
    (1, {"type": "play", "cards": []}, "empty_play", "AV-2"),
    (1, {"type": "play", "cards": "9c"}, "bad_card", "AV-2"),
    (1, {"type": "play", "cards": ["9x"]}, "bad_card", "AV-2"),
    (1, {"type": "play", "cards": ["9c", "Kc"]}, "mixed_ranks", "AV-2"),
    (1, {"type": "play", "cards": ["9c"], "rank": "K"}, "mixed_ranks", "AV-2"),
    (1, {"type": "play", "cards": ["9c"], "count": 2}, "bad_count", "AV-2"),
    (1, {"type": "play", "cards": ["9c", "9c"]}, "not_in_hand", "AV-2"),
    (1, {"type": "play", "cards": ["9h"]}, "not_in_hand", "AV-2"),
]


@pytest.mark.parametrize(("seat", "action", "code", "rule"), ILLEGAL)
def test_AV2_AV4_illegal_actions_rejected_state_unchanged(seat: int, action: Any, code: str, rule: str) -> None:
    game, _ = new_game([1, 2], 2, {1: "9c 9d Kc Kd Kh 2c 3c 4c 5c 6c", 2: "Ac"})
    before = game.to_data()
    with pytest.raises(IllegalAction) as err:
        game.apply(seat, action)
    assert (err.value.code, err.value.rule) == (code, rule)
    assert game.to_data() == before


def test_AV6_no_action_after_the_end_and_advance_has_nothing() -> None:
    game = position({1: "2c", 2: "Kc"}, turn=1)
    play(game, 1, "2c")
    with pytest.raises(IllegalAction) as err:
        game.apply(2, {"type": "play", "rank": "K", "count": 1})
    assert err.value.code == "game_over"
    with pytest.raises(IllegalAction):
        game.advance()
    assert game.pending is None


def test_AV1_actions_before_the_deal_rejected() -> None:
    game = Avalanche.new([1, 2], {"dealer": 1}, fair_rng())
    with pytest.raises(IllegalAction) as err:
        game.apply(2, {"type": "snowfall"})
    assert err.value.code == "not_started" and game.to_act is None and game.legal_actions() == []
    game.start()
    with pytest.raises(IllegalAction):
        game.start()


def test_from_data_rejects_malformed_state() -> None:
    game, _ = new_game([1, 2], 2, {})
    data = game.to_data()
    missing_deck = {k: v for k, v in data.items() if k != "deck"}
    for broken in ({**data, "game": "alamo"}, {**data, "hands": {"1": ["zz"]}}, missing_deck):
        with pytest.raises(ValueError):
            Avalanche.from_data(broken)


# -- properties over random matches -------------------------------------------------

CARD_STRINGS = set(full_deck(3))


def cards_in(obj: Any) -> list[str]:
    """Every card string anywhere in a nested structure."""
    if isinstance(obj, str):
        return [obj] if obj in CARD_STRINGS else []
    if isinstance(obj, Mapping):
        return [c for k, v in obj.items() for c in cards_in(k) + cards_in(v)]
    if isinstance(obj, list | tuple):
        return [c for v in obj for c in cards_in(v)]
    return []


def check_views(game: Avalanche, events: Sequence[Event]) -> None:
    """AV-7: a seat's view is the spectator view plus its own hand; the spectator
    view shows only avalanche cards; private event fields reach only their seat."""
    spectator = game.view(None)
    public = {k: v for k, v in spectator.items() if k != "avalanche"}
    assert cards_in(public) == [] and "hand" not in spectator
    assert len(cards_in(spectator)) == sum(len(p["cards"]) for p in game.avalanche)
    for seat in game.seats:
        mine = dict(game.view(seat))
        assert mine.pop("hand") == game.hands[seat]
        assert mine == spectator
    for event in events:
        if event.type in ("deal", "snowfall", "refill"):
            assert cards_in(event.view(None)) == []
            for seat in game.seats:
                shown = event.view(seat)
                if event.private and seat in event.private:
                    assert event.data.get("seat", seat) == seat
                else:
                    assert shown == event.data


def all_legal_moves(game: Avalanche) -> list[dict[str, Any]]:
    moves: list[dict[str, Any]] = []
    for option in game.legal_actions():
        if option.type == "snowfall":
            moves.append({"type": "snowfall"})
        else:
            for rank, held in option.extra["groups"].items():
                moves += [{"type": "play", "rank": rank, "count": n} for n in range(option.min or 1, held + 1)]
                assert held <= (option.max or 0)
    return moves


def clone(game: Avalanche) -> Avalanche:
    return Avalanche.from_data(msgpack.unpackb(msgpack.packb(game.to_data())))


garbage_actions = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=4),
    st.dictionaries(
        st.sampled_from(["type", "rank", "count", "cards", "amount"]),
        st.one_of(
            st.sampled_from(["play", "snowfall", "fold", "9", "X", "T", "10", ""]),
            st.integers(-3, 12),
            st.booleans(),
            st.none(),
            st.lists(st.sampled_from(["9c", "9d", "Xr", "Kh", "2c", "zz", "9"]), max_size=4),
        ),
        max_size=4,
    ),
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), players=st.integers(2, 8), restore_at=st.integers(0, 400), data=st.data())
def test_properties_random_matches(seed: int, players: int, restore_at: int, data: st.DataObject) -> None:
    """Cards conserved (exact multiset) at every step; only legal moves accepted
    and every listed one accepted; plain-data round trip (msgpack) at every step,
    and a restored engine continues identically; views leak nothing."""
    seats = sorted(data.draw(st.sets(st.integers(1, 9), min_size=players, max_size=players)))
    game = Avalanche.new(seats, None, FairRandom(seed.to_bytes(8, "big")))
    events = game.start()
    deck = Counter(full_deck(game.decks))
    bot = RandomBot(FairRandom(b"bot" + seed.to_bytes(8, "big")))
    twin: Avalanche | None = None
    step = 0
    while True:
        assert all_cards(game) == deck
        audit = game.audit()
        assert audit["counted"] == audit["expected"] == sum(deck.values())
        state = game.to_data()
        assert msgpack.unpackb(msgpack.packb(state)) == state
        assert clone(game).to_data() == state
        check_views(game, events)
        if game.finished:
            break
        seat = game.to_act
        assert seat is not None and game.hands[seat]
        # garbage and wrong seats: rejected with the state unchanged, or a legal move
        legal = all_legal_moves(game)
        junk = data.draw(garbage_actions)
        other = next(s for s in seats if s != seat)
        with pytest.raises(IllegalAction):
            game.apply(other, legal[0])
        try:
            trial = clone(game)
            trial.apply(seat, junk)  # type: ignore[arg-type]  # garbage on purpose
        except IllegalAction:
            pass
        else:
            assert isinstance(junk, dict) and _matches_legal(junk, legal)
        assert game.to_data() == state
        if step % 7 == 0:  # every listed legal move is accepted (sampled steps keep it fast)
            for move in legal:
                clone(game).apply(seat, move)
        seat, action = bot_action(game, bot)
        if step == restore_at:
            twin = clone(game)
        events = game.apply(seat, action)
        if twin is not None:
            assert twin.apply(seat, action) == events
            assert twin.to_data() == game.to_data()
        step += 1
    assert sum(len(p) for p in game.stored.values()) + len(game.neutral) == sum(deck.values())
    holders = [s for s in seats if game.hands[s]]
    assert holders == [] and game.deck == [] and game.avalanche == []


def _matches_legal(action: dict[str, Any], legal: list[dict[str, Any]]) -> bool:
    """Whether an accepted free-form action is one of the legal moves."""
    if action.get("type") == "snowfall":
        return {"type": "snowfall"} in legal
    cards = action.get("cards")
    rank: Any
    count: Any
    if cards is not None:
        rank, count = cards[0][0], len(cards)
    else:
        rank, count = action.get("rank"), action.get("count")
    return {"type": "play", "rank": rank, "count": count} in legal


RULE_SEEDS = range(30)


def test_AV2_to_AV6_referee_over_random_matches() -> None:
    """An independent referee checks every action of 30 random matches from the
    public state before it (AV-2 outcomes, AV-3 destination, AV-4/AV-5 turn,
    refill and drop-out, AV-6 end), and that each rare case occurred."""
    seen: Counter[str] = Counter()
    for seed in RULE_SEEDS:
        players = 2 + seed % 5
        game = Avalanche.new(list(range(1, players + 1)), None, fair_rng(f"referee{seed}"))
        game.start()
        bot = RandomBot(FairRandom(f"refbot{seed}".encode()))
        while not game.finished:
            before = game.view(None)
            seat, action = bot_action(game, bot)
            hand = list(game.hands[seat])
            events = game.apply(seat, action)
            after = game.view(None)
            sizes = {int(s): n for s, n in before["hand_sizes"].items()}
            pile = sum(p["count"] for p in before["avalanche"])
            if action["type"] == "snowfall":
                assert not before["avalanche"] and before["deck"] > 0
                assert after["deck"] == before["deck"] - 1
                sizes[seat] += 1
            else:
                count = action["count"]
                assert sum(c[0] == action["rank"] for c in hand) >= count
                sizes[seat] -= count
                prev = before["avalanche"][-1] if before["avalanche"] else None
                expected = "start" if prev is None else outcome(prev["count"], prev["rank"], count, action["rank"])
                assert of_type(events, "play")[0]["outcome"] == expected
                gained = {int(s): after["stored"][s] - before["stored"][s] for s in after["stored"]}
                to_neutral = after["neutral"] - before["neutral"]
                if expected == "fall":
                    assert prev is not None
                    if prev["seat"] in before["out"]:
                        seen["fall_to_out"] += 1
                    assert gained[prev["seat"]] >= pile + count
                    if not game.finished:
                        assert gained == {s: (pile + count if s == prev["seat"] else 0) for s in gained}
                        assert to_neutral == 0
                    seen["fall"] += 1
                elif expected == "stop":
                    assert to_neutral >= pile + count
                    if not game.finished:
                        assert to_neutral == pile + count and not any(gained.values())
                    seen["stop"] += 1
                elif not game.finished:
                    assert to_neutral == 0 and not any(gained.values())
                if sizes[seat] == 0:
                    draw = min(10, before["deck"])
                    if draw:
                        assert of_type(events, "refill")[0]["count"] == draw
                        sizes[seat] = draw
                        seen["refill_short" if draw < 10 else "refill"] += 1
                    else:
                        assert of_type(events, "out") == [{"type": "out", "seat": seat}]
                        seen["out"] += 1
            holders = [s for s in before["seats"] if sizes[s] > 0]
            if len(holders) <= 1:
                end = events[-1].data
                assert end["type"] == "game_end" and game.finished
                assert end["last"] == (holders[0] if holders else None)
                seen["end"] += 1
            else:
                ring = clockwise(before["seats"], after=seat)
                expected_next = next(s for s in ring if sizes[s] > 0)
                assert game.to_act == expected_next
                if any(sizes[s] == 0 for s in ring[: ring.index(expected_next)]):
                    seen["skip"] += 1
    for case in ("fall", "stop", "refill", "refill_short", "out", "end", "skip", "fall_to_out"):
        assert seen[case] > 0, f"referee never saw {case}: {dict(seen)}"


def test_match_is_fast_and_deterministic() -> None:
    """Two engines from the same seed play the same match (the G-2 replay)."""

    def run() -> list[dict[str, Any]]:
        game = Avalanche.new([1, 2, 3, 4], None, fair_rng("same"))
        out = [e.to_data() for e in game.start()]
        bot = RandomBot(FairRandom(b"same"))
        while not game.finished:
            out += [e.to_data() for e in game.apply(*bot_action(game, bot))]
        return out

    assert run() == run()
