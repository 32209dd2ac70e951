"""Messages to other nodes, in order, through one Redis connection.

Whatever this node sends (inputs for tables owned elsewhere, frames for other
nodes' clients, handover requests) is queued here and published by one writer
task in a pipeline, so messages to one node arrive in the order they were
queued; a node's own commit scripts publish its tables' events before the
replies that follow them are queued (a reply is queued only after its commit
returned), so each node receives a table's events before the replies that
follow them.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any

from redis import exceptions as rexc

log = logging.getLogger("cardhall.cluster")


class Outbox:
    """Publishing ``(channel, bytes)`` pairs in order with ``client`` (redis-py asyncio)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._queue: deque[tuple[str, bytes]] = deque()
        self._wake: asyncio.Event = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.sent = 0
        self.failed = 0

    def start(self) -> None:
        """Start the writer task."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name="cluster outbox")

    def send(self, channel: str, message: bytes) -> None:
        """Queue ``message`` for ``channel`` (never blocks)."""
        self._queue.append((channel, message))
        self._wake.set()

    async def drain(self, timeout: float = 2.0) -> None:
        """Wait until everything queued is published (at most ``timeout`` seconds)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while self._queue and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.005)

    async def stop(self) -> None:
        """Publish what is queued (briefly), then end the writer."""
        await self.drain(1.0)
        if self._task is not None:
            self._task.cancel()

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
                        pipe.publish(channel, message)
                    await pipe.execute()
                self.sent += len(batch)
            except (rexc.RedisError, OSError) as exc:
                # Redis is down: the messages are lost; the table's owner
                # stalls on its own commits meanwhile, and clients retry
                self.failed += len(batch)
                log.warning("could not publish %d messages to other nodes: %s", len(batch), exc)
                await asyncio.sleep(0.2)
