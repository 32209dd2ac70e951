"""The bot interface shared by every game.

A bot decides from exactly what its seat may see, the same redacted view and
legal actions a remote client receives (``Engine.view(seat)`` and
``Engine.legal_actions()``, or a protocol ``snapshot``/``event``), so the
server's bots and a third-party bot over the public protocol run the same
strategies and no bot can cheat.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from cardhall.engine.rng import FairRandom

Data = dict[str, Any]


class Bot(ABC):
    """A strategy for one game. ``rng`` is the bot's own generator (never the
    match's: bot choices are not part of the provable randomness, G-2)."""

    #: registry name, e.g. ``"random"`` or ``"equity"``.
    name: str = ""
    #: its choice simulates (milliseconds of CPU, e.g. Monte Carlo equity):
    #: the server thinks it in a worker process, off the event loop
    #: (:mod:`cardhall.server.thinker`); a cheap strategy is run in place.
    costly: bool = False

    def __init__(self, rng: FairRandom) -> None:
        self.rng = rng

    @abstractmethod
    def choose(self, view: Mapping[str, Any], legal: Sequence[Data]) -> Data:
        """An action map for the seat whose ``view`` this is.

        ``view``: the seat's view of the game (``Engine.view(seat)``) as a
        read-only mapping: at a table it is computed on its first read, so a
        strategy that never reads it costs nothing (``dict(view)`` makes a
        copy to change). ``legal``: the legal actions as plain data (``LegalAction.to_data()``),
        never empty when called. Must return one of them, with an amount in
        range where it takes one.
        """
