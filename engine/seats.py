"""Seat arithmetic (RULES G-1): seats are numbered 1..N clockwise.

>>> clockwise([1, 2, 4, 6], after=4)
[6, 1, 2, 4]
>>> next_seat([1, 2, 4, 6], after=6, eligible={2, 4})
2
"""

from __future__ import annotations

from collections.abc import Collection, Sequence


def clockwise(seats: Sequence[int], after: int) -> list[int]:
    """``seats`` (sorted, numbers 1..N) in clockwise order starting left of ``after``.

    ``after`` itself comes last if it is a seat; it need not be occupied (a dead
    button).
    """
    ordered = sorted(seats)
    later = [s for s in ordered if s > after]
    earlier = [s for s in ordered if s <= after]
    return later + earlier


def next_seat(seats: Sequence[int], after: int, eligible: Collection[int] | None = None) -> int:
    """The first seat left of ``after`` (clockwise) that is in ``eligible``
    (every seat when None). Raises ValueError when there is none."""
    for seat in clockwise(seats, after):
        if eligible is None or seat in eligible:
            return seat
    raise ValueError("no eligible seat")
