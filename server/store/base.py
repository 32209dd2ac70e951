"""The ``Store`` interface: what the table actors and the hall ask of a store,
and the :class:`Checkpoint` a table hands to it.

Ordering guarantee (built into the table actor, whatever the store): a table's
new events, its state after them and the hands it finished are handed to the
store as one :class:`Checkpoint`; no event, snapshot or reply leaves the
server before the store's ``commit`` that holds it has returned.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cardhall.server.store.format import pack_state

Data = dict[str, Any]


class StoreUnavailable(Exception):
    """The store cannot be written or read right now (connection refused,
    timeout, Redis loading or read-only...). Tables stop and retry; nothing
    is lost."""


class StoreEmpty(StoreUnavailable):
    """The store answers but has lost its data (a Redis restarted without
    persistence): every table must be written again from memory first."""


class LeaseLost(Exception):
    """A checkpoint was refused because its fencing token is not the table's
    current lease (another node owns the table now): nothing of it was
    written, and this node must drop the table at once."""


class Checkpoint:
    """One table's commit: its state after the new events (or, between full
    states, the input log's new steps instead: ``log``), the new events as
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

    ``log`` given: a checkpoint of the input log (``server/STORAGE.md``, "The
    input log"), ``log()`` the new steps as ``(n, packed entry)``
    (:func:`~cardhall.server.store.format.pack_entry`), numbered on from the
    last one stored; ``logged`` is the number of the last. Such a checkpoint
    writes the state only when the steps cannot be packed (an input holding
    what msgpack cannot encode, such as data nested deeper than it goes): then
    it is :attr:`full` after all. A full checkpoint's state covers every step
    up to ``logged`` (its ``"log"``) and the store drops the log it held.
    """

    __slots__ = ("table", "hands", "error", "token", "publish", "info", "logged",
                 "steps",
                 "_state_fn", "_events_fn", "_state", "_events", "_log_fn", "_log", "_full")

    def __init__(self, table: str, state: Data | Callable[[], Data],
                 events: list[tuple[int, bytes]] | Callable[[], list[tuple[int, bytes]]] = (),  # type: ignore[assignment]
                 hands: list[Data] | None = None,
                 log: Callable[[], list[tuple[int, bytes]]] | None = None, logged: int | None = None,
                 steps: int = 0) -> None:
        self.table = table
        self.hands = hands or []
        self.error: BaseException | None = None
        #: the fencing token the write needs (None: no lease), set by the topology
        self.token: str | None = None
        #: ``(channel, message)`` to publish with the write, atomically (a store
        #: without pub/sub ignores it), set by the topology
        self.publish: tuple[str, bytes] | None = None
        #: the table's public info (JSON) to index with the write, when it changed, set by the topology
        self.info: bytes | None = None
        self._state_fn = state if callable(state) else None
        self._state = None if callable(state) else state
        self._events_fn = events if callable(events) else None
        self._events = None if callable(events) else list(events)
        self._log_fn = log
        self._log: list[tuple[int, bytes]] = []
        self._full: bool | None = True if log is None else None
        #: how many steps ``log()`` gives (known without packing them)
        self.steps = steps
        #: the number of the input log's last step this checkpoint holds or covers
        self.logged = logged if logged is not None else self.state.get("log", 0)

    @property
    def full(self) -> bool:
        """The checkpoint holds the table's whole state (else only its log's new
        steps: packed when this is first asked)."""
        if self._full is None:
            assert self._log_fn is not None
            try:
                self._log = self._log_fn()
                self._full = False
            except (TypeError, ValueError, OverflowError):  # msgpack's refusals: the state goes instead
                self._full = True
        return self._full

    @property
    def whole(self) -> bool:
        """The whole state is to be (or was) written: a full checkpoint, or a
        log checkpoint whose steps could not be packed. Unlike :attr:`full`
        it packs nothing: a log checkpoint no store asked about (a store
        that keeps no states) is not whole."""
        return self._full is True

    @property
    def log(self) -> list[tuple[int, bytes]]:
        """The input log's new steps, packed (empty for a full checkpoint)."""
        return [] if self.full else self._log

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
    """One table found by :meth:`Store.load_tables`: its last full state
    (``data``, migrated) and the input log stored after it (``log``: entries
    in order, :mod:`cardhall.server.table.log`), or the ``error`` that makes
    it unreadable (the hall quarantines it). The table's state now is
    ``data`` with ``log`` replayed (:func:`cardhall.server.stored.current`)."""

    id: str
    data: Data | None = None
    error: str | None = None
    log: tuple[Data, ...] = ()


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

    async def load_table(self, table: str) -> StoredTable | None:
        """One stored table not deleted (a node claiming it), or None; a store
        that can read one alone does so. Raises StoreUnavailable."""
        return next((item for item in await self.load_tables() if item.id == table), None)

    @abstractmethod
    async def events_since(self, table: str, seq: int, upto: int) -> list[tuple[int, Data]] | None:
        """The stored event records ``seq < s <= upto`` in order, or None when
        the store no longer holds all of them (trimmed, or never kept)."""

    @abstractmethod
    async def hands(self, table: str) -> list[Data]:
        """Every stored hand record of ``table`` (``{"match", "hand"}``), oldest first."""

    async def hand_count(self, table: str) -> int:
        """How many hand records ``table`` has stored (0 for an unknown table)."""
        return len(await self.hands(table))

    async def hands_range(self, table: str, start: int, stop: int) -> list[Data]:
        """The stored hand records ``start <= index < stop`` of ``table``
        (0-based, oldest first; fewer at the end): a long history is read a
        bounded batch at a time (``server/hands.py``). A record that cannot
        be read is skipped (logged)."""
        return (await self.hands(table))[max(start, 0):max(stop, 0)]

    async def quarantined_state(self, table: str) -> StoredTable | None:
        """The state kept of ``table`` if it is quarantined (``error`` set when
        unreadable or missing), else None: what bounds the export of its hands
        to finished matches (``server/hands.py``, RULES G-2)."""
        return None

    @abstractmethod
    async def delete_table(self, table: str, token: str | None = None) -> None:
        """Forget a closed table's state and events; its hands stay (G-9).
        With a fencing ``token``, only while it is the table's lease (else
        :class:`LeaseLost`, nothing deleted)."""

    @abstractmethod
    async def save_player(self, player: str, token_hash: str, name: str) -> None:
        """Remember a player (the token only as its hash)."""

    @abstractmethod
    async def find_player(self, token_hash: str) -> tuple[str, str] | None:
        """``(player id, name)`` for a token hash, or None; the name is the
        player's current one (its last :meth:`rename_player`, else the name it
        was saved with)."""

    @abstractmethod
    async def rename_player(self, player: str, token_hash: str, name: str) -> None:
        """Player ``player`` is named ``name`` from now on (SPEC "Names",
        ``rename``): :meth:`player_name` answers it, and the record of its
        token (``token_hash``; empty: no token known, only the name is kept)
        carries it. Raises StoreUnavailable (nothing to assume written)."""

    @abstractmethod
    async def player_name(self, player: str) -> str | None:
        """The name player ``player`` was last renamed to, or None when it was
        never renamed (or the rename has expired with the player's other
        records). Raises StoreUnavailable."""

    def player_renamed(self, player: str, token_hash: str, name: str) -> None:  # noqa: B027
        """Another node of the service renamed ``player`` (and wrote it): a
        store that caches players keeps ``name`` in its copy (nothing is
        written). Optional: the default caches nothing."""

    async def touch_players(self, players: Sequence[str]) -> None:  # noqa: B027
        """The players with these ids are in use (connected, seated or owning a
        table): a store whose players expire starts their time again
        (``Settings.player_expiry``). Optional: the default keeps nothing."""

    async def forget_player(self, token_hash: str) -> None:  # noqa: B027
        """This process forgets an idle player (``Settings.player_expiry``):
        what it holds in memory goes; a shared store lets the record expire
        by itself (another node may still use it). Optional."""

    async def quarantine(self, table: str, reason: str, token: str | None = None) -> None:  # noqa: B027
        """Set an unreadable table aside: it is no longer loaded, its data is
        kept for an operator (``server/STORAGE.md``). With a fencing
        ``token``, only while it is the table's lease (else :class:`LeaseLost`).
        Optional: a store may keep nothing."""

    async def quarantined(self) -> dict[str, str]:
        """Quarantined table ids and why."""
        return {}

    def set_aside(self) -> dict[str, str]:
        """Entries of the table index this store moved to the quarantine by
        itself while reading the index, because they are no table id at all
        (a printable name -> why); the hall counts them with the tables it
        quarantined. Empty for a store whose index cannot hold such entries."""
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

    async def close(self) -> None:  # noqa: B027 (optional: a store may hold no connection)
        """Release connections."""

