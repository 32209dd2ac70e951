"""The ``heuristic`` Avalanche bot.

The game is a hot potato (seed 003, RULES AV-2..AV-4): a fall hands the whole
avalanche to the player who made the previous play, so you want to be that
player. Every play is scored one move ahead:

* **grow / start**: the next player to act (the next seat holding cards,
  AV-4/AV-5) falls onto you when it holds nothing that grows or stops your
  play: for a play of ``m >= 2`` cards that means no group of ``m`` cards of
  any rank; for one card of rank ``s``, no card of rank ``>= s`` and no pair.
  The bot estimates that chance from the unseen cards (the full deck minus its
  hand and the avalanche) spread over the next player's hand size, and expects
  ``chance * (avalanche + m + 1)`` cards.
* **stop**: the avalanche goes to the neutral pile; nobody gains.
* **fall**: the previous player gains the avalanche and the falling cards;
  weighted by how much that player threatens the lead.

Every play also costs the cards it spends: high ranks, jokers and sets are worth
keeping to grow later; cards are cheap while the deck is large (an empty hand is
refilled with ten, AV-5) and dear when it is empty (the last player holding
cards stores them, AV-6). With no avalanche in progress the bot snowfalls
unless a start is worth more than a card from the deck.

The bot sees only what its seat sees (``Engine.view(seat)`` and the legal
actions as plain data), as :mod:`cardhall.engine.bots.base` requires.

Benchmark: :func:`cardhall.engine.play.win_rate` (``cardhall bench engine`` prints it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from math import comb
from typing import Any

from cardhall.engine.base import Data
from cardhall.engine.bots.base import Bot
from cardhall.engine.cards import JOKER_RANK, RANK_VALUES, RANKS
from cardhall.engine.games.avalanche import JOKERS_PER_DECK, outcome
from cardhall.engine.seats import next_seat

#: Value of one card from a snowfall, in cards of stored pile (tuned against ``random``).
SNOWFALL_VALUE = 1.0
#: Rival-gain weight when the previous player is (or would become) the leader, else.
LEADER_WEIGHT, RIVAL_WEIGHT = 1.0, 0.7


def _below(u: int, q: float, k: int) -> float:
    """P(Binomial(u, q) < k): the chance a hand holds fewer than ``k`` of ``u`` unseen cards."""
    if k <= 0:
        return 0.0
    if k > u:
        return 1.0
    return sum(comb(u, j) * q**j * (1 - q) ** (u - j) for j in range(k))


def fall_chance(count: int, rank: str, unseen: Mapping[str, int], hand_size: int) -> float:
    """Chance that a player holding ``hand_size`` of the ``unseen`` cards (rank ->
    count) can neither grow nor stop a play of ``count`` cards of ``rank``, so
    must let it fall (AV-2). Ranks are treated as independent."""
    total = sum(unseen.values())
    if total <= 0 or hand_size <= 0:
        return 1.0
    q = min(1.0, hand_size / total)
    chance = 1.0
    value = RANK_VALUES[rank]
    for r, u in unseen.items():
        need = count if count >= 2 else (1 if RANK_VALUES[r] >= value else 2)
        chance *= _below(u, q, need)
    return chance


class AvalancheBot(Bot):
    """One-move-ahead heuristic (module docstring); deterministic given the view."""

    name = "heuristic"

    def choose(self, view: Mapping[str, Any], legal: Sequence[Data]) -> Data:
        me: int = view["to_act"]
        hand: list[str] = view["hand"]
        groups: dict[str, int] = {}
        can_snowfall = False
        for option in legal:
            if option["type"] == "play":
                groups = dict(option["groups"])
            elif option["type"] == "snowfall":
                can_snowfall = True
        sizes = {int(s): n for s, n in view["hand_sizes"].items()}
        holders = {s for s, n in sizes.items() if n > 0 and s != me}
        nxt = next_seat(view["seats"], after=me, eligible=holders) if holders else None
        unseen = self._unseen(view, hand)
        pile = sum(p["count"] for p in view["avalanche"])
        prev = view["avalanche"][-1] if view["avalanche"] else None
        scarcity = 1.0 - min(view["deck"], 40) / 40  # 0 with a big deck, 1 when empty
        stored = {int(s): n for s, n in view["stored"].items()}

        # candidates: (score, tie-break) -> action; ties prefer fewer, lower cards
        candidates: list[tuple[float, int, int, Data]] = []
        if can_snowfall:
            candidates.append((SNOWFALL_VALUE + 0.3 * scarcity, 0, 0, {"type": "snowfall"}))
        for rank, held in groups.items():
            for count in range(1, held + 1):
                what = "start" if prev is None else outcome(prev["count"], prev["rank"], count, rank)
                if what in ("start", "grow"):
                    chance = fall_chance(count, rank, unseen, sizes[nxt]) if nxt is not None else 0.0
                    gain = chance * (pile + count + 1)
                elif what == "stop":
                    gain = 0.0
                else:
                    assert prev is not None
                    gain = -self._weight(prev["seat"], stored, me, pile + count) * (pile + count)
                score = gain - self._cost(groups, rank, count, scarcity)
                action = {"type": "play", "rank": rank, "count": count}
                candidates.append((score, -count, -RANK_VALUES[rank], action))
        return max(candidates, key=lambda c: c[:3])[3]

    @staticmethod
    def _unseen(view: Mapping[str, Any], hand: Sequence[str]) -> dict[str, int]:
        """Rank -> cards of that rank the bot has not seen (deck, other hands and piles)."""
        decks = view["decks"]
        unseen = {r: 4 * decks for r in RANKS}
        unseen[JOKER_RANK] = JOKERS_PER_DECK * decks
        seen = Counter(c[0] for c in hand)
        for play in view["avalanche"]:
            seen[play["rank"]] += play["count"]
        return {r: max(0, n - seen[r]) for r, n in unseen.items()}

    @staticmethod
    def _cost(groups: Mapping[str, int], rank: str, count: int, scarcity: float) -> float:
        """What spending ``count`` cards of ``rank`` costs the hand: each card is
        worth more the higher its rank and the larger its group, and all cards
        more as the deck runs out."""
        frac = (RANK_VALUES[rank] - 2) / 13
        per_card = 0.15 + 0.35 * frac + 0.5 * scarcity
        left = groups[rank] - count
        broken = 0.25 * count if left else 0.0  # splitting a set loses a future multi-card play
        return count * per_card + broken

    @staticmethod
    def _weight(prev: int, stored: Mapping[int, int], me: int, gift: int) -> float:
        """How much a gift to ``prev`` hurts: fully if it makes ``prev`` the leader."""
        others = [n for s, n in stored.items() if s != me and s != prev]
        if not others or stored.get(prev, 0) + gift >= max(others + [stored.get(me, 0)]):
            return LEADER_WEIGHT
        return RIVAL_WEIGHT
