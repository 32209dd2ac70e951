"""Where tables, their events and hand histories are kept: the ``Store``
interface, the checkpoint format, the in-memory store, and group commit.

Ordering guarantee (built into the table actor, whatever the store): a table's
new events, its state after them and the hands it finished are handed to the
store as one :class:`Checkpoint`; no event, snapshot or reply leaves the
server before the store's ``commit`` that holds it has returned. The
:class:`GroupCommitter` gathers the checkpoints of every table that acted in
the same event-loop iteration into one ``commit`` call (one round trip for a
networked store) and releases each table when it returns.

Two stores implement the interface: :class:`MemoryStore` (the default; nothing
outlives the process) and :class:`server.store_redis.RedisStore` (``cardhall
serve --redis URL``). ``server/STORAGE.md`` documents the format and the Redis
key layout.

Format (both stores): a table's state is ``Table.to_data()`` packed with
msgpack; its ``"v"`` is :data:`FORMAT_VERSION`. :func:`unpack_state` reads a
stored state, upgrading an older version through :data:`MIGRATIONS`, and
raises :class:`CheckpointError` for anything it cannot read (the hall then
quarantines that table).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import msgpack

Data = dict[str, Any]
T = TypeVar("T")

#: format version of a stored table state (``Table.to_data()["v"]``). Bump it
#: when the state changes and add a migration. 1: the first; 2: the last
#: recorded hand is kept as its digest (``last_hand_digest``) instead of the
#: whole record (``last_hand``).
FORMAT_VERSION = 2
STATE_VERSION = FORMAT_VERSION  # the name table.py uses
#: format version of a stored event record (``{"data", "private"?, "ts", "turn"?}``)
EVENT_VERSION = 1

#: one packer for every state and event record (the service is single-threaded)
_packer = msgpack.Packer(autoreset=True)


def hand_digest(record: Data | None) -> str | None:
    """A short digest of a hand record: how a table knows a hand is already recorded.

    >>> hand_digest({"n": 1}) == hand_digest({"n": 1}) != hand_digest({"n": 2})
    True
    """
    if record is None:
        return None
    return hashlib.sha256(_packer.pack(record)).hexdigest()[:32]


def _v1_to_v2(data: Data) -> Data:
    """Format 1 kept the whole last hand record; 2 keeps its digest."""
    data = dict(data)
    data["last_hand_digest"] = hand_digest(data.pop("last_hand", None))
    return data


#: ``MIGRATIONS[v]`` turns a state of version ``v`` into one of ``v + 1``
#: (plain data in, plain data out). A checkpoint written by an older server is
#: upgraded step by step when it is read; it is written back in the current
#: format by the table's next checkpoint.
MIGRATIONS: dict[int, Callable[[Data], Data]] = {1: _v1_to_v2}


class CheckpointError(ValueError):
    """A stored checkpoint that cannot be read: not msgpack, not a map, or
    of a format version this server does not know (newer, or with no
    migration path)."""


class StoreUnavailable(Exception):
    """The store cannot be written or read right now (connection refused,
    timeout, Redis loading or read-only...). Tables stop and retry; nothing
    is lost."""


class StoreEmpty(StoreUnavailable):
    """The store answers but has lost its data (a Redis restarted without
    persistence): every table must be written again from memory first."""


def pack_state(state: Data) -> bytes:
    """A table state (``Table.to_data()``) as stored: msgpack bytes."""
    return _packer.pack(state)


def unpack_state(blob: bytes | None) -> Data:
    """The state in ``blob``, migrated to :data:`FORMAT_VERSION`; raises
    :class:`CheckpointError` when it cannot be read.

    >>> unpack_state(pack_state({"v": FORMAT_VERSION, "id": "t_1"}))["id"]
    't_1'
    >>> unpack_state(b"\\xc1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    server.store.CheckpointError: not a msgpack checkpoint: ...
    >>> unpack_state(pack_state({"v": 99}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    server.store.CheckpointError: checkpoint format 99 is newer than this server's (...)
    """
    if blob is None:
        raise CheckpointError("no state stored")
    try:
        data = msgpack.unpackb(blob, strict_map_key=False)
    except Exception as exc:
        raise CheckpointError(f"not a msgpack checkpoint: {exc!r}"[:200]) from None
    if not isinstance(data, dict):
        raise CheckpointError(f"checkpoint is a {type(data).__name__}, not a map")
    return migrate(data)


def migrate(data: Data) -> Data:
    """``data`` upgraded to :data:`FORMAT_VERSION` through :data:`MIGRATIONS`;
    :class:`CheckpointError` for a version that is unknown or newer."""
    version = data.get("v")
    if isinstance(version, bool) or not isinstance(version, int):
        raise CheckpointError(f"checkpoint has no format version (v={version!r})")
    if version > FORMAT_VERSION:
        raise CheckpointError(f"checkpoint format {version} is newer than this server's ({FORMAT_VERSION})")
    while version < FORMAT_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise CheckpointError(f"no migration from checkpoint format {version} to {version + 1}")
        data = step(data)
        version += 1
        data["v"] = version
    return data


def pack_event(record: Data) -> bytes:
    """A stored event record (``{"data", "private"?, "ts", "turn"?}``) as bytes."""
    return _packer.pack(record)


def pack_record(event: Any, ts: float, turn: Data | None) -> bytes:
    """The stored event record of ``event`` (an ``engine.base.Event``) that
    happened at ``ts`` (Unix seconds) and began ``turn`` (or None), packed:
    ``Event.to_data()`` plus ``ts`` and ``turn``. The table packs each
    committed event once; the same bytes go to the store and to its event
    buffer (``server/buffer.py``).

    >>> from engine.base import Event
    >>> unpack_event(pack_record(Event({"type": "deal"}, {2: {"cards": ["Ah"]}}), 1.5, None))
    {'data': {'type': 'deal'}, 'private': {'2': {'cards': ['Ah']}}, 'ts': 1.5}
    """
    record = event.to_data()
    record["ts"] = ts
    if turn is not None:
        record["turn"] = turn
    return _packer.pack(record)


def unpack_event(blob: bytes) -> Data:
    """The event record in ``blob``; :class:`CheckpointError` if unreadable."""
    try:
        record = msgpack.unpackb(blob, strict_map_key=False)
    except Exception as exc:
        raise CheckpointError(f"not a msgpack event: {exc!r}"[:200]) from None
    if not isinstance(record, dict) or "data" not in record:
        raise CheckpointError("event record without data")
    return record


class Checkpoint:
    """One table's commit: its state after the new events, the new events as
    ``(seq, packed event record)`` in order (:func:`pack_record`: packed once,
    the table keeps the same bytes in its event buffer), and the hands finished
    since the last commit (``{"game", "match", "hand", "seq"}``: ``seq`` is the
    table's seq when the hand was recorded; a store writes each hand once, by
    that ``seq``).

    ``state`` and ``events`` are computed when first read: the table's actor
    waits for its commit, so the state cannot change before the store has read
    it, and a store that keeps no states pays nothing for it. A store that
    cannot encode this checkpoint (a bug in a state) sets ``error`` and writes
    the others; the committer hands the error to this table alone.
    """

    __slots__ = ("table", "hands", "error", "_state_fn", "_events_fn", "_state", "_events")

    def __init__(self, table: str, state: Data | Callable[[], Data],
                 events: list[tuple[int, bytes]] | Callable[[], list[tuple[int, bytes]]] = (),  # type: ignore[assignment]
                 hands: list[Data] | None = None) -> None:
        self.table = table
        self.hands = hands or []
        self.error: BaseException | None = None
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
    def events(self) -> list[tuple[int, bytes]]:
        """The new events, packed (computed once, then kept: bytes cost the
        garbage collector nothing)."""
        if self._events is None:
            assert self._events_fn is not None
            self._events = self._events_fn()
        return self._events

    def packed_state(self) -> bytes:
        """The state packed (:func:`pack_state`), for a store that writes it at
        once: a state computed for it is not kept (thousands of short-lived
        containers per batch would otherwise stay alive during the round trip
        and make the garbage collector run many times more often)."""
        state = pack_state(self.state)
        if self._state_fn is not None:
            self._state = None
        return state


@dataclass(frozen=True, slots=True)
class StoredTable:
    """One table found by :meth:`Store.load_tables`: its migrated ``data``,
    or the ``error`` that makes it unreadable (the hall quarantines it)."""

    id: str
    data: Data | None = None
    error: str | None = None


class Store(ABC):
    """Durable state of the service. All methods are coroutines; a store that
    cannot be reached raises :class:`StoreUnavailable`."""

    #: short name for ``/healthz`` and logs
    kind = "store"

    @abstractmethod
    async def commit(self, batch: Sequence[Checkpoint]) -> None:
        """Write every checkpoint of ``batch``, each one atomically and
        idempotently: events whose ``seq`` is already stored and hands whose
        ``seq`` is already stored are not written again, so a commit may be
        retried after a failure. A checkpoint that cannot be encoded gets its
        ``error`` set and is skipped."""

    def commit_now(self, batch: Sequence[Checkpoint]) -> bool:
        """Commit at once without awaiting, if this store can; returns False
        (the default) when it cannot, and the batch goes through :meth:`commit`."""
        return False

    @abstractmethod
    async def load_tables(self) -> list[StoredTable]:
        """Every stored table not deleted (for recovery), readable or not."""

    @abstractmethod
    async def events_since(self, table: str, seq: int, upto: int) -> list[tuple[int, Data]] | None:
        """The stored event records ``seq < s <= upto`` in order, or None when
        the store no longer holds all of them (trimmed, or never kept)."""

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

    async def quarantine(self, table: str, reason: str) -> None:
        """Set an unreadable table aside: it is no longer loaded, its data is
        kept for an operator (``server/STORAGE.md``)."""

    async def quarantined(self) -> dict[str, str]:
        """Quarantined table ids and why."""
        return {}

    async def probe(self) -> bool:
        """Is the store reachable? True when it holds its data, False when it
        answers but has lost everything (a new, empty Redis); raises
        :class:`StoreUnavailable` when it does not answer."""
        return True

    async def rewrite(self, batch: Sequence[Checkpoint]) -> None:
        """Write ``batch`` (every table, from memory) and the players this
        process knows into a store that lost its data, and mark it as holding
        data again."""
        await self.commit(batch)

    def describe(self) -> Data:
        """What ``/healthz`` shows about the store."""
        return {"kind": self.kind}

    async def close(self) -> None:
        """Release connections."""


class MemoryStore(Store):
    """Keeps everything in this process (the default: ``cardhall serve`` needs
    nothing else). Nothing kept here outlives the process, so by default it
    keeps no table states (they could never be recovered) and costs nothing on
    the hot path; with ``keep_states=True`` (tests, tools) it stores every
    committed state packed with msgpack, as a networked store would, so a state
    that does not survive msgpack fails there too.

    Hand histories are kept for as long as the process runs (G-9), each packed
    with msgpack (a few hundred bytes, untracked by the garbage collector,
    instead of ~3 KiB of live lists and dicts: at full speed 500 tables finish
    ~250 hands a second, and keeping them as objects was the server's memory
    growth; deploy/README.md). Long-running services keep them in Redis."""

    kind = "memory"

    def __init__(self, event_bound: int = 1024, keep_states: bool = False) -> None:
        self.keep_states = keep_states
        self._states: dict[str, bytes] = {}
        self._events: dict[str, deque[tuple[int, bytes]]] = {}
        self._hands: dict[str, list[bytes]] = {}
        self._hand_seq: dict[str, int] = {}
        self._players: dict[str, tuple[str, str]] = {}
        self._quarantine: dict[str, str] = {}
        self._event_bound = event_bound
        self.commits = 0

    async def commit(self, batch: Sequence[Checkpoint]) -> None:
        self.commit_now(batch)

    def commit_now(self, batch: Sequence[Checkpoint]) -> bool:
        """In-process: done at once (no loop iteration is lost waiting)."""
        self.commits += 1
        for cp in batch:
            if self.keep_states:
                try:
                    state = cp.packed_state()
                    events = cp.events
                except Exception as exc:
                    cp.error = exc
                    continue
                self._states[cp.table] = state
                stream = self._events.get(cp.table)
                if stream is None:
                    stream = self._events[cp.table] = deque(maxlen=self._event_bound)
                last = stream[-1][0] if stream else 0
                stream.extend(e for e in events if e[0] > last)
            if cp.hands:
                done = self._hand_seq.get(cp.table, 0)
                new = [h for h in cp.hands if h.get("seq", done + 1) > done]
                if new:
                    self._hands.setdefault(cp.table, []).extend(pack_event(h) for h in new)
                    self._hand_seq[cp.table] = max(h.get("seq", done) for h in new)
        return True

    async def load_tables(self) -> list[StoredTable]:
        out = []
        for table, blob in self._states.items():
            if table in self._quarantine:
                continue
            try:
                out.append(StoredTable(table, unpack_state(blob)))
            except CheckpointError as exc:
                out.append(StoredTable(table, error=str(exc)))
        return out

    async def events_since(self, table: str, seq: int, upto: int) -> list[tuple[int, Data]] | None:
        if upto <= seq:
            return []
        stream = self._events.get(table)
        if not stream or stream[0][0] > seq + 1:
            return None
        out = [(s, unpack_event(blob)) for s, blob in stream if seq < s <= upto]
        return out if len(out) == upto - seq else None

    async def hands(self, table: str) -> list[Data]:
        return [msgpack.unpackb(blob, strict_map_key=False) for blob in self._hands.get(table, ())]

    async def delete_table(self, table: str) -> None:
        self._states.pop(table, None)
        self._events.pop(table, None)

    async def save_player(self, player: str, token_hash: str, name: str) -> None:
        self._players[token_hash] = (player, name)

    async def find_player(self, token_hash: str) -> tuple[str, str] | None:
        return self._players.get(token_hash)

    async def quarantine(self, table: str, reason: str) -> None:
        self._quarantine[table] = reason

    async def quarantined(self) -> dict[str, str]:
        return dict(self._quarantine)

    def state(self, table: str) -> Data | None:
        """The last committed state of ``table`` (tests and operators)."""
        blob = self._states.get(table)
        return None if blob is None else unpack_state(blob)

    def drop_events(self, table: str) -> None:
        """Forget ``table``'s stored events (tests: a ``since`` nobody holds any more)."""
        self._events.pop(table, None)

    def put_raw_state(self, table: str, blob: bytes) -> None:
        """Store ``blob`` as ``table``'s state as is (tests of unreadable checkpoints)."""
        self._states[table] = blob


class GroupCommitter:
    """Gathers the checkpoints submitted in one loop iteration into one
    ``Store.commit``; up to ``max_in_flight`` commits (default 2) are in flight
    at once, the next batch forms meanwhile. While a slot is free a pending
    batch goes at once; a batch of at least ``2 * min_split`` checkpoints that
    finds every slot free is sent as two commits, so the tables form two groups
    that take turns: the process applies and packs one group while the store
    writes the other (with one commit in flight it sat idle during each write:
    ~12 % of its time with Redis at full speed, deploy/README.md). Each table
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

    @property
    def in_flight(self) -> int:
        """Commits being written now."""
        return len(self._writes)

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
        self._writes.discard(asyncio.current_task())  # type: ignore[arg-type]
        if self._batch:
            self._flush()
