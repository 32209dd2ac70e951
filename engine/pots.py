"""Pots and side pots by contribution level (RULES FL-6, AL-4).

Amounts are integers: chips for Hold'em and Loco Poker, cards for Alamo.

>>> side_pots({1: 300, 2: 1000, 3: 1000}, live={1, 2, 3})
[Pot(amount=900, eligible=(1, 2, 3)), Pot(amount=1400, eligible=(2, 3))]
>>> side_pots({1: 50, 2: 150, 3: 100}, live={1, 2, 3})  # seed 004: B's unmatched 50 is a pot B alone can win
[Pot(amount=150, eligible=(1, 2, 3)), Pot(amount=100, eligible=(2, 3)), Pot(amount=50, eligible=(2,))]
>>> split(7, [3, 1], odd_chip_order=[1, 3])
{1: 4, 3: 3}
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import NamedTuple


class Pot(NamedTuple):
    """One pot: ``amount`` (chips or cards) and the seats that may win it."""

    amount: int
    eligible: tuple[int, ...]


def side_pots(contributions: Mapping[int, int], live: Collection[int]) -> list[Pot]:
    """Split the hand's contributions into the main pot and side pots.

    ``contributions``: seat -> everything it put in this hand (antes, blinds,
    bets), folded seats included. ``live``: seats still in the hand. Each level
    of contribution among live seats closes a pot; chips of folded seats count
    in every level they reach (FL-6). A pot whose eligible set would be empty
    (everyone at that level folded) joins the previous pot. Uncalled excess is
    not returned here: callers return it before (seed 001 "Side pots").
    """
    paid = [c for c in contributions.values() if c > 0]
    contenders = sorted([s for s in live if contributions.get(s, 0) > 0])  # eligible at the first level
    return _level_pots(paid, contenders, contributions.__getitem__, live)


def index_pots(contrib: list[int], live: list[int]) -> list[Pot]:
    """:func:`side_pots` for contributions indexed by player (``contrib[i]``;
    ``live``: player indices in ascending order): exactly
    ``side_pots(dict(enumerate(contrib)), live)``, without building the map."""
    return _level_pots([c for c in contrib if c > 0], [i for i in live if contrib[i] > 0], contrib.__getitem__, live)


def _level_pots(paid: list[int], contenders: list[int], amount_of: Callable[[int], int],
                live: Collection[int]) -> list[Pot]:
    """The pots of :func:`side_pots`: ``paid`` every positive contribution,
    ``contenders`` the live seats that paid (ascending), ``amount_of(seat)``
    what a contender paid."""
    levels = sorted({amount_of(s) for s in contenders})
    if len(levels) == 1:  # every contender put in the same: one pot holds everything
        return [Pot(sum(paid), tuple(contenders))]
    pots: list[Pot] = []
    previous = 0
    for level in levels:
        # each contribution above the previous level pays into this pot, up to this level
        amount = sum([(c if c < level else level) - previous for c in paid if c > previous])
        if amount:
            pots.append(Pot(amount, tuple([s for s in contenders if amount_of(s) >= level])))
        previous = level
    leftover = sum([c - previous for c in paid if c > previous])
    if leftover:
        if pots:
            last = pots[-1]
            pots[-1] = Pot(last.amount + leftover, last.eligible)
        else:
            pots.append(Pot(leftover, tuple(sorted(live))))
    return pots


def split(amount: int, winners: Iterable[int], odd_chip_order: Iterable[int]) -> dict[int, int]:
    """Share ``amount`` evenly among ``winners``; odd units go one each to the
    winners in ``odd_chip_order`` (FL-7: lowest seat first; G-6: first left of
    the button). Seats of the order that did not win are skipped.
    """
    winners = set(winners)
    if not winners:
        raise ValueError("split needs at least one winner")
    share, odd = divmod(amount, len(winners))
    out = {s: share for s in winners}
    for seat in odd_chip_order:
        if odd == 0:
            break
        if seat in winners:
            out[seat] += 1
            odd -= 1
    if odd:
        raise ValueError("odd_chip_order must list every winner")
    return out
