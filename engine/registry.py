"""Game names (protocol v1) -> engine classes, from the discovered games.

:data:`GAMES` is a live, read-only view of :func:`cardhall.engine.plugins.games`
(name -> :class:`~cardhall.engine.plugins.GameSpec`, in catalogue order): a game
registered later (an entry point, ``CARDHALL_GAMES``, ``plugins.register``) is
in it at once. Nothing here lists games: each game module declares itself
(``GAME``, see :mod:`cardhall.engine.plugins`).

>>> sorted(GAMES)
['alamo', 'avalanche', 'fixed_limit_holdem', 'loco_poker', 'no_limit_holdem']
>>> "loco_poker" in GAMES, engine_class("loco_poker").title
(True, 'Loco Poker')
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from cardhall.engine import plugins
from cardhall.engine.base import Engine
from cardhall.engine.plugins import GameSpec


class _Games(Mapping[str, GameSpec]):
    """Game name -> its spec, read from the registry on every access."""

    def __getitem__(self, name: str) -> GameSpec:
        return plugins.games()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(plugins.games()))

    def __len__(self) -> int:
        return len(plugins.games())

    def __repr__(self) -> str:
        return f"GAMES({list(self)})"


#: protocol game name -> :class:`GameSpec` (a live view; catalogue order)
GAMES: Mapping[str, GameSpec] = _Games()


def engine_class(game: str) -> type[Engine]:
    """The engine class for ``game``; raises KeyError for an unknown game, and
    ImportError or AttributeError when a registered engine does not import."""
    return plugins.spec(game).engine_class()
