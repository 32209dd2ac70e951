"""Bots' turns on one node: queued fairly, a few at a time, costly thinking off the event loop.

A bot's think time ends with the :class:`~cardhall.server.table.inputs.BotDue`
its table armed (NL-5). The table's actor hands it to the node's
:class:`Thinker` instead of its own mailbox, so that a node with more bot
tables than it can play keeps answering people (deploy/README.md, "Bots' pace"):

* **Fair.** Bot turns wait in two first-in first-out queues: turns at tables
  where a person is in play first, then those of tables nobody attends
  (bots only, or every person sitting out or gone). A table has one bot turn
  open at a time, so every table waits its place in line; none starves.
* **A few at a time.** At most ``slots`` bot turns are under way at once
  (thinking, or applied by their table and not yet written and delivered); the
  next one is admitted when one ends. So the event loop never holds more
  than a few bots' steps between two reads of the sockets: people's requests
  (which never wait here) and ``/healthz`` are answered in between, and a
  node with too many bots plays each of them more slowly instead of stalling.
* **Off the loop.** A costly strategy (:attr:`cardhall.engine.bots.base.Bot.costly`:
  Monte Carlo equity, milliseconds per move) is thought in a pool of
  ``workers`` processes (0: on the loop, in the table's step) from a copy of
  what it would read at the table (:class:`~cardhall.server.table.bots.Thought`:
  its seat's view, the legal actions, its generator's state), and its move
  comes back in ``BotDue.move``. The move is the one the bot would have made
  at the table: a deterministic function of its generator's state, which the
  table then moves to where thinking left it, and the input log keeps the
  move (:mod:`cardhall.server.table.log`). A pool that breaks (a worker
  killed) is started again; meanwhile the table thinks the move itself.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import Protocol

from cardhall.server.table.bots import Move, Thought, think
from cardhall.server.table.inputs import BotDue, Input

log = logging.getLogger("cardhall.bots")

#: seconds between a bot worker's checks that its node is still there
ORPHAN_CHECK = 1.0
#: bot turns under way at once on one node (each is one table's step between two socket reads at most)
SLOTS = 64


def worker_start(node: int) -> None:
    """A bot worker process's first step (``node``: the node's pid): it
    ignores SIGINT (a terminal's Ctrl-C reaches the whole process group; the
    node stops its workers itself) and exits once the node is gone, however
    it went (a SIGKILL leaves the pool no time to stop it), checked every
    :data:`ORPHAN_CHECK` seconds."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # started with it blocked: see Thinker._think

    def watch() -> None:
        while os.getppid() == node:
            time.sleep(ORPHAN_CHECK)
        os._exit(0)

    threading.Thread(target=watch, name="node watch", daemon=True).start()


class BotTable(Protocol):
    """What the thinker needs of a table (its actor)."""

    def attended(self) -> bool:
        """A person holding a seat is in play at the table."""

    def bot_thought(self, due: BotDue) -> Thought | None:
        """What a costly bot needs to think the move ``due`` asks for, or None."""

    def post(self, inp: Input, done: Callable[[], None] | None = None) -> None:
        """Queue ``inp``; call ``done`` once the table has applied, written and delivered it."""


class Thinker:
    """The node's bot turns (see the module docstring). ``workers``: processes
    thinking costly moves (0: none, the tables think in place); ``slots``: bot
    turns under way at once (>= 1). ``waiting``: called with the number of
    queued turns whenever it changes (a gauge)."""

    def __init__(self, workers: int, slots: int = SLOTS, waiting: Callable[[int], None] | None = None) -> None:
        if slots < 1 or workers < 0:
            raise ValueError("a thinker needs slots >= 1 and workers >= 0")
        self.workers = workers
        self.slots = slots
        self._free = slots
        self._queues: tuple[deque[tuple[BotTable, BotDue]], deque[tuple[BotTable, BotDue]]] = (deque(), deque())
        self._pool: Executor | None = None
        self._admitting = False
        self._closed = False
        self._waiting = waiting or (lambda n: None)
        self._tasks: set[asyncio.Task[None]] = set()
        #: moves thought in the pool, and in place at their tables (for metrics and tests)
        self.pooled = 0
        self.in_place = 0

    @property
    def queued(self) -> int:
        """Bot turns waiting for a slot."""
        return len(self._queues[0]) + len(self._queues[1])

    @property
    def busy(self) -> int:
        """Bot turns under way (admitted, not yet ended)."""
        return self.slots - self._free

    def submit(self, table: BotTable, due: BotDue) -> None:
        """A bot's think time at ``table`` is over: queue its turn."""
        self._queues[0 if table.attended() else 1].append((table, due))
        self._admit()

    def _admit(self) -> None:
        if self._admitting:  # a turn that ended at once while admitting: the loop below goes on
            return
        self._admitting = True
        try:
            while self._free > 0 and (self._queues[0] or self._queues[1]):
                table, due = (self._queues[0] or self._queues[1]).popleft()
                self._free -= 1
                self._start(table, due)
        finally:
            self._admitting = False
            self._waiting(self.queued)

    def _start(self, table: BotTable, due: BotDue) -> None:
        try:
            job = table.bot_thought(due) if self.workers > 0 and not self._closed else None
        except Exception:  # the table's own step meets the fault and contains it
            log.exception("reading a bot's turn to think it away failed; the table thinks it")
            job = None
        if job is None:
            self.in_place += 1
            table.post(due, self._release)
            return
        task = asyncio.get_running_loop().create_task(self._think(table, due, job))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _think(self, table: BotTable, due: BotDue, job: Thought) -> None:
        move: Move | None = None
        try:
            pool = self._executor()
            # a worker started by this submit inherits SIGINT blocked: a Ctrl-C cannot reach it before
            # worker_start ignores it; one meant for the node stays pending here until the mask is back
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                future = pool.submit(think, job)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            move = await asyncio.wrap_future(future)
            self.pooled += 1
        except BrokenProcessPool:
            log.error("the bots' worker pool broke (a worker died); starting it again")
            self._pool = None
        except asyncio.CancelledError:
            table.post(due, self._release)
            raise
        except Exception:
            log.exception("thinking a bot's move in the pool failed; the table thinks it")
        if move is None:
            self.in_place += 1
        table.post(due if move is None else replace(due, move=move), self._release)

    def _executor(self) -> Executor:
        if self._pool is None:
            # spawn: a fresh interpreter per worker (never a fork of a process running an event loop)
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=worker_start, initargs=(os.getpid(),))
        return self._pool

    def _release(self) -> None:
        self._free += 1
        self._admit()

    def close(self) -> None:
        """Stop the worker pool (the node stops); turns admitted later are thought in place."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
