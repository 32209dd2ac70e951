"""Alamo hand ranking with wild jokers (RULES AL-2), checked against brute force."""

from __future__ import annotations

import doctest
import itertools
from collections import Counter

import eval7
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardhall.engine import ranking
from cardhall.engine.cards import standard_deck
from cardhall.engine.games import alamo_ranking
from cardhall.engine.games.alamo_ranking import FIVE_OF_A_KIND, hand_name, hand_value

DECK = standard_deck()


def brute_force(cards: list[str]) -> int:
    """Every substitution of the jokers by distinct cards the player does not hold."""
    plain = [c for c in cards if c[0] != "X"]
    jokers = len(cards) - len(plain)
    counts = Counter(c[0] for c in plain)
    five = [alamo_ranking.rank_value(r + "c") for r, n in counts.items() if n + jokers >= 5]
    if five:
        return FIVE_OF_A_KIND + max(five)
    free = [c for c in DECK if c not in plain]
    return max(
        eval7.evaluate([eval7.Card(c) for c in plain + list(sub)]) for sub in itertools.combinations(free, jokers)
    )


def test_docstring_examples():
    result = doctest.testmod(alamo_ranking)
    assert result.failed == 0 and result.attempted > 0


CASES = [
    # (name, cards, expected category, equal-to hand without jokers or None)
    ("joker_completes_straight_flush", ["9h", "Th", "Jh", "Qh", "Xr", "2c", "2d"], "Straight Flush", ["9h", "Th", "Jh", "Qh", "Kh"]),
    ("joker_makes_royal_not_just_a_flush", ["Ah", "Kh", "Qh", "Jh", "2h", "Xb", "3c"], "Straight Flush", ["Ah", "Kh", "Qh", "Jh", "Th"]),
    ("joker_makes_flush_with_ace", ["2s", "5s", "9s", "Js", "Xr", "Kd"], "Flush", ["2s", "5s", "9s", "Js", "As"]),
    ("joker_pairs_the_top_card_makes_trips", ["Ah", "Ad", "7c", "4s", "2h", "Xr", "9d"], "Trips", ["Ah", "Ad", "Ac", "9d", "7c"]),
    ("joker_fills_an_inside_straight", ["5c", "6d", "8h", "9s", "Xr", "Kc", "Kd"], "Straight", ["5c", "6d", "7h", "8h", "9s"]),
    ("joker_on_a_five_card_board_only", ["Xr", "2c", "7d", "9h", "Jc"], "Pair", ["Jd", "Jc", "9h", "7d", "2c"]),
    ("two_jokers_with_a_pair_make_quads", ["Xr", "Xb", "As", "Ad", "7c", "8d", "2h"], "Quads", ["As", "Ad", "Ac", "Ah", "8d"]),
    ("two_jokers_complete_a_straight_flush", ["4d", "5d", "8d", "Xr", "Xb", "Kc"], "Straight Flush", ["4d", "5d", "6d", "7d", "8d"]),
    ("two_jokers_royal", ["Ah", "Kh", "Qh", "Xr", "Xb", "2c", "2d"], "Straight Flush", ["Ah", "Kh", "Qh", "Jh", "Th"]),
]


@pytest.mark.parametrize("name,cards,category,same_as", CASES, ids=[c[0] for c in CASES])
def test_AL2_joker_is_wild(name, cards, category, same_as):
    value = hand_value(cards)
    assert hand_name(value) == category
    assert value == ranking.hand_value(same_as)
    assert value == brute_force(cards)


FIVE_CASES = [
    ("four_aces_and_a_joker", ["Ah", "Ad", "Ac", "As", "Xr", "Kd", "Qc"], 14),
    ("three_twos_and_two_jokers", ["2h", "2d", "2c", "Xr", "Xb", "Kd", "Qc"], 2),
    ("four_sevens_and_two_jokers", ["7h", "7d", "7c", "7s", "Xr", "Xb", "Ac"], 7),
    ("higher_rank_of_two_candidates", ["3h", "3d", "3c", "Kh", "Kd", "Kc", "Xr", "Xb"][1:], 13),
]


@pytest.mark.parametrize("name,cards,rank", FIVE_CASES, ids=[c[0] for c in FIVE_CASES])
def test_AL2_five_of_a_kind_ranks_above_a_straight_flush(name, cards, rank):
    value = hand_value(cards)
    assert value == FIVE_OF_A_KIND + rank
    assert hand_name(value) == "Five of a Kind"
    assert value > ranking.hand_value(["Ah", "Kh", "Qh", "Jh", "Th"])


def test_AL2_five_of_a_kind_compares_by_rank():
    assert hand_value(["Kh", "Kd", "Kc", "Ks", "Xr"]) > hand_value(["Qh", "Qd", "Qc", "Xr", "Xb"])


def test_AL2_joker_stands_for_a_card_another_player_holds():
    # the joker may be Th even if an opponent holds Th: only the player's own cards are excluded
    assert hand_value(["As", "Ks", "Qs", "Js", "Xr"]) == ranking.hand_value(["As", "Ks", "Qs", "Js", "Ts"])


def test_AL2_joker_never_duplicates_a_held_card():
    # with Ah Kh Qh Jh Th held the hand is already a royal flush; a second Ah cannot make five of a kind
    cards = ["Ah", "Kh", "Qh", "Jh", "Th", "Xr", "2c"]
    assert hand_value(cards) == ranking.hand_value(["Ah", "Kh", "Qh", "Jh", "Th"])


def test_jokerless_hands_rank_exactly_as_eval7():
    cards = ["Ah", "2c", "3d", "4s", "5c", "9s", "Kd"]
    assert hand_value(cards) == ranking.hand_value(cards)


@pytest.mark.parametrize("cards", [["Ah", "Kd", "Xr", "2c"], ["Xr", "Xb", "Ah", "Kd", "2c", "Xr"]])
def test_malformed_hands_raise(cards):
    with pytest.raises(ValueError):
        hand_value(cards)


@settings(max_examples=150, deadline=None)
@given(st.integers(5, 7), st.integers(1, 2), st.randoms(use_true_random=False))
def test_AL2_pruned_substitution_equals_brute_force(size, jokers, rnd):
    plain = rnd.sample(DECK, size - jokers)
    cards = plain + ["Xr", "Xb"][:jokers]
    rnd.shuffle(cards)
    assert hand_value(cards) == brute_force(cards)
