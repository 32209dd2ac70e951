"""Button and blinds from hand to hand (engine.blinds): RULES FL-1, NL-4, TDA 34."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cardhall.engine.blinds
from cardhall.engine.blinds import Positions, first_positions, next_positions


def test_doctests():
    assert doctest.testmod(cardhall.engine.blinds).failed == 0


FIRST_CASES = [
    ([1, 2, 3], 1, Positions(1, 2, 3)),
    ([1, 2, 3], 3, Positions(3, 1, 2)),
    ([2, 5, 9], 9, Positions(9, 2, 5)),
    ([1, 2], 1, Positions(1, 1, 2)),  # heads-up: the button posts the small blind (seed 001)
    ([3, 7], 7, Positions(7, 7, 3)),
]


@pytest.mark.parametrize("alive, button, expected", FIRST_CASES)
def test_FL_1_first_hand(alive, button, expected):
    assert first_positions(alive, button) == expected


def test_first_hand_errors():
    with pytest.raises(ValueError):
        first_positions([1], 1)
    with pytest.raises(ValueError):
        first_positions([1, 2, 3], 4)


NEXT_CASES = [
    # name, seats, previous, alive, expected
    ("nobody out: everything moves one seat", [1, 2, 3, 4], Positions(1, 2, 3), {1, 2, 3, 4}, Positions(2, 3, 4)),
    ("small blind out: dead button", [1, 2, 3, 4], Positions(1, 2, 3), {1, 3, 4}, Positions(2, 3, 4)),
    ("big blind out: dead small blind", [1, 2, 3, 4], Positions(1, 2, 3), {1, 2, 4}, Positions(2, 3, 4)),
    ("next big blind out: the big blind skips to the next seat with chips", [1, 2, 3, 4, 5], Positions(1, 2, 3), {1, 2, 3, 5}, Positions(2, 3, 5)),
    ("button out: nothing changes", [1, 2, 3, 4], Positions(1, 2, 3), {2, 3, 4}, Positions(2, 3, 4)),
    ("heads-up after the big blind busts: the big blind moves on", [1, 2, 3], Positions(1, 2, 3), {1, 2}, Positions(2, 2, 1)),
    ("heads-up after the small blind busts: last big blind is the button", [1, 2, 3], Positions(1, 2, 3), {1, 3}, Positions(3, 3, 1)),
    ("heads-up alternates", [4, 8], Positions(8, 8, 4), {4, 8}, Positions(4, 4, 8)),
]


@pytest.mark.parametrize("name, seats, previous, alive, expected", NEXT_CASES, ids=[c[0] for c in NEXT_CASES])
def test_FL_1_dead_button(name, seats, previous, alive, expected):
    nxt = next_positions(seats, previous, alive)
    assert nxt == expected
    if len(alive) > 2:
        assert nxt.posts_small_blind(alive) == (nxt.small_blind in alive)


def test_order_is_clockwise_from_the_button():
    p = Positions(2, 3, 4)
    assert p.order({1, 3, 4}, [1, 2, 3, 4]) == [3, 4, 1]  # dead button 2: dealt from seat 3
    assert Positions(1, 1, 2).order({1, 2}, [1, 2]) == [2, 1]  # heads-up: big blind first


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 9), st.data())
def test_FL_1_nobody_posts_the_big_blind_twice_in_a_row_or_skips_it(n, data):
    """Over a run of hands with random bust-outs: the big blind goes to the next
    seat with chips each hand, never twice in a row, and while at least three
    play the small blind is last hand's big blind and the button last hand's
    small blind (TDA 34 heads-up)."""
    seats = list(range(1, n + 1))
    alive = set(seats)
    button = data.draw(st.sampled_from(seats))
    pos = first_positions(seats, button)
    for _ in range(3 * n):
        if len(alive) > 2 and data.draw(st.booleans()):
            alive.discard(data.draw(st.sampled_from(sorted(alive))))
        nxt = next_positions(seats, pos, alive)
        assert nxt.big_blind in alive and nxt.big_blind != pos.big_blind
        between = [s for s in seats if s in alive and (s - pos.big_blind) % n < (nxt.big_blind - pos.big_blind) % n and s != pos.big_blind]
        assert between == []  # nobody with chips skipped
        if len(alive) > 2:
            assert (nxt.small_blind, nxt.button) == (pos.big_blind, pos.small_blind)
        else:
            assert nxt.button == nxt.small_blind and nxt.button in alive and nxt.button != nxt.big_blind
        pos = nxt
