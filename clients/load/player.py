"""A seat played by the load generator: :class:`cardhall.clients.bots.BotPlayer` (the
public protocol, the engines' strategies, ``continue`` and rematches handled)
with an optional think time and a stopwatch on every ``act``."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from cardhall.clients.bots import BotPlayer
from cardhall.clients.client import ServerError
from cardhall.clients.load.tracked import Recorder, TrackedClient

log = logging.getLogger("cardhall.load")

Frame = dict[str, Any]


class LoadPlayer(BotPlayer):
    """Plays ``client``'s seat at ``table`` for as many matches as the run lasts.

    ``think``: mean seconds before each decision (uniform in 0.5x..1.5x, drawn
    from the strategy's own generator, as the server's bots do; 0: at once).
    Each ``act`` is timed for the table's :class:`~cardhall.clients.load.tracked.TableClock`.
    ``asks_rematch``: this player asks for the next match when one ends (give
    it to one player per table).
    An error reply is counted (by the client) and play goes on; a connection
    lost ends this player (counted as ``connection_lost`` by the run).
    """

    def __init__(self, client: TrackedClient, table: str, strategy: str | None, *, seat: int | None,
                 think: float, bot_seed: bytes, asks_rematch: bool = True) -> None:
        super().__init__(client, table, strategy, seat=seat, bot_seed=bot_seed, rematches=10**9)
        self.think = think
        self.asks_rematch = asks_rematch
        self.recorder: Recorder = client.recorder
        self.clock = self.recorder.clock(table)

    async def _send(self, action: Frame, turn_id: int) -> None:
        if self.think > 0 and action["type"] != "continue" and self.bot is not None:
            await asyncio.sleep(self.think * (0.5 + self.bot.rng.randbelow(1001) / 1000))
        self.recorder.acts += 1
        client: TrackedClient = self.client  # type: ignore[assignment]
        refused = client.refused
        sent = self.clock.pending = time.time()
        try:
            await super()._send(action, turn_id)
        except ServerError:  # counted from its error frame; the turn goes on (clock) or has passed
            pass
        except TimeoutError:
            self.recorder.errors["reply_timeout"] += 1
        finally:
            if client.refused != refused and self.clock.pending == sent:
                self.clock.pending = None  # refused: no event follows this act

    async def _request_rematch(self) -> None:
        if not self.asks_rematch:  # one player per table asks (G-7), the others would only race it
            return
        self.recorder.acts += 1
        try:
            await super()._request_rematch()
        except ServerError:
            pass
        except TimeoutError:
            self.recorder.errors["reply_timeout"] += 1
