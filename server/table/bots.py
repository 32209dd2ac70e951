"""Server bots at a table (NL-5): what a bot sees, how long it thinks, its move.

A bot decides from its seat's view and the legal actions, exactly what a
remote client would get (``engine/bots/base.py``), drawing on its own
generator, never the match's (G-2).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from cardhall.engine.base import Engine
from cardhall.engine.bots.base import Bot
from cardhall.engine.rng import FairRandom
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
    return occ.brain.choose(SeatView(engine, seat), cast(list[Data], legal))


@dataclass(frozen=True, slots=True)
class Thought:
    """A costly bot's decision as plain, picklable data, to be thought away
    from the table (:func:`think`, in a worker process: :mod:`cardhall.server.thinker`).

    ``strategy``: the bot's class as ``"module:QualName"``; ``generator``: its
    generator's state (:meth:`FairRandom.to_data`) when its turn came;
    ``view`` and ``legal``: its seat's view and the legal actions, as
    :func:`choose` would give them.
    """

    strategy: str
    generator: Data
    view: Data
    legal: list[Data]


#: a move thought away from the table: ``(action, generator position before, position after)``
Move = tuple[Data, int, int]


def thought(occ: Occupant, engine: Engine, seat: int, legal: list[LegalAction]) -> Thought | None:
    """The :class:`Thought` of ``occ``'s move for ``seat``, or None when its
    strategy is cheap (:attr:`Bot.costly` false: :func:`choose` runs in place)."""
    brain = occ.brain
    if brain is None or not brain.costly:
        return None
    cls = type(brain)
    return Thought(f"{cls.__module__}:{cls.__qualname__}", brain.rng.to_data(), engine.view(seat),
                   cast(list[Data], legal))


def think(job: Thought) -> Move:
    """The move of ``job``: its strategy, rebuilt on a generator in the
    state it had, chooses from the view and legal actions, exactly as
    :func:`choose` does at the table (so the move is the same wherever it is
    thought). Returns ``(action, position before, position after)``, the
    positions in bytes of the generator's stream (:attr:`Occupant.bot_position`).
    ImportError/AttributeError for a strategy that cannot be found.

    >>> from cardhall.engine.registry import engine_class
    >>> from cardhall.engine.base import test_rng
    >>> from cardhall.engine.bots.registry import make_bot
    >>> engine = engine_class("no_limit_holdem").new([1, 2], {}, test_rng("doc"))
    >>> _ = engine.start()
    >>> seat = engine.to_act
    >>> occ = Occupant(seat, None, "bot", bot="equity")
    >>> occ.brain = make_bot("no_limit_holdem", "equity", FairRandom(b"doc-bot"))
    >>> legal = [a.to_data() for a in engine.legal_actions()]
    >>> job = thought(occ, engine, seat, legal)
    >>> action, before, after = think(job)
    >>> action == choose(occ, engine, seat, legal) and after == occ.bot_position()
    True
    """
    module, _, name = job.strategy.partition(":")
    cls = cast("type[Bot]", functools.reduce(getattr, name.split("."), cast(Any, importlib.import_module(module))))
    rng = FairRandom.from_data(job.generator)
    before = int(job.generator["position"])
    action = cls(rng).choose(job.view, job.legal)
    return action, before, int(rng.to_data()["position"])
