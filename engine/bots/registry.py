"""Bot names -> bot classes, per game.

Every game has ``random`` (the baseline) and its own strategy, which is the
game's default bot (``DEFAULT[game]``).
"""

from __future__ import annotations

import importlib

from cardhall.engine.bots.base import Bot
from cardhall.engine.rng import FairRandom

#: game -> bot name -> "module:Class"
BOTS: dict[str, dict[str, str]] = {
    "fixed_limit_holdem": {"equity": "cardhall.engine.bots.holdem:HoldemBot"},
    "no_limit_holdem": {"equity": "cardhall.engine.bots.holdem:HoldemBot"},
    "alamo": {"equity": "cardhall.engine.bots.alamo:AlamoBot"},
    "loco_poker": {"threshold": "cardhall.engine.bots.loco_poker:LocoBot"},
    "avalanche": {"heuristic": "cardhall.engine.bots.avalanche:AvalancheBot"},
}
for _names in BOTS.values():
    _names["random"] = "cardhall.engine.bots.random_bot:RandomBot"

#: game -> the strategy seated by default (solo play, NL-5).
DEFAULT: dict[str, str] = {
    "fixed_limit_holdem": "equity",
    "no_limit_holdem": "equity",
    "alamo": "equity",
    "loco_poker": "threshold",
    "avalanche": "heuristic",
}


def bot_names(game: str) -> list[str]:
    """The bot names available for ``game``; KeyError for an unknown game."""
    return sorted(BOTS[game])


def make_bot(game: str, name: str | None, rng: FairRandom) -> Bot:
    """A bot for ``game`` (``name`` None: the game's default); raises KeyError
    for an unknown game or bot name."""
    name = name or DEFAULT[game]
    module, _, cls = BOTS[game][name].partition(":")
    return getattr(importlib.import_module(module), cls)(rng)
