"""Counting what a load process's connections receive.

One :class:`Recorder` per load process; every :class:`TrackedClient` of that
process reports into it from its reader (no per-frame task, no queue for
spectators):

* ``events``: event frames received inside the measuring window (an event in a
  ``batch`` frame counts once per connection that receives it);
* ``latency``: for each of those, its action-to-event latency: the time it was
  received minus the time its action was taken. When a player of this process
  sent the action (:class:`TableClock`), that is the moment the ``act`` left the
  client; otherwise (a server bot's move, a dealer step, a clock) it is the
  event's ``ts``, the server's wall-clock time of the input (same host, same
  clock);
* ``errors``: error frames by ``code`` over the whole run (replies included),
  plus ``connection_lost`` for a connection that closed before the end;
* ``gaps`` (an event whose ``seq`` skips ahead of the last one received on that
  table) and ``reorders`` (a ``seq`` not above the last one: a duplicate or an
  event out of order); both must stay 0.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from cardhall.clients.client import Client
from cardhall.clients.load.histogram import LatencyHistogram

Frame = dict[str, Any]


class TableClock:
    """When the last action a player of this process sent at a table left the
    client, and which server ``ts`` it got: events of one input share their ``ts``."""

    __slots__ = ("pending", "act_ts", "act_origin")

    def __init__(self) -> None:
        self.pending: float | None = None  # wall time an act was sent, until its first event arrives
        self.act_ts = -1.0
        self.act_origin = 0.0

    def origin(self, ts: float) -> float:
        """The time the action behind an event with server time ``ts`` was taken."""
        if ts == self.act_ts:
            return self.act_origin
        pending = self.pending
        if pending is not None and ts >= pending:  # the first event the server made after our act left
            self.act_ts, self.act_origin, self.pending = ts, pending, None
            return pending
        return ts


class Recorder:
    """What one load process measured (see the module docstring)."""

    def __init__(self) -> None:
        self.measuring = False
        self.events = 0
        self.latency = LatencyHistogram()
        self.errors: Counter[str] = Counter()
        self.gaps = 0
        self.reorders = 0
        self.retries = 0  # connection attempts that failed and were tried again
        self.acts = 0  # act requests sent by players (game actions, continue, rematch)
        self.clocks: dict[str, TableClock] = {}

    def clock(self, table: str) -> TableClock:
        clock = self.clocks.get(table)
        if clock is None:
            clock = self.clocks[table] = TableClock()
        return clock


class TrackedClient(Client):
    """A :class:`Client` whose every received frame is counted by ``recorder``."""

    def __init__(self, url: str, recorder: Recorder, **kw: Any) -> None:
        super().__init__(url, **kw)
        self.recorder = recorder
        self.last_seq: dict[str, int] = {}
        self.refused = 0  # error frames this connection received

    def dispatch(self, frame: Frame) -> None:
        kind = frame.get("type")
        rec = self.recorder
        if kind == "event":
            table, seq = frame["table"], frame["seq"]
            last = self.last_seq.get(table)
            if last is not None:
                if seq > last + 1:
                    rec.gaps += 1
                elif seq <= last:
                    rec.reorders += 1
            self.last_seq[table] = seq
            clock = rec.clocks.get(table)
            ts = frame["ts"]
            origin = clock.origin(ts) if clock is not None else ts  # outside the window too: it pairs acts and events
            if rec.measuring:
                rec.events += 1
                rec.latency.add(time.time() - origin)
        elif kind == "snapshot":
            self.last_seq[frame["table"]] = frame["seq"]
        elif kind == "error":
            rec.errors[str(frame.get("code"))] += 1
            self.refused += 1
        super().dispatch(frame)
