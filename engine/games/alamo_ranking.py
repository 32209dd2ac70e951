"""Alamo hand ranking with wild jokers (RULES AL-2): a small wrapper over eval7.

A joker (``"Xr"``, ``"Xb"``) is wild: it stands for any card not already among
the player's cards (two jokers stand for two different cards). In addition,
four of a rank plus a joker, or three of a rank plus two jokers, make **five of
a kind**, which ranks above a straight flush; a higher rank beats a lower one.

Values are eval7's integers (:func:`cardhall.engine.ranking.hand_value`, higher wins),
so jokerless hands rank exactly as in Hold'em; five of a kind is
``FIVE_OF_A_KIND + rank`` (rank 2..14), above every eval7 value (eval7 keeps the
category in bits 24 and up; straight flush is category 8).

How the best substitution is found without trying all 52 cards per joker:
for a given rank, every suit that is not the *flush suit* plays the same (a
joker can only help a flush in a suit already holding at least ``5 - jokers``
of the player's other cards, and with at most 7 cards that suit is unique), and
the flush-suit card of a rank, when the player does not hold it, is at least as
good as any other card of that rank. So each joker needs at most one candidate
per rank: 13 evaluations for one joker, 91 for two (unordered rank pairs).

>>> hand_value(["As", "Ks", "Qs", "Js", "Xr", "2c", "3d"]) == hand_value(["As", "Ks", "Qs", "Js", "Ts"])
True
>>> hand_name(hand_value(["Ah", "Ad", "Ac", "As", "Xb"]))
'Five of a Kind'
>>> hand_value(["2h", "2d", "2c", "Xr", "Xb"]) > hand_value(["As", "Ks", "Qs", "Js", "Ts"])
True
>>> hand_name(hand_value(["Xr", "Xb", "As", "Ad", "7c", "8d", "2h"]))
'Quads'
"""

from __future__ import annotations

from collections.abc import Sequence

import eval7

from cardhall.engine.cards import RANKS, SUITS, is_joker, rank_value
from cardhall.engine.ranking import eval7_cards
from cardhall.engine.ranking import hand_name as _eval7_name

#: Category base of five of a kind: above eval7's straight flush (category 8).
FIVE_OF_A_KIND = 9 << 24

_EVAL7 = {r + s: c for r in RANKS for s in SUITS for c in eval7_cards([r + s])}


def hand_value(cards: Sequence[str]) -> int:
    """Strength of the best five of ``cards`` (5 to 7 cards, jokers wild, AL-2); higher wins.

    Raises KeyError for a malformed card and ValueError for fewer than 5 cards
    or more than two jokers.
    """
    if len(cards) < 5:
        raise ValueError(f"a hand needs at least 5 cards, got {len(cards)}")
    jokers = 0
    plain: list[str] = []
    for card in cards:
        if is_joker(card):
            jokers += 1
        else:
            plain.append(card)
    if not jokers:
        return eval7.evaluate([_EVAL7[c] for c in plain])
    return wild_value(plain, jokers)


def wild_value(plain: Sequence[str], jokers: int) -> int:
    """Value of ``plain`` (jokerless cards) plus ``jokers`` (1 or 2) wild jokers, AL-2.

    ``len(plain) + jokers`` must be 5 to 7.
    """
    if jokers not in (1, 2):
        raise ValueError(f"Alamo hands hold 1 or 2 jokers, got {jokers}")
    counts: dict[str, int] = {}
    suits: dict[str, int] = {}
    for card in plain:
        counts[card[0]] = counts.get(card[0], 0) + 1
        suits[card[1]] = suits.get(card[1], 0) + 1
    five = [rank_value(r + "c") for r, n in counts.items() if n + jokers >= 5]
    if five:
        return FIVE_OF_A_KIND + max(five)
    held = set(plain)
    flush = next((s for s, n in suits.items() if n >= 5 - jokers), None)
    order = (flush, *SUITS) if flush else SUITS
    base = [_EVAL7[c] for c in plain]
    evaluate = eval7.evaluate
    # per rank, the best candidates in order: the flush-suit card first
    per_rank: list[list[eval7.Card]] = []
    for r in RANKS:
        options: list[eval7.Card] = []
        for s in order:
            card = r + s
            if card not in held:
                c = _EVAL7[card]
                if c not in options:
                    options.append(c)
                    if len(options) == jokers:
                        break
        per_rank.append(options)
    best = 0
    if jokers == 1:
        for options in per_rank:
            if options:
                value = evaluate(base + options)
                if value > best:
                    best = value
        return best
    for i, first in enumerate(per_rank):
        if not first:
            continue
        if len(first) == 2:
            value = evaluate(base + first)
            if value > best:
                best = value
        head = base + first[:1]
        for second in per_rank[i + 1 :]:
            if second:
                value = evaluate(head + second[:1])
                if value > best:
                    best = value
    return best


def hand_name(value: int) -> str:
    """Category of a :func:`hand_value` result: ``"Five of a Kind"``, ``"Straight Flush"``, ..."""
    if value >= FIVE_OF_A_KIND:
        return "Five of a Kind"
    return _eval7_name(value)
