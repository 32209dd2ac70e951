"""Poker hand ranking through the eval7 library.

eval7 evaluates 5, 6 or 7 cards to an integer, higher is better, and names
the category. This module converts our card strings once (cached) and adds
nothing of its own but the hand-name table. Wild jokers (Alamo, RULES AL-2)
wrap this module in ``cardhall.engine.games.alamo``; they are not ranked here.

>>> hand_value(["Ah", "2c", "3d", "4s", "5c", "9s", "Kd"]) > hand_value(["9s", "9d", "3d", "4s", "5c", "Kd", "2h"])
True
>>> hand_name(hand_value(["Ah", "Kh", "Qh", "Jh", "Th"]))
'Straight Flush'
"""

from __future__ import annotations

from collections.abc import Sequence

import eval7

_CARD = {r + s: eval7.Card(r + s) for r in "23456789TJQKA" for s in "cdhs"}


def hand_value(cards: Sequence[str]) -> int:
    """Strength of the best five of ``cards`` (5 to 7 jokerless cards); higher wins.

    Raises KeyError for a joker or a malformed card.
    """
    card = _CARD
    return eval7.evaluate([card[c] for c in cards])


def hand_name(value: int) -> str:
    """Category of a :func:`hand_value` result: ``"Pair"``, ``"Flush"``, ...."""
    return eval7.handtype(value)


def eval7_cards(cards: Sequence[str]) -> list[eval7.Card]:
    """The cached eval7 objects for ``cards`` (for equity loops that call eval7 directly)."""
    return [_CARD[c] for c in cards]
