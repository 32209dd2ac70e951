"""Group commit: the checkpoints of every table that acted in the same
event-loop iteration go to the store as one ``commit`` call (one round trip
for a networked store); each table is released when it returns."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from cardhall.server.store.base import Checkpoint, Store, StoreUnavailable

T = TypeVar("T")


class GroupCommitter:
    """Gathers the checkpoints submitted in one loop iteration into one
    ``Store.commit``; up to ``max_in_flight`` commits (default 2) are in flight
    at once, the next batch forms meanwhile. While a slot is free a pending
    batch goes at once; a batch of at least ``2 * min_split`` checkpoints that
    finds every slot free is sent as two commits, so the tables form two groups
    that take turns: the process applies and packs one group while the store
    writes the other (with one commit in flight the process would sit idle
    during each write, deploy/README.md). Each table
    has at most one checkpoint in flight (its actor waits for it), so commits
    running side by side never hold the same table and each table's
    checkpoints reach the store in order.

    ``on_commit(seconds, size)`` is called after each commit that succeeded,
    ``on_failure(exc)`` after each that raised.

    While :attr:`blocked` holds an exception (the hall sets it when the store
    is down), commits fail at once with :class:`StoreUnavailable` without
    reaching the store. :meth:`exclusive` runs a job (the rewrite of an empty
    store) with no commit in flight before, during or after it starts.
    """

    def __init__(self, store: Store, on_commit: Any = None,
                 on_failure: Callable[[BaseException], None] | None = None,
                 max_in_flight: int = 2, min_split: int = 8) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self.store = store
        self.blocked: StoreUnavailable | None = None
        self.max_in_flight = max_in_flight
        self.min_split = min_split
        self._batch: list[Checkpoint] = []
        self._waiters: list[asyncio.Future[None]] = []
        self._scheduled = False
        self._writes: set[asyncio.Future[Any]] = set()
        self._exclusive = False
        self._exclusive_lock = asyncio.Lock()
        self._on_commit = on_commit
        self._on_failure = on_failure
        #: awaited before each commit is sent: a cluster's outbox, so the
        #: replies of a table's last commit are published before its next
        #: commit publishes more events (:mod:`cardhall.server.cluster.outbox`)
        self.before: Callable[[], Awaitable[None]] | None = None

    async def commit(self, checkpoint: Checkpoint) -> None:
        """Return once ``checkpoint`` is written; raises what the store raised
        (:class:`StoreUnavailable` when it is down, or the checkpoint's own
        ``error``). A store that commits synchronously (``commit_now``) needs
        no grouping: the call returns without suspending."""
        if self.blocked is not None:
            raise StoreUnavailable(f"store unavailable: {self.blocked}")
        if not self._writes and not self._batch and not self._exclusive:
            started = time.perf_counter()
            if self.store.commit_now((checkpoint,)):
                if checkpoint.error is not None:
                    raise checkpoint.error
                if self._on_commit is not None:
                    self._on_commit(time.perf_counter() - started, 1)
                return
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._batch.append(checkpoint)
        self._waiters.append(fut)
        if not self._scheduled and self._can_start():
            self._scheduled = True
            loop.call_soon(self._flush)
        await fut

    async def exclusive(self, job: Callable[[], Awaitable[T]]) -> T:
        """Run ``job()`` alone: after the commits in flight, before the next."""
        async with self._exclusive_lock:
            self._exclusive = True
            try:
                while self._writes:
                    await asyncio.wait(list(self._writes))
                return await job()
            finally:
                self._exclusive = False
                if self._batch:
                    self._flush()

    def _can_start(self) -> bool:
        return not self._exclusive and len(self._writes) < self.max_in_flight

    def _flush(self) -> None:
        self._scheduled = False
        while self._batch and self._can_start():
            take = len(self._batch)
            if not self._writes and self.max_in_flight > 1 and take >= 2 * self.min_split:
                take = (take + 1) // 2  # every slot free: two groups (see the class docstring)
            batch, waiters = self._batch[:take], self._waiters[:take]
            del self._batch[:take], self._waiters[:take]
            if self.blocked is not None:
                error = StoreUnavailable(f"store unavailable: {self.blocked}")
                for fut in waiters:
                    if not fut.done():
                        fut.set_exception(error)
                continue
            task = asyncio.ensure_future(self._write(batch, waiters))
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)  # also when cancelled

    async def _write(self, batch: list[Checkpoint], waiters: list[asyncio.Future[None]]) -> None:
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            if self.before is not None:
                await self.before()
            await self.store.commit(batch)
        except Exception as exc:  # handed to every waiter
            error = exc
        for cp, fut in zip(batch, waiters):
            if fut.done():
                continue
            if error is not None:
                fut.set_exception(error)
            elif cp.error is not None:
                fut.set_exception(cp.error)
            else:
                fut.set_result(None)
        if error is None:
            if self._on_commit is not None:
                self._on_commit(time.perf_counter() - started, len(batch))
        elif self._on_failure is not None:
            self._on_failure(error)
        self._writes.discard(asyncio.current_task())
        if self._batch:
            self._flush()
