"""Bot names -> bot classes, per game, from the discovered games.

Every game has ``random`` (the baseline: a uniform choice among the legal
actions, :mod:`cardhall.engine.bots.random_bot`) and the strategies its
registration names (:attr:`cardhall.engine.plugins.GameSpec.bots`); its
``default_bot`` is ``DEFAULT[game]``. :data:`BOTS` and :data:`DEFAULT` are
live read-only views of the registry (:mod:`cardhall.engine.plugins`).

>>> sorted(BOTS["avalanche"]), DEFAULT["avalanche"]
(['heuristic', 'random'], 'heuristic')
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from cardhall.engine import plugins
from cardhall.engine.bots.base import Bot
from cardhall.engine.rng import FairRandom


class _Bots(Mapping[str, Mapping[str, "type[Bot] | str"]]):
    """game -> bot name -> class or ``"module:Class"``."""

    def __getitem__(self, game: str) -> Mapping[str, type[Bot] | str]:
        return plugins.spec(game).bot_refs()

    def __iter__(self) -> Iterator[str]:
        return iter(list(plugins.games()))

    def __len__(self) -> int:
        return len(plugins.games())


class _Defaults(Mapping[str, str]):
    """game -> the strategy seated by default."""

    def __getitem__(self, game: str) -> str:
        return plugins.spec(game).default_bot

    def __iter__(self) -> Iterator[str]:
        return iter(list(plugins.games()))

    def __len__(self) -> int:
        return len(plugins.games())


#: game -> bot name -> class or "module:Class" (a live view)
BOTS: Mapping[str, Mapping[str, type[Bot] | str]] = _Bots()

#: game -> the strategy seated by default (solo play, NL-5; a live view)
DEFAULT: Mapping[str, str] = _Defaults()


def bot_names(game: str) -> list[str]:
    """The bot names available for ``game``, sorted; KeyError for an unknown game."""
    return sorted(BOTS[game])


def make_bot(game: str, name: str | None, rng: FairRandom) -> Bot:
    """A bot for ``game`` (``name`` None: the game's default) drawing on ``rng``;
    raises KeyError for an unknown game or bot name."""
    spec = plugins.spec(game)
    return spec.bot_class(name or spec.default_bot)(rng)
