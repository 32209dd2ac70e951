"""The Alamo ``equity`` bot: hand strength by Monte Carlo equity, pot odds in cards.

The bot sees only what its seat sees (``Alamo.view(seat)`` and the legal
actions as plain data): its hole cards, the board, how many cards each stack,
the pot and its face-down part hold. Every card it has not seen (the deck minus
its hole cards, the board and hands shown) is equally likely to be anywhere:
in an opponent's hand, face down in the pot, or in a stack. So its equity is a
Monte Carlo over those unseen cards: random hands for the opponents still in,
and as many more board cards as the pot can still turn (AL-6: at most the
face-down cards left, and five in all), ranked with wild jokers through
:mod:`engine.games.alamo_ranking` (AL-2).

Policy (amounts in cards, raise-to totals, AL-5):
- facing a bet: fold when equity is below the pot odds ``to_call / (pot +
  to_call)`` (with a small margin; the pot counted without the part of a bet
  this seat cannot match, which goes back to its owner), raise with a strong
  hand, else call;
- unopened: bet about half the pot to the pot with a good hand (more with a
  very strong one), else check.
"Good" and "strong" are measured against the fair share ``1 / (opponents + 1)``.

Measured against the ``random`` bot by :func:`engine.play.win_rate` (``cardhall bench engine``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import eval7

from engine.bots.base import Bot, Data
from engine.cards import standard_deck
from engine.games.alamo_ranking import wild_value
from engine.ranking import eval7_cards
from engine.rng import FairRandom

SAMPLES = 300
_EVAL7 = dict(zip(standard_deck(), eval7_cards(standard_deck())))


def _value(cards: Sequence[str]) -> int:
    """Hand value with wild jokers; the jokerless case goes straight to eval7."""
    plain = [c for c in cards if c[0] != "X"]
    if len(plain) == len(cards):
        return eval7.evaluate([_EVAL7[c] for c in plain])
    return wild_value(plain, len(cards) - len(plain))


def alamo_equity(
    hole: Sequence[str],
    board: Sequence[str],
    opponents: int,
    to_come: int,
    samples: int,
    rng: FairRandom,
    unseen: Sequence[str],
) -> float:
    """Monte Carlo showdown share of ``hole`` in ``[0, 1]`` (ties count 1/k).

    ``board``: the board so far (3 to 5 cards, or none preflop); ``to_come``:
    board cards still to turn (``len(board) + to_come`` must reach 3 and be at
    most 5); ``opponents``: random hands against us (0 gives 1.0); ``unseen``:
    the cards those hands and the rest of the board come from (may hold
    jokers: AL-2). Raises ValueError when ``unseen`` is too small.
    """
    if opponents <= 0:
        return 1.0
    need = to_come + 2 * opponents
    pool = list(unseen)
    n = len(pool)
    if need > n:
        raise ValueError(f"{need} unseen cards needed, {n} left")
    if len(board) + to_come + len(hole) < 5:
        raise ValueError("a showdown needs at least five cards per player")
    mine_fixed = list(hole) + list(board)
    if any(c[0] == "X" for c in pool) or any(c[0] == "X" for c in mine_fixed):
        cards: list[Any] = pool
        hero: list[Any] = mine_fixed
        shown: list[Any] = list(board)
        evaluate: Any = _value  # wild jokers (AL-2)
    else:  # the common case: eval7 objects straight into eval7
        cards = [_EVAL7[c] for c in pool]
        hero = [_EVAL7[c] for c in mine_fixed]
        shown = [_EVAL7[c] for c in board]
        evaluate = eval7.evaluate
    randbelow = rng.randbelow
    total = 0.0
    for _ in range(samples):
        # partial Fisher-Yates: cards[:need] becomes a uniform random draw
        for i in range(need):
            j = i + randbelow(n - i)
            cards[i], cards[j] = cards[j], cards[i]
        extra = cards[:to_come]
        mine = evaluate(hero + extra)
        full = shown + extra
        best, ties, k = 0, 1, to_come
        for _opp in range(opponents):
            value = evaluate(cards[k : k + 2] + full)
            k += 2
            if value > best:
                best, ties = value, 1
            elif value == best:
                ties += 1
        total += 1.0 if mine > best else (1.0 / (ties + 1) if mine == best else 0.0)
    return total / samples


class AlamoBot(Bot):
    """Equity and pot odds in cards (see the module docstring)."""

    name = "equity"
    samples = SAMPLES

    def estimate(self, view: Data) -> tuple[float, int]:
        """``(equity, opponents)`` for the seat whose ``view`` this is."""
        hole = list(view["my_cards"])
        board = list(view["board"])
        folded = set(view["folded"])
        opponents = sum(1 for s in view["players"] if s not in folded) - 1
        shown = [c for cards in view.get("shown", {}).values() for c in cards if c not in hole]
        deck = standard_deck(2 if view["options"].get("jokers") else 0)
        seen = set(hole) | set(board) | set(shown)
        unseen = [c for c in deck if c not in seen]
        # AL-6: the board grows only while face-down pot cards remain; a flop always comes
        to_come = min(5 - len(board), max(view["face_down"], 3 - len(board)))
        # hands already shown are known: count them exactly, the rest at random
        known = [cards for seat, cards in view.get("shown", {}).items() if list(cards) != hole]
        if known:
            return self._against_known(hole, board, known, opponents - len(known), to_come, unseen), opponents
        return alamo_equity(hole, board, opponents, to_come, self.samples, self.rng, unseen), opponents

    def _against_known(
        self, hole: list[str], board: list[str], known: list[Any], random_opps: int, to_come: int, unseen: list[str]
    ) -> float:
        total = 0.0
        pool = list(unseen)
        n = len(pool)
        need = to_come + 2 * max(random_opps, 0)
        for _ in range(self.samples):
            for i in range(min(need, n)):
                j = i + self.rng.randbelow(n - i)
                pool[i], pool[j] = pool[j], pool[i]
            full = board + pool[:to_come]
            mine = _value(hole + full)
            others = [_value(list(cards) + full) for cards in known]
            k = to_come
            for _opp in range(max(random_opps, 0)):
                others.append(_value(pool[k : k + 2] + full))
                k += 2
            best = max(others)
            if mine > best:
                total += 1.0
            elif mine == best:
                total += 1.0 / (others.count(best) + 1)
        return total / self.samples

    #: equity margin over the pot odds before calling
    margin = 0.03
    #: least equity for a call that risks half the stack or more (0: pot odds alone;
    #: measured against ``random``, any higher value loses more matches than it saves)
    big_call = 0.0
    #: bet or raise size as a share of the pot (after calling) with a good / a strong hand
    good_fraction = 0.6
    strong_fraction = 1.0

    def call_threshold(self, view: Data, to_call: int) -> float:
        """Least equity to call ``to_call`` cards: the pot odds against what can
        actually be won (bets above what this seat can match come back to
        their owner, AL-4), plus :attr:`margin`; at least :attr:`big_call` when
        the call risks half the stack or more."""
        me = str(view["seat"])
        bets = view.get("bets") or {}
        stack = view["stacks"][me]
        reach = bets.get(me, 0) + stack
        excess = sum(max(0, b - reach) for s, b in bets.items() if s != me)
        winnable = view["pot"] - excess
        need = to_call / (winnable + to_call) + self.margin
        if to_call * 2 >= stack:
            need = max(need, self.big_call)
        return need

    def choose(self, view: Data, legal: Sequence[Data]) -> Data:
        by_type = {a["type"]: a for a in legal}
        equity, opponents = self.estimate(view)
        fair = 1.0 / (opponents + 1)
        pot = view["pot"]
        call = by_type.get("call")
        to_call = call["min"] if call else 0
        aggressive = by_type.get("raise") or by_type.get("bet")
        strong = equity >= min(0.92, fair + 0.35)
        good = equity >= min(0.85, fair + 0.2)
        if aggressive and (strong or (good and not to_call)):
            fraction = self.strong_fraction if strong else self.good_fraction
            current = max(view["bets"].values(), default=0) if view.get("bets") else 0
            target = current + int(fraction * (pot + to_call)) if to_call else int(fraction * pot)
            amount = max(aggressive["min"], min(aggressive["max"], max(target, 1)))
            return {"type": aggressive["type"], "amount": amount}
        if not to_call:
            return {"type": "check"}
        if equity >= self.call_threshold(view, to_call):
            if call:
                return {"type": "call"}
            if "all_in" in by_type:
                return {"type": "all_in"}
        return {"type": "fold"} if "fold" in by_type else {"type": legal[0]["type"]}
