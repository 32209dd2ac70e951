"""The Hold'em ``equity`` bot: legal choices from the seat's view only, sensible
decisions, and clearly better than the ``random`` baseline. Win rates are
deterministic for a seed; the bench (``cardhall bench engine``) prints larger runs."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cardhall.engine.bots.holdem
from cardhall.engine.bots.holdem import HoldemBot, win_rate
from cardhall.engine.bots.registry import DEFAULT, make_bot
from cardhall.engine.games.fixed_limit_holdem import FixedLimitHoldem
from cardhall.engine.games.no_limit_holdem import NoLimitHoldem
from cardhall.engine.rng import FairRandom
from tests.engine.holdem_util import nl


def test_doctests():
    assert doctest.testmod(cardhall.engine.bots.holdem).failed == 0


def test_registered_as_the_default_for_both_games():
    for game in ("fixed_limit_holdem", "no_limit_holdem"):
        assert DEFAULT[game] == "equity"
        assert isinstance(make_bot(game, None, FairRandom(b"x")), HoldemBot)


def valid(action: dict, legal: list[dict]) -> bool:
    for option in legal:
        if option["type"] != action["type"]:
            continue
        if "amount" not in action:
            return True
        return option["min"] <= action["amount"] <= option["max"]
    return False


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([FixedLimitHoldem, NoLimitHoldem]), st.integers(2, 6), st.binary(min_size=4, max_size=4))
def test_choices_are_always_legal_and_accepted(cls, players, seed):
    seats = list(range(1, players + 1))
    m = cls.new(seats, {"starting_stacks": 200}, FairRandom(seed))
    bots = {s: HoldemBot(FairRandom(seed + bytes([s]))) for s in seats}
    for b in bots.values():
        b.samples = 30
    m.start()
    for _ in range(300):
        if m.finished:
            break
        if m.pending:
            m.advance()
            continue
        seat = m.to_act
        legal = [a.to_data() for a in m.legal_actions()]
        action = bots[seat].choose(m.view(seat), legal)
        assert valid(action, legal), (action, legal)
        m.apply(seat, action)


def decide(hole: list[str], to_call: int, pot: int, board: str = "") -> dict:
    m = nl([1, 2], [([hole[0] + hole[1], "2s3s"], board)], button=2)
    view = m.view(1)  # seat 1 (the big blind) holds ``hole``
    view.update({"to_act": 1, "pot": pot, "board": [board[i : i + 2] for i in range(0, len(board), 2)]})
    legal = [{"type": "fold"}, {"type": "call", "min": to_call, "max": to_call}, {"type": "raise", "min": 40, "max": 990}]
    return HoldemBot(FairRandom(b"decide")).choose(view, legal)


@pytest.mark.parametrize(
    "hole, to_call, pot, expected",
    [
        (["Ah", "As"], 10, 30, "raise"),  # very strong: raise
        (["7c", "2d"], 500, 530, "fold"),  # weak facing a big bet: fold
        (["Kh", "Qh"], 10, 30, "call"),  # decent with a cheap call: call (or better)
    ],
)
def test_pot_odds_and_strength(hole, to_call, pot, expected):
    kind = decide(hole, to_call, pot)["type"]
    if expected == "call":
        assert kind in ("call", "raise")
    else:
        assert kind == expected


def test_nuts_on_the_river_raises_all_in_no_limit():
    action = decide(["Ah", "Kh"], 10, 60, board="QhJhTh2c3d")
    assert action == {"type": "raise", "amount": 990}


def test_beats_random_no_limit_heads_up():
    assert win_rate("no_limit_holdem", 60, seed="test") >= 0.6


def test_beats_random_fixed_limit_heads_up():
    assert win_rate("fixed_limit_holdem", 10, seed="test", options={"starting_stacks": 200}) >= 0.7


@pytest.mark.slow
def test_beats_random_over_many_matches():
    assert win_rate("no_limit_holdem", 300, seed="slow") >= 0.6
    assert win_rate("no_limit_holdem", 120, players=6, seed="slow") >= 0.25
    assert win_rate("fixed_limit_holdem", 40, seed="slow") >= 0.8
