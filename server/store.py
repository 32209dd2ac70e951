"""Where tables, their events and hand histories are kept: the ``Store``
interface, the in-memory store, and group commit.

Ordering guarantee (built into the table actor, whatever the store): a table's
new events, its state after them and the hands it finished are handed to the
store as one :class:`Checkpoint`; no event, snapshot or reply leaves the
server before the store's ``commit`` that holds it has returned. The
:class:`GroupCommitter` gathers the checkpoints of every table that acted in
the same event-loop iteration into one ``commit`` call (one pipeline for a
networked store) and releases each table when it returns.

A networked store (Redis, issue 5) implements the same five coroutines;
``commit`` must write each checkpoint's state and events atomically.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import msgpack

Data = dict[str, Any]

#: format version of a stored table state (``Table.to_data()``)
STATE_VERSION = 1


class Checkpoint:
    """One table's commit: its state after the new events, the new events as
    ``(seq, event data)`` in order, and the hands finished since the last commit
    (``{"game", "match", "hand"}``).

    ``state`` and ``events`` are computed when a store first reads them: the
    table's actor waits for its commit, so the state cannot change before the
    store has read it, and a store that keeps no states pays nothing for them.
    """

    __slots__ = ("table", "hands", "_state_fn", "_events_fn", "_state", "_events")

    def __init__(self, table: str, state: Data | Callable[[], Data],
                 events: list[tuple[int, Data]] | Callable[[], list[tuple[int, Data]]] = (),  # type: ignore[assignment]
                 hands: list[Data] | None = None) -> None:
        self.table = table
        self.hands = hands or []
        self._state_fn = state if callable(state) else None
        self._state = None if callable(state) else state
        self._events_fn = events if callable(events) else None
        self._events = None if callable(events) else list(events)

    @property
    def state(self) -> Data:
        if self._state is None:
            assert self._state_fn is not None
            self._state = self._state_fn()
        return self._state

    @property
    def events(self) -> list[tuple[int, Data]]:
        if self._events is None:
            assert self._events_fn is not None
            self._events = self._events_fn()
        return self._events


class Store(ABC):
    """Durable state of the service. All methods are coroutines; errors propagate."""

    @abstractmethod
    async def commit(self, batch: Sequence[Checkpoint]) -> None:
        """Write every checkpoint of ``batch`` (each one atomically)."""

    def commit_now(self, batch: Sequence[Checkpoint]) -> bool:
        """Commit at once without awaiting, if this store can; returns False
        (the default) when it cannot, and the batch goes through :meth:`commit`."""
        return False

    @abstractmethod
    async def load_tables(self) -> list[Data]:
        """The stored state of every table not deleted (for recovery)."""

    @abstractmethod
    async def events_since(self, table: str, seq: int) -> list[tuple[int, Data]] | None:
        """Stored events after ``seq``, or None when the store no longer has them all."""

    @abstractmethod
    async def hands(self, table: str) -> list[Data]:
        """Every stored hand record of ``table`` (``{"match", "hand"}``), oldest first."""

    @abstractmethod
    async def delete_table(self, table: str) -> None:
        """Forget a closed table's state and events; its hands stay (G-9)."""

    @abstractmethod
    async def save_player(self, player: str, token_hash: str, name: str) -> None:
        """Remember a player (the token only as its hash)."""

    @abstractmethod
    async def find_player(self, token_hash: str) -> tuple[str, str] | None:
        """``(player id, name)`` for a token hash, or None."""


