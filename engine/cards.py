"""Cards and decks as plain two-character strings.

A card is ``rank + suit``: rank one of ``23456789TJQKA``, suit one of ``cdhs``
(``"Ah"``, ``"Td"``), the notation of the PHH standard. A joker is ``"Xr"``
(red) or ``"Xb"`` (black). Strings keep the engine state plain data that
msgpack and JSON carry as is.

>>> standard_deck()[:3]
['2c', '3c', '4c']
>>> len(standard_deck(jokers=2)), len(multi_deck(2, jokers=6))
(54, 110)
>>> rank_value("Th"), rank_value("Xr")
(10, 15)
"""

from __future__ import annotations

RANKS = "23456789TJQKA"
SUITS = "cdhs"
JOKER_RANK = "X"
JOKERS = ("Xr", "Xb")

#: rank character -> numeric value: 2..14 for deuce..ace, 15 for a joker.
RANK_VALUES: dict[str, int] = {r: i + 2 for i, r in enumerate(RANKS)} | {JOKER_RANK: 15}


class CardError(ValueError):
    """A string that is not a card in this notation."""


def is_joker(card: str) -> bool:
    """True for ``"Xr"`` and ``"Xb"``."""
    return card[0] == JOKER_RANK


def rank_value(card: str) -> int:
    """Numeric rank of ``card``: 2..14 (ace high), 15 for a joker."""
    return RANK_VALUES[card[0]]


def validate(card: str) -> str:
    """Return ``card`` if it is well formed; raise :class:`CardError` otherwise."""
    if not isinstance(card, str) or len(card) != 2:
        raise CardError(f"not a card: {card!r}")
    if card in JOKERS or (card[0] in RANKS and card[1] in SUITS):
        return card
    raise CardError(f"not a card: {card!r}")


def parse_cards(text: str) -> list[str]:
    """Split a run of cards such as ``"AhKd"`` or ``"Ah Kd"`` into ``["Ah", "Kd"]``.

    Raises :class:`CardError` on anything that is not a card. ``"??"`` (an
    unknown card in PHH) is returned as is.
    """
    compact = "".join(text.split())
    if len(compact) % 2:
        raise CardError(f"odd number of characters in {text!r}")
    out = []
    for i in range(0, len(compact), 2):
        card = compact[i : i + 2]
        out.append(card if card == "??" else validate(card))
    return out


def standard_deck(jokers: int = 0) -> list[str]:
    """One 52-card deck in canonical order (clubs, diamonds, hearts, spades; 2..A
    within a suit), then ``jokers`` jokers alternating red and black.

    The canonical order is the starting point of every shuffle (protocol
    reference, "Randomness"), so it must never change.
    """
    deck = [r + s for s in SUITS for r in RANKS]
    deck.extend(JOKERS[i % 2] for i in range(jokers))
    return deck


def multi_deck(decks: int, jokers: int) -> list[str]:
    """``decks`` standard decks, then ``jokers`` jokers (Avalanche, RULES AV-1).

    Cards repeat across decks; engines that use several decks count cards as a
    multiset.
    """
    out: list[str] = []
    for _ in range(decks):
        out.extend(standard_deck())
    out.extend(JOKERS[i % 2] for i in range(jokers))
    return out
