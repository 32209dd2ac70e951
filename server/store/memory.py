"""The in-memory store, the default: ``cardhall serve`` needs nothing else."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

import msgpack

from cardhall.server.store.base import Checkpoint, Store, StoredTable
from cardhall.server.store.format import CheckpointError, pack_event, unpack_entry, unpack_event, unpack_state
from cardhall.server.stored import current

Data = dict[str, Any]


class MemoryStore(Store):
    """Keeps everything in this process (the default: ``cardhall serve`` needs
    nothing else). Nothing kept here outlives the process, so by default it
    keeps no table states (they could never be recovered) and costs nothing on
    the hot path; with ``keep_states=True`` (tests, tools) it stores every
    committed state (and input log: ``server/STORAGE.md``) packed with msgpack,
    as a networked store would, so a state that does not survive msgpack fails
    there too.

    Hand histories are kept for as long as the process runs (G-9), each packed
    with msgpack (a few hundred bytes, untracked by the garbage collector,
    instead of ~3 KiB of live lists and dicts: at full speed 500 tables finish
    ~250 hands a second, and keeping them as objects was the server's memory
    growth; deploy/README.md). Long-running services keep them in Redis."""

    kind = "memory"

    def __init__(self, event_bound: int = 1024, keep_states: bool = False) -> None:
        self.keep_states = keep_states
        self._states: dict[str, bytes] = {}
        self._logs: dict[str, list[tuple[int, bytes]]] = {}
        self._logn: dict[str, int] = {}  # the number of the last input log step stored or covered
        self._events: dict[str, deque[tuple[int, bytes]]] = {}
        self._hands: dict[str, list[bytes]] = {}
        self._hand_seq: dict[str, int] = {}
        self._players: dict[str, tuple[str, str]] = {}
        self._names: dict[str, str] = {}  # player id -> the name it was last renamed to
        self._tokens: dict[str, int] = {}  # player id -> its tokens kept (a player may have several)
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
                    state = cp.packed_state() if cp.full else None
                    events = cp.events
                    steps = cp.log
                except Exception as exc:
                    cp.error = exc
                    continue
                done = self._logn.get(cp.table, 0)
                if state is not None:  # a full state replaces the log
                    self._states[cp.table] = state
                    self._logs[cp.table] = []
                    self._logn[cp.table] = cp.logged
                elif steps and steps[-1][0] > done:
                    self._logs.setdefault(cp.table, []).extend(step for step in steps if step[0] > done)
                    self._logn[cp.table] = steps[-1][0]
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
        return [self._stored(table) for table in self._states if table not in self._quarantine]

    def _stored(self, table: str) -> StoredTable:
        """``table``'s last full state and its input log, or why they cannot be read."""
        try:
            log = tuple(unpack_entry(blob) for _, blob in self._logs.get(table, ()))
            return StoredTable(table, unpack_state(self._states[table]), log=log)
        except CheckpointError as exc:
            return StoredTable(table, error=str(exc))

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

    async def hand_count(self, table: str) -> int:
        return len(self._hands.get(table, ()))

    async def hands_range(self, table: str, start: int, stop: int) -> list[Data]:
        blobs = self._hands.get(table, [])[max(start, 0):max(stop, 0)]
        return [msgpack.unpackb(blob, strict_map_key=False) for blob in blobs]

    async def quarantined_state(self, table: str) -> StoredTable | None:
        if table not in self._quarantine:
            return None
        blob = self._states.get(table)
        if blob is None:
            return StoredTable(table, error="no state kept")
        try:
            return StoredTable(table, unpack_state(blob))
        except CheckpointError as exc:
            return StoredTable(table, error=str(exc))

    async def delete_table(self, table: str, token: str | None = None) -> None:
        self._states.pop(table, None)
        self._logs.pop(table, None)
        self._logn.pop(table, None)
        self._events.pop(table, None)

    async def save_player(self, player: str, token_hash: str, name: str) -> None:
        if token_hash not in self._players:
            self._tokens[player] = self._tokens.get(player, 0) + 1
        self._players[token_hash] = (player, name)

    async def find_player(self, token_hash: str) -> tuple[str, str] | None:
        found = self._players.get(token_hash)
        if found is None:
            return None
        return found[0], self._names.get(found[0], found[1])

    async def rename_player(self, player: str, token_hash: str, name: str) -> None:
        self._names[player] = name

    async def player_name(self, player: str) -> str | None:
        return self._names.get(player)

    async def forget_player(self, token_hash: str) -> None:
        """This process is the only user of the store: the record goes (its token is unknown from now on),
        and the player's name with its last token."""
        found = self._players.pop(token_hash, None)
        if found is not None:
            left = self._tokens.pop(found[0], 1) - 1
            if left:
                self._tokens[found[0]] = left
            else:
                self._names.pop(found[0], None)

    async def quarantine(self, table: str, reason: str, token: str | None = None) -> None:
        self._quarantine[table] = reason

    async def quarantined(self) -> dict[str, str]:
        return dict(self._quarantine)

    def state(self, table: str) -> Data | None:
        """The state of ``table`` now (tests and operators): its last full
        state with its input log replayed; CheckpointError when unreadable."""
        if table not in self._states:
            return None
        item, _ = current(self._stored(table))
        if item.data is None:
            raise CheckpointError(item.error or "unreadable")
        return item.data

    def log_length(self, table: str) -> int:
        """Steps of ``table``'s input log stored after its last full state (tests)."""
        return len(self._logs.get(table, ()))

    def drop_events(self, table: str) -> None:
        """Forget ``table``'s stored events (tests: a ``since`` nobody holds any more)."""
        self._events.pop(table, None)

    def put_raw_state(self, table: str, blob: bytes) -> None:
        """Store ``blob`` as ``table``'s state as is, without a log (tests of unreadable checkpoints)."""
        self._states[table] = blob
        self._logs.pop(table, None)

