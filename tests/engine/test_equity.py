"""Monte Carlo equity (engine.bots.equity): known equities, exact cases, a
differential check against full enumeration, determinism and errors."""

from __future__ import annotations

import itertools

import pytest

from cardhall.engine.bots.equity import equity
from cardhall.engine.cards import parse_cards, standard_deck
from cardhall.engine.ranking import hand_value
from cardhall.engine.rng import FairRandom


def rng(label: str = "equity-test") -> FairRandom:
    return FairRandom(label.encode())


def exact_heads_up(hole: list[str], board: list[str]) -> float:
    """Exact share against one random hand by enumerating every opponent hand
    and every completion of the board (independent of the code under test)."""
    seen = set(hole) | set(board)
    rest = [c for c in standard_deck() if c not in seen]
    total = count = 0.0
    for opp in itertools.combinations(rest, 2):
        left = [c for c in rest if c not in opp]
        for runout in itertools.combinations(left, 5 - len(board)):
            full = [*board, *runout]
            mine, theirs = hand_value([*hole, *full]), hand_value([*opp, *full])
            total += 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
            count += 1
    return total / count


# Known preflop equities against random hands (standard tables; tolerance
# covers Monte Carlo error at 6000 samples, about 4 standard errors).
KNOWN = [
    ("AA_heads_up", "AcAd", 1, 0.852, 0.02),
    ("72o_heads_up", "7c2d", 1, 0.346, 0.025),
    ("AA_vs_three", "AsAh", 3, 0.639, 0.025),
    ("KQs_heads_up", "KhQh", 1, 0.634, 0.025),
]


@pytest.mark.parametrize(("name", "hole", "opponents", "expected", "tolerance"), KNOWN, ids=[k[0] for k in KNOWN])
def test_known_preflop_equities(name: str, hole: str, opponents: int, expected: float, tolerance: float) -> None:
    got = equity(parse_cards(hole), [], opponents, 6000, rng(name))
    assert abs(got - expected) < tolerance, (name, got)


def test_made_royal_flush_on_the_river_is_certain() -> None:
    assert equity(parse_cards("AhKh"), parse_cards("QhJhTh2c3d"), 5, 300, rng()) == 1.0


@pytest.mark.parametrize("opponents", [1, 2, 4])
def test_board_royal_flush_splits_evenly(opponents: int) -> None:
    """Everyone plays the board: every sample is a tie among opponents + 1 hands."""
    got = equity(parse_cards("2c3d"), parse_cards("AsKsQsJsTs"), opponents, 100, rng())
    assert got == pytest.approx(1 / (opponents + 1))


def test_no_opponent_is_certain() -> None:
    assert equity(parse_cards("2c7d"), [], 0, 10, rng()) == 1.0


def test_dead_cards_are_never_dealt() -> None:
    """With every card but two marked dead, the opponent must hold those two."""
    hole, board = parse_cards("2c7d"), parse_cards("9h9s4c5dKh")
    left = ["Ah", "Ad"]  # the opponent's only possible hand: aces and nines beat our nines
    dead = [c for c in standard_deck() if c not in {*hole, *board, *left}]
    assert equity(hole, board, 1, 50, rng(), dead) == 0.0
    left = ["3h", "6s"]  # nines with K-6-5 against our nines with K-7-5
    dead = [c for c in standard_deck() if c not in {*hole, *board, *left}]
    assert equity(hole, board, 1, 50, rng(), dead) == 1.0


@pytest.mark.parametrize(
    ("hole", "board"),
    [("AhKd", "QsJc7h2d9s"), ("8c8d", "2h7s8sKdKs"), ("5h6h", "7h8hAc2d")],
    ids=["river_ace_high", "river_full_house", "turn_draws"],
)
def test_matches_exact_enumeration(hole: str, board: str) -> None:
    h, b = parse_cards(hole), parse_cards(board)
    exact = exact_heads_up(h, b)
    got = equity(h, b, 1, 4000, rng(hole + board))
    assert abs(got - exact) < 0.03, (exact, got)


def test_deterministic_for_a_given_generator_state() -> None:
    a = equity(parse_cards("AsKs"), [], 2, 200, rng("same"))
    b = equity(parse_cards("AsKs"), [], 2, 200, rng("same"))
    assert a == b
    g = rng("advancing")
    first = equity(parse_cards("AsKs"), [], 2, 200, g)
    second = equity(parse_cards("AsKs"), [], 2, 200, g)
    assert g.position > 0 and first != second  # the generator advances between calls


@pytest.mark.parametrize(
    ("hole", "board", "opponents", "samples", "dead"),
    [
        ("AhAh", "", 1, 10, ""),  # repeated card
        ("AhKh", "AhQd2c", 1, 10, ""),  # repeated across hole and board
        ("AhKh", "2c3c4c5c6c7c", 1, 10, ""),  # six board cards
        ("AhKh", "", 1, 0, ""),  # no samples
        ("AhKh", "", 24, 10, ""),  # 53 cards needed
        ("AhKh", "", 1, 10, "Kh"),  # dead card repeats a hole card
    ],
    ids=["repeated_hole", "repeated_board", "six_board_cards", "no_samples", "too_many_opponents", "dead_repeats"],
)
def test_bad_input_raises_value_error(hole: str, board: str, opponents: int, samples: int, dead: str) -> None:
    with pytest.raises(ValueError):
        equity(parse_cards(hole), parse_cards(board), opponents, samples, rng(), parse_cards(dead))


def test_malformed_card_raises_key_error() -> None:
    with pytest.raises(KeyError):
        equity(["Zz", "Ah"], [], 1, 10, rng())
