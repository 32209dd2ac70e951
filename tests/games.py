"""The games the tests play: every built-in registered game, and how to make its match short.

A test that plays every game parametrises over :data:`GAMES` and creates its
tables with :func:`quick` options, so a game added to ``cardhall.engine.games``
is played by those tests with nothing to list here. Games registered from
elsewhere (installed plugins, ``CARDHALL_GAMES``, the test toy) are not in
:data:`GAMES`; :func:`quick` still works for them while they are registered.

>>> GAMES
['fixed_limit_holdem', 'no_limit_holdem', 'alamo', 'loco_poker', 'avalanche']
>>> quick("loco_poker", pause=0)
{'points_to_win': 2, 'pause': 0}
"""

from __future__ import annotations

from typing import Any

import pytest

from cardhall.engine import plugins


def builtin_games() -> list[str]:
    """The names of the registered games of :data:`cardhall.engine.plugins.BUILTIN_PACKAGE`
    now, in catalogue order (:data:`GAMES` is this at import)."""
    prefix = plugins.BUILTIN_PACKAGE + "."
    return [name for name, spec in plugins.games().items() if spec.source.startswith(prefix)]


#: every built-in registered game's name, in catalogue order (``GameSpec.order``, then name)
GAMES: list[str] = builtin_games()


def quick(game: str, **overrides: Any) -> dict[str, Any]:
    """The options of a short match of ``game`` (a registered game's
    ``GameSpec.quick_options``) with ``overrides`` (game or table options)
    merged over them. KeyError for a game that is not registered."""
    return {**plugins.spec(game).quick_options, **overrides}


def seats(game: str, want: int = 3) -> int:
    """``want`` seats, or as near as ``game``'s engine allows (its ``min_seats`` to ``max_seats``)."""
    cls = plugins.spec(game).engine_class()
    return max(cls.min_seats, min(want, cls.max_seats))


def everyday(games: list[str], kept: set[str]) -> list[Any]:
    """``games`` as ``parametrize`` values, each not in ``kept`` marked
    ``slow`` (run with ``--runslow``): a long test that plays every game runs
    the games of ``kept`` in the everyday suite and the rest behind the flag,
    to keep the suite within its time.

    >>> [getattr(p, "values", p) for p in everyday(["a", "b"], {"a"})]
    ['a', ('b',)]
    """
    return [game if game in kept else pytest.param(game, marks=pytest.mark.slow) for game in games]
