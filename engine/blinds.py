"""Button and blinds from hand to hand: the dead-button rule (RULES FL-1, NL-4).

Positions are seat numbers (G-1). Within a match (TDA dead button, FL-1):

* the big blind moves to the next seat clockwise that still has chips;
* the small blind is the seat that had the big blind last hand; if that player
  is out, nobody posts a small blind that hand (a dead small blind);
* the button is the seat that had the small blind last hand, even if it is now
  empty (a dead button);
* heads-up (this overrides the dead small blind) the button posts the small
  blind and the other player the big blind; the big blind still moves to the
  next seat with chips, so when play becomes heads-up nobody posts the big
  blind twice in a row (TDA 34), and nobody skips it.

>>> p = first_positions([1, 2, 3, 4], button=1); p
Positions(button=1, small_blind=2, big_blind=3)
>>> p = next_positions([1, 2, 3, 4], p, alive={1, 2, 4}); p   # seat 3 busted
Positions(button=2, small_blind=3, big_blind=4)
>>> p.posts_small_blind({1, 2, 4})   # dead small blind: seat 3 is out
False
>>> next_positions([1, 2, 3, 4], p, alive={1, 4})             # heads-up now
Positions(button=4, small_blind=4, big_blind=1)
>>> first_positions([2, 5], button=5)                         # heads-up: button posts the small blind
Positions(button=5, small_blind=5, big_blind=2)
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from cardhall.engine.seats import clockwise, next_seat


class Positions(NamedTuple):
    """One hand's positions, as seat numbers.

    ``button``: the button seat (may be empty or out: a dead button).
    ``small_blind``: the small-blind position (may be a seat that is out: a
    dead small blind; see :meth:`posts_small_blind`); heads-up it is the button.
    ``big_blind``: the seat posting the big blind (always a seat with chips).
    """

    button: int
    small_blind: int
    big_blind: int

    def posts_small_blind(self, alive: Collection[int]) -> bool:
        """Whether the small-blind position holds a player with chips."""
        return self.small_blind in alive

    def order(self, alive: Collection[int], seats: Sequence[int]) -> list[int]:
        """The seats dealt in, clockwise from the first left of the button
        (the button, if dealt in, last): the PHH player order p1..pn."""
        return [s for s in clockwise(seats, after=self.button) if s in alive]


def first_positions(alive: Sequence[int], button: int) -> Positions:
    """The first hand of a match: ``button`` (a seat of ``alive``) holds the
    button; heads-up it posts the small blind (FL seed "Blinds"), otherwise the
    next two seats post. Raises ValueError with fewer than two players or a
    button that is not a player."""
    seats = sorted(alive)
    if len(seats) < 2:
        raise ValueError("blinds need at least two players")
    if button not in seats:
        raise ValueError(f"button {button} is not a seat with chips")
    if len(seats) == 2:
        return Positions(button, button, next_seat(seats, after=button))
    small = next_seat(seats, after=button)
    return Positions(button, small, next_seat(seats, after=small))


def next_positions(seats: Sequence[int], previous: Positions, alive: Collection[int]) -> Positions:
    """The next hand's positions after ``previous`` (dead button, FL-1).

    ``seats``: every seat of the match (sorted or not); ``alive``: the seats
    that still have chips (at least two). Raises ValueError otherwise.
    """
    live = [s for s in sorted(seats) if s in alive]
    if len(live) < 2:
        raise ValueError("blinds need at least two players")
    big = next_seat(sorted(seats), after=previous.big_blind, eligible=alive)
    if len(live) == 2:
        button = live[0] if live[1] == big else live[1]
        return Positions(button, button, big)
    return Positions(previous.small_blind, previous.big_blind, big)
