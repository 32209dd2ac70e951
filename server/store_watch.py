"""Watching the store (``server/STORAGE.md``, "Redis trouble").

:class:`StoreWatch` keeps the hall's view of its store: up, or down and why.

* When a commit fails because the store is unreachable (or has lost its
  data), :meth:`StoreWatch.failed` blocks the group committer (tables stall
  at once instead of waiting on a dead store) and a watcher probes the store
  every ``store_retry`` seconds, backing off to 5 s. When it answers, a store
  that lost its data first gets every open table (its full checkpoint) and
  the players this process knows written again from memory; then the stalled
  tables are told to retry.
* A timer probes the store every ``store_probe`` seconds while it is up, so
  lost data (a Redis restarted without persistence, a ``FLUSHALL``) is
  noticed within that interval even while no table saves anything (a table
  waiting on a long clock commits nothing) and written back the same way.
* :meth:`StoreWatch.write_back` runs first at shutdown: a store that lost
  its data since the last probe is written back before the process exits.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable

from cardhall.server.config import Settings
from cardhall.server.metrics import Metrics
from cardhall.server.store.base import Checkpoint, Store, StoreEmpty, StoreUnavailable
from cardhall.server.store.committer import GroupCommitter
from cardhall.server.table.actor import TableActor
from cardhall.server.table.core import CLOSED
from cardhall.server.table.inputs import StoreBack

log = logging.getLogger("cardhall.hall")

#: seconds between the watcher's probes at most (it doubles from ``store_retry``)
MAX_RETRY = 5.0


class StoreWatch:
    """The store's health for one hall. ``tables()``: the tables held in
    memory; ``full_checkpoint(table)``: everything a table holds, to fill a
    store that lost its data; ``stalled``: the tables waiting for the store
    (the hall's set, told :class:`StoreBack` when it answers)."""

    def __init__(self, settings: Settings, store: Store, committer: GroupCommitter, metrics: Metrics,
                 tables: Callable[[], Iterable[TableActor]], full_checkpoint: Callable[[TableActor], Checkpoint],
                 stalled: set[TableActor]) -> None:
        self.settings = settings
        self.store = store
        self.committer = committer
        self.metrics = metrics
        self.tables = tables
        self.full_checkpoint = full_checkpoint
        self.stalled = stalled
        #: why the store is unavailable, while it is (None: up)
        self.error: str | None = None
        #: times the store was found without its data and written again from memory
        self.rewrites = 0
        self._watcher: asyncio.Task[None] | None = None
        self._timer: asyncio.Task[None] | None = None

    @property
    def up(self) -> bool:
        """False from a failed commit or probe until the store answers again."""
        return self.error is None

    def start(self) -> None:
        """Start the probe timer (``settings.store_probe`` seconds; 0: none)."""
        if self.settings.store_probe > 0 and self._timer is None:
            self._timer = asyncio.get_running_loop().create_task(self._probe_every(self.settings.store_probe))

    def stop(self) -> None:
        """Stop the timer and the watcher."""
        for task in (self._timer, self._watcher):
            if task is not None:
                task.cancel()

    async def save_clocks(self) -> None:
        """At shutdown, write every table whole whose clock runs (a restart gives the time left now,
        not at the last action) or that logged steps since its last whole state (the next start,
        maybe of another version, has no log to replay: server/STORAGE.md, "The input log");
        a failure is logged."""
        if not self.up:
            return
        ticking = [t for t in self.tables() if (t.machine.clock_running or t.logged_since_whole)
                   and not t.machine.stalled and not t.machine.pending.needs_commit and not t.unwritable]
        if not ticking:
            return
        try:
            await self.committer.exclusive(lambda: self.store.commit([t.whole_checkpoint() for t in ticking]))
        except Exception as exc:
            log.warning("the clocks of %d tables could not be saved at shutdown: %s", len(ticking), exc)

    def failed(self, exc: BaseException) -> None:
        """A commit or a probe failed: if the store is unreachable or lost
        its data (:class:`StoreUnavailable`), block the committer and watch
        the store until it answers; anything else is not the store's state."""
        if not isinstance(exc, StoreUnavailable) or self.error is not None:
            return
        self.error = str(exc) or type(exc).__name__
        self.committer.blocked = exc
        self.metrics.store_down()
        log.error("the %s store is unavailable (%s): tables stop taking actions until it answers",
                  self.store.kind, self.error)
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def write_back(self, timeout: float) -> None:
        """Before shutdown: probe the store now and, if it lost its data,
        write every table and player back (waiting up to ``timeout`` seconds
        for a store that does not answer; past it what memory holds is lost)."""
        if self.error is None:
            await self._probe_once()
        if self._watcher is not None and not self._watcher.done():
            await asyncio.wait([self._watcher], timeout=timeout)
            if self.error is not None:
                log.error("the %s store did not take the tables back before shutdown (%s): what only "
                          "memory held is lost", self.store.kind, self.error)

    async def _probe_once(self) -> None:
        try:
            holds_data = await self.store.probe()
        except StoreUnavailable as exc:
            self.failed(exc)
            return
        except Exception:
            log.exception("probing the %s store failed", self.store.kind)
            return
        if not holds_data:
            self.failed(StoreEmpty("the store lost its data (its marker is gone or new)"))

    async def _probe_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            if self.error is None:  # else the watcher is at work
                await self._probe_once()

    async def _watch(self) -> None:
        delay = self.settings.store_retry
        quiet_since = time.monotonic()
        while True:
            await asyncio.sleep(delay)
            try:
                holds_data = await self.store.probe()
                if not holds_data:
                    log.warning("the %s store answers but lost its data: writing %d tables again from memory",
                                self.store.kind, sum(1 for _ in self.tables()))
                    await self.committer.exclusive(self._rewrite)
                    self.rewrites += 1
                    self.metrics.rewrites.inc()
                break
            except StoreUnavailable as exc:
                self.error = str(exc) or type(exc).__name__
                delay = min(delay * 2, MAX_RETRY)
                if time.monotonic() - quiet_since >= 30.0:
                    log.error("the %s store is still unavailable (%s); %d tables stalled",
                              self.store.kind, exc, len(self.stalled))
                    quiet_since = time.monotonic()
            except Exception:
                log.exception("probing the %s store failed", self.store.kind)
                delay = min(delay * 2, MAX_RETRY)
        self.error = None
        self.committer.blocked = None
        self.metrics.store_up.set(1)
        log.warning("the %s store answers again: %d stalled tables resume", self.store.kind, len(self.stalled))
        for table in list(self.stalled):
            table.post(StoreBack())

    async def _rewrite(self) -> None:
        tables = [t for t in self.tables() if t.machine.status != CLOSED and not t.unwritable]  # unwritable: quarantined
        started = time.perf_counter()
        await self.store.rewrite([self.full_checkpoint(t) for t in tables])
        log.warning("wrote %d tables again in %.3f s", len(tables), time.perf_counter() - started)
