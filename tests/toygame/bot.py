"""High Card's own strategy, ``bold``: registered with the game (``GameSpec.bots``).

It bets the most it may with a ten or better and folds anything lower,
deciding only from its seat's view (``card``) and the legal actions.

>>> from cardhall.engine.rng import FairRandom
>>> bot = BoldBot(FairRandom(b"doc"))
>>> legal = [{"type": "bet", "min": 1, "max": 5}, {"type": "fold"}]
>>> bot.choose({"card": "Qs"}, legal), bot.choose({"card": "4d"}, legal)
({'type': 'bet', 'amount': 5}, {'type': 'fold'})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cardhall.engine.bots.base import Bot, Data
from cardhall.engine.cards import RANKS


class BoldBot(Bot):
    """Bet the maximum with T or better, else fold."""

    name = "bold"

    def choose(self, view: Mapping[str, Any], legal: Sequence[Data]) -> Data:
        bet = next((a for a in legal if a["type"] == "bet"), None)
        card = view.get("card")
        if bet is not None and card and RANKS.index(card[0]) >= RANKS.index("T"):
            return {"type": "bet", "amount": bet["max"]}
        return {"type": "fold"}