class MemoryStore(Store):
    """Keeps everything in this process (the default: ``cardhall serve`` needs
    nothing else). Nothing kept here outlives the process, so by default it
    keeps no table states (they could never be recovered) and costs nothing on
    the hot path; with ``keep_states=True`` (tests, tools) it stores every
    committed state packed with msgpack, as a networked store would, so a state
    that does not survive msgpack fails there too."""

    def __init__(self, event_bound: int = 1024, keep_states: bool = False) -> None:
        self.keep_states = keep_states
        self._states: dict[str, bytes] = {}
        self._events: dict[str, deque[tuple[int, Data]]] = {}
        self._hands: dict[str, list[Data]] = {}
        self._players: dict[str, tuple[str, str]] = {}
        self._event_bound = event_bound
        self.commits = 0

    async def commit(self, batch: Sequence[Checkpoint]) -> None:
        self.commit_now(batch)

    def commit_now(self, batch: Sequence[Checkpoint]) -> bool:
        """In-process: done at once (no loop iteration is lost waiting)."""
        self.commits += 1
        for cp in batch:
            if self.keep_states:
                self._states[cp.table] = msgpack.packb(cp.state)
                self._events.setdefault(cp.table, deque(maxlen=self._event_bound)).extend(cp.events)
            if cp.hands:
                self._hands.setdefault(cp.table, []).extend(cp.hands)
        return True

    async def load_tables(self) -> list[Data]:
        return [msgpack.unpackb(blob, strict_map_key=False) for blob in self._states.values()]

    async def events_since(self, table: str, seq: int) -> list[tuple[int, Data]] | None:
        events = self._events.get(table)
        if not events:
            return None
        if events[0][0] > seq + 1:
            return None
        return [e for e in events if e[0] > seq]

    async def hands(self, table: str) -> list[Data]:
        return list(self._hands.get(table, ()))

    async def delete_table(self, table: str) -> None:
        self._states.pop(table, None)
        self._events.pop(table, None)

    async def save_player(self, player: str, token_hash: str, name: str) -> None:
        self._players[token_hash] = (player, name)

    async def find_player(self, token_hash: str) -> tuple[str, str] | None:
        return self._players.get(token_hash)

    def state(self, table: str) -> Data | None:
        """The last committed state of ``table`` (tests and operators)."""
        blob = self._states.get(table)
        return None if blob is None else msgpack.unpackb(blob, strict_map_key=False)


class GroupCommitter:
    """Gathers the checkpoints submitted in one loop iteration into one
    ``Store.commit``; at most one commit is in flight, the next batch forms
    meanwhile. ``on_commit(seconds, size)`` is called after each commit."""

    def __init__(self, store: Store, on_commit: Any = None) -> None:
        self.store = store
        self._batch: list[Checkpoint] = []
        self._waiters: list[asyncio.Future[None]] = []
        self._scheduled = False
        self._in_flight: asyncio.Task[None] | None = None
        self._on_commit = on_commit

    async def commit(self, checkpoint: Checkpoint) -> None:
        """Return once ``checkpoint`` is written; raises what the store raised.
        A store that commits synchronously (``commit_now``) needs no grouping:
        the call returns without suspending."""
        if self._in_flight is None and not self._batch:
            started = time.perf_counter()
            if self.store.commit_now((checkpoint,)):
                if self._on_commit is not None:
                    self._on_commit(time.perf_counter() - started, 1)
                return
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._batch.append(checkpoint)
        self._waiters.append(fut)
        if not self._scheduled and self._in_flight is None:
            self._scheduled = True
            loop.call_soon(self._flush)
        await fut

    def _flush(self) -> None:
        self._scheduled = False
        if not self._batch:
            return
        batch, waiters = self._batch, self._waiters
        self._batch, self._waiters = [], []
        self._in_flight = asyncio.ensure_future(self._write(batch, waiters))

    async def _write(self, batch: list[Checkpoint], waiters: list[asyncio.Future[None]]) -> None:
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            await self.store.commit(batch)
        except Exception as exc:  # handed to every waiter
            error = exc
        for fut in waiters:
            if fut.done():
                continue
            if error is None:
                fut.set_result(None)
            else:
                fut.set_exception(error)
        if self._on_commit is not None:
            self._on_commit(time.perf_counter() - started, len(batch))
        self._in_flight = None
        if self._batch:
            self._flush()
