"""Server bots at a table (NL-5): what a bot sees, how long it thinks, its move.

A bot decides from its seat's view and the legal actions, exactly what a
remote client would get (``engine/bots/base.py``), drawing on its own
generator, never the match's (G-2).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, cast

from cardhall.engine.base import Engine
from cardhall.protocol.frames import LegalAction
from cardhall.server.table.occupant import Occupant

Data = dict[str, Any]


class SeatView(Mapping[str, Any]):
    """``engine.view(seat)``, computed when a bot first reads it: a strategy
    that decides from the legal actions alone (``random``) never pays for the
    view (a large share of the server's CPU at full speed). The engine does not
    change while the bot decides, so the view is the one of its turn.

    >>> from cardhall.engine.registry import engine_class
    >>> from cardhall.engine.base import test_rng
    >>> engine = engine_class("no_limit_holdem").new([1, 2], {}, test_rng("doc"))
    >>> _ = engine.start()
    >>> view = SeatView(engine, 1)
    >>> view.computed
    False
    >>> dict(view) == engine.view(1) and view.computed
    True
    """

    __slots__ = ("_data", "_engine", "_seat")

    def __init__(self, engine: Engine, seat: int) -> None:
        self._engine = engine
        self._seat = seat
        self._data: Data | None = None

    @property
    def computed(self) -> bool:
        """Whether the view has been computed yet."""
        return self._data is not None

    def _view(self) -> Data:
        data = self._data
        if data is None:
            data = self._data = self._engine.view(self._seat)
        return data

    def __getitem__(self, key: str) -> Any:
        return self._view()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._view())

    def __len__(self) -> int:
        return len(self._view())

    def __contains__(self, key: object) -> bool:
        return key in self._view()

    def get(self, key: str, default: Any = None) -> Any:
        return self._view().get(key, default)


def think_time(occ: Occupant, bot_think: float) -> float:
    """A bot's pause before acting, seconds: ``bot_think`` on average, drawn
    uniformly in [0.5, 1.5] x ``bot_think`` from the bot's own generator
    (people do not act in lockstep either, and tables created together stay
    apart). 0 when ``bot_think`` is 0."""
    if bot_think <= 0 or occ.brain is None:
        return bot_think
    return bot_think * (0.5 + occ.brain.rng.randbelow(1001) / 1000)


def choose(occ: Occupant, engine: Engine, seat: int, legal: list[LegalAction]) -> Data:
    """The bot at ``occ``'s move for ``seat`` (an action map, unchecked).
    Raises AssertionError for a seat without a bot strategy."""
    assert occ.brain is not None, f"seat {seat} has no bot strategy"
    # the view is read as a mapping only; SeatView computes it on first read
    return occ.brain.choose(cast(Data, SeatView(engine, seat)), cast(list[Data], legal))
