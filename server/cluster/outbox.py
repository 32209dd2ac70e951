"""Messages to other nodes, in order, through one Redis connection per master.

Whatever this node sends (inputs for tables owned elsewhere, frames for other
nodes' clients, handover requests) is queued here and published (``SPUBLISH``:
sharded pub/sub, on a standalone Redis too) by one writer task in a
non-transactional pipeline. A channel lives on the master serving its slot
(a node's inbox ``P:inbox:{node}``, a table's ``P:{tag}:id:ch``); on a Redis
Cluster redis-py splits the pipeline per master, each part in queue order, and
the next batch is sent only once this one is answered, so messages to one
node's inbox, and those on one table's channel, arrive in the order they were
queued. With the commits it keeps one order per table: a commit script
publishes a table's events before the replies that follow them are queued (a
reply is queued only after its commit returned), and the group committer
waits for :meth:`flushed` before it sends the next commit (the hall sets
its ``before`` hook), so a reply is published before the events of any later
commit. Each node thus receives a table's events, membership changes and
replies in the order the table produced them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from cardhall.server.store.redis_conn import redis_trouble

log = logging.getLogger("cardhall.cluster")


class Outbox:
    """Publishing ``(channel, bytes)`` pairs in order with ``client`` (redis-py
    asyncio, with no retry: a publish that timed out may have been carried out,
    and a request published twice would be applied twice; one that failed is
    lost, its request answered ``unavailable`` by the sender's node)."""

    def __init__(self, client: Any, on_trouble: Callable[[], Awaitable[None]] | None = None) -> None:
        self.client = client
        #: awaited after a publish failed: the node reloads the cluster's slot map (a master that
        #: failed over is then left for its promoted replica)
        self.on_trouble = on_trouble
        self._queue: deque[tuple[str, bytes]] = deque()
        self._wake: asyncio.Event = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.sent = 0
        self.failed = 0
        self._queued = 0  # messages queued so far
        self._done = 0  # of those, published or given up
        self._waiting: list[tuple[int, asyncio.Future[None]]] = []

    def start(self) -> None:
        """Start the writer task."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name="cluster outbox")

    def send(self, channel: str, message: bytes) -> None:
        """Queue ``message`` for ``channel`` (never blocks)."""
        self._queue.append((channel, message))
        self._queued += 1
        self._wake.set()

    async def flushed(self) -> None:
        """Return once every message queued before the call is published
        (or given up for Redis being down); at once when none waits."""
        if self._done >= self._queued or self._task is None or self._task.done():
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((self._queued, fut))
        await fut

    def _settled(self, count: int) -> None:
        self._done += count
        if self._waiting:
            ready = [w for w in self._waiting if w[0] <= self._done]
            self._waiting = [w for w in self._waiting if w[0] > self._done]
            for _, fut in ready:
                if not fut.done():
                    fut.set_result(None)

    async def drain(self, timeout: float = 2.0) -> None:
        """Wait until everything queued is published (:meth:`flushed`, at most ``timeout`` seconds)."""
        try:
            await asyncio.wait_for(self.flushed(), timeout)
        except TimeoutError:
            log.warning("%d messages to other nodes not published within %.1f s", len(self._queue), timeout)

    async def stop(self) -> None:
        """Publish what is queued (briefly), then end the writer."""
        await self.drain(1.0)
        if self._task is not None:
            self._task.cancel()
        for _, fut in self._waiting:
            if not fut.done():
                fut.set_result(None)
        self._waiting = []

    async def _run(self) -> None:
        queue = self._queue
        while True:
            if not queue:
                self._wake.clear()
                await self._wake.wait()
                continue
            batch = list(queue)
            queue.clear()
            try:
                async with self.client.pipeline(transaction=False) as pipe:
                    for channel, message in batch:
                        pipe.spublish(channel, message)
                    await pipe.execute()
                self.sent += len(batch)
                self._settled(len(batch))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # Redis is down (or a master failed over): the messages are
                # lost; the table's owner stalls on its own commits meanwhile;
                # a relaying node finds the gap (a seq, a request unanswered)
                # and joins again. The writer itself never ends.
                self.failed += len(batch)
                self._settled(len(batch))
                if redis_trouble(exc):
                    log.warning("could not publish %d messages to other nodes: %s", len(batch), exc)
                else:
                    log.exception("could not publish %d messages to other nodes", len(batch))
                if self.on_trouble is not None:
                    with contextlib.suppress(Exception):
                        await self.on_trouble()
                await asyncio.sleep(0.2)
