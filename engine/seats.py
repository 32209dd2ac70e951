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


def check_seats(seats: Sequence[int], low: int, high: int) -> list[int]:
    """``seats`` sorted, after checking they are ``low``..``high`` distinct seat
    numbers >= 1 (G-1); raises ValueError starting with ``"seats:"`` otherwise
    (the option-error convention of ``Engine.new``).

    >>> check_seats([4, 1, 2], 2, 6)
    [1, 2, 4]
    >>> check_seats([1, 1], 2, 6)
    Traceback (most recent call last):
    ...
    ValueError: seats: need 2..6 distinct seat numbers >= 1
    """
    seat_list = list(seats)
    if (
        not all(type(s) is int and s >= 1 for s in seat_list)
        or len(set(seat_list)) != len(seat_list)
        or not low <= len(seat_list) <= high
    ):
        raise ValueError(f"seats: need {low}..{high} distinct seat numbers >= 1")
    return sorted(seat_list)
