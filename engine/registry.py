"""Game names (protocol v1) -> engine classes.

>>> sorted(GAMES)
['alamo', 'avalanche', 'fixed_limit_holdem', 'loco_poker', 'no_limit_holdem']
"""

from __future__ import annotations

import importlib

from cardhall.engine.base import Engine

#: protocol game name -> "module:Class"; imported on first use.
GAMES: dict[str, str] = {
    "fixed_limit_holdem": "cardhall.engine.games.fixed_limit_holdem:FixedLimitHoldem",
    "no_limit_holdem": "cardhall.engine.games.no_limit_holdem:NoLimitHoldem",
    "alamo": "cardhall.engine.games.alamo:Alamo",
    "loco_poker": "cardhall.engine.games.loco_poker:LocoPoker",
    "avalanche": "cardhall.engine.games.avalanche:Avalanche",
}


def engine_class(game: str) -> type[Engine]:
    """The engine class for ``game``; raises KeyError for an unknown game."""
    module, _, name = GAMES[game].partition(":")
    return getattr(importlib.import_module(module), name)
