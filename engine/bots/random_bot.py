"""The ``random`` bot: the baseline every game's strategy is measured against.

It picks one of the legal actions uniformly, then an amount uniformly in
``[min, max]`` where the action takes one. For Avalanche's ``play`` (legal
action data carrying ``groups``: rank -> cards of that rank in hand) it picks
a rank uniformly, then a count uniformly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cardhall.engine.bots.base import Bot, Data


class RandomBot(Bot):
    """Uniformly random legal moves (a baseline, not a strategy)."""

    name = "random"

    def choose(self, view: Mapping[str, Any], legal: Sequence[Data]) -> Data:
        option = legal[self.rng.randbelow(len(legal))]
        action: Data = {"type": option["type"]}
        if "groups" in option:
            ranks = sorted(option["groups"])
            rank = ranks[self.rng.randbelow(len(ranks))]
            action["rank"] = rank
            action["count"] = 1 + self.rng.randbelow(option["groups"][rank])
        elif option.get("min") is not None and option.get("max") is not None and option["type"] != "call":
            low, high = option["min"], option["max"]
            action["amount"] = low + self.rng.randbelow(high - low + 1)
        return action
