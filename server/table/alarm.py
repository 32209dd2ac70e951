"""A table's one timer slot on the event loop, re-armed lazily.

A table waits for at most one timed thing at a time
(:class:`~cardhall.server.table.outputs.Timer`): a person's clock, a bot's
think, a dealer step. Most steps move that time later (each action re-arms
the next seat's clock), so :class:`Alarm` keeps the loop timer it already
has when the new time is not earlier: the timer runs at the old time, sees
that the slot now wants a later one and schedules itself again. A turn
answered before its clock runs out so costs no loop timer of its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Alarm(Generic[T]):
    """Calls ``fire(due)`` once monotonic time reaches the ``at`` of the last
    :meth:`set` (at once, in a later loop iteration, when that has passed),
    unless :meth:`clear` or another :meth:`set` came first.

    >>> async def demo():
    ...     fired = []
    ...     alarm = Alarm(fired.append)
    ...     alarm.set(time.monotonic(), "first")
    ...     alarm.set(time.monotonic() + 0.01, "second")  # later: the first's loop timer is kept
    ...     while not fired:
    ...         await asyncio.sleep(0.005)
    ...     return fired, alarm.armed
    >>> asyncio.run(demo())
    (['second'], False)
    """

    __slots__ = ("_at", "_due", "_fire", "_handle", "_handle_at")

    def __init__(self, fire: Callable[[T], None]) -> None:
        self._fire = fire
        self._due: T | None = None
        self._at = 0.0
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._handle_at = 0.0

    @property
    def armed(self) -> bool:
        """Something is due."""
        return self._due is not None

    def set(self, at: float, due: T) -> None:
        """Fire ``due`` at ``at`` (monotonic seconds) instead of what was set before."""
        self._due, self._at = due, at
        if self._handle is not None and self._handle_at <= at:
            return  # the loop timer runs first and moves itself to ``at``
        self._schedule()

    def clear(self) -> None:
        """Nothing is due any more (a loop timer left behind runs and does nothing)."""
        self._due = None

    def close(self) -> None:
        """Nothing is due, and the loop timer is cancelled (the table ends)."""
        self._due = None
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _schedule(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
        loop = asyncio.get_running_loop()
        delay = self._at - time.monotonic()
        self._handle_at = self._at
        self._handle = loop.call_later(delay, self._run) if delay > 0 else loop.call_soon(self._run)

    def _run(self) -> None:
        self._handle = None
        due = self._due
        if due is None:
            return
        if self._at > self._handle_at:  # moved later since this timer was scheduled
            self._schedule()
            return
        self._due = None
        self._fire(due)
