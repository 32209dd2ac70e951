"""A table actor's mailbox: a deque and, while the actor waits, one future.

The actor only ever takes everything that is queued at once, so it needs
none of what ``asyncio.Queue`` does on every call (bounded sizes, queues of
getters and putters, a loop check on every wait); at full speed those calls
are a measurable share of the server's CPU (docs/LOAD.md).

>>> import asyncio
>>> async def demo():
...     box = Mailbox()
...     box.post(1); box.post(2)
...     return await box.take(), box.empty()
>>> asyncio.run(demo())
([1, 2], True)
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class Mailbox(Generic[T]):
    """Inputs for one actor; :meth:`post` never blocks, :meth:`take` waits for
    at least one and returns all that are queued, in order."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def post(self, item: T) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def take(self) -> list[T]:
        while not self._items:
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                if self._waiter is waiter:
                    self._waiter = None
        items = list(self._items)
        self._items.clear()
        return items

    def drain(self) -> list[T]:
        """Every item queued, taken now (none waits any more)."""
        items = list(self._items)
        self._items.clear()
        return items

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items)
