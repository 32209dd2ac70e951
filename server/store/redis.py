"""The Redis store (``cardhall serve --redis URL``): tables, their event
streams, hand histories and players in Redis, through redis-py's asyncio
client (hiredis parses the replies).

One group commit is one ``EVALSHA`` of :data:`COMMIT_SCRIPT`: for every table
of the batch it appends the new events to the table's stream (entry id =
``seq``, trimmed to about ``stream_bound`` entries), sets the state, appends
the finished hands and adds the table to the index. A Lua script runs
atomically, so each checkpoint (in fact the whole batch) is written entirely
or not at all, and it is idempotent: events and hands already stored (by
``seq``) are skipped, so a commit whose reply was lost can be sent again.
Before writing, the script checks the store's marker key; when Redis has lost
its data (restarted without persistence) the marker is gone, nothing is
written and :class:`~cardhall.server.store.base.StoreEmpty` tells the hall to write every
table again from memory (:meth:`RedisStore.rewrite`).

Key layout and format: ``server/STORAGE.md``.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

import msgpack
import redis.asyncio as aioredis
from redis import exceptions as rexc
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.typing import EncodableT, FieldT

from cardhall.server.store.base import (
    Checkpoint,
    Data,
    LeaseLost,
    Store,
    StoredTable,
    StoreEmpty,
    StoreUnavailable,
)
from cardhall.server.store.format import FORMAT_VERSION, CheckpointError, unpack_event
from cardhall.server.store.keys import Keys
from cardhall.server.store.redis_index import stored_table, table_ids
from cardhall.server.store.redis_packing import use_hiredis_packing
from cardhall.server.store.redis_players import RedisPlayers
from cardhall.server.store.scripts import (
    COMMIT_SCRIPT,
    COMMIT_SHA,
    DELETE_SCRIPT,
    EMPTY,
    EVENT_FIELD,
    MIGRATE_KEYS_SCRIPT,
    QUARANTINE_SCRIPT,
)
from cardhall.server.stored import current

log = logging.getLogger("cardhall.store")

T = TypeVar("T")

# The replies of this store's client, as they are: it is made with
# ``decode_responses=False``, so every string in a reply is bytes. redis-py
# types its replies for either setting (``bytes | str``), so the reads below
# cast them to these.
#: a GET, HGET or MGET item: the value, or None for no key
Blob = bytes | None
#: an XRANGE: (entry id, fields) pairs
StreamEntries = list[tuple[bytes, dict[bytes, bytes]]]

#: tables per script call when rewriting everything (bounds one command's size)
REWRITE_CHUNK = 50
#: table states read per MGET at start-up
LOAD_CHUNK = 500


def redact_url(url: str) -> str:
    """``url`` without its password (for logs and ``/healthz``).

    >>> redact_url("redis://:secret@db:6379/2")
    'redis://:***@db:6379/2'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


class RedisStore(Store):
    """Tables, events, hands and players in the Redis at ``url`` under keys
    starting with ``prefix`` (shared by every node of one cluster).

    ``stream_bound``: events kept per table stream (approximately: Redis trims
    whole stream nodes), for ``join`` with ``since`` after a restart.
    ``timeout``: seconds a Redis command may take before the store counts as
    unavailable (a stopped Redis that keeps the socket open).
    Every method raises :class:`~cardhall.server.store.base.StoreUnavailable` when Redis
    cannot be reached.
    """

    kind = "redis"

    def __init__(self, url: str, prefix: str = "cardhall", stream_bound: int = 1024, timeout: float = 3.0,
                 player_ttl: float = 0.0) -> None:
        self.url = url
        #: seconds a player's keys live after their last use (0: for ever; ``Settings.player_expiry``)
        self.player_ttl = player_ttl
        self.prefix = prefix
        self.stream_bound = stream_bound
        self.client = aioredis.Redis.from_url(
            url, decode_responses=False, socket_timeout=timeout, socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 1), health_check_interval=0,
        )
        use_hiredis_packing(self.client)  # the group commit's long EVALSHA packed in C
        #: the same Redis without the one retry: for what must not be sent twice (a command that
        #: timed out may have been carried out: every script of the store is idempotent, a
        #: ``PUBLISH`` of a request is not)
        self.once = aioredis.Redis.from_url(
            url, decode_responses=False, socket_timeout=timeout, socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0), health_check_interval=0,
        )
        self.run_id: str | None = None
        #: index members that are no table id, moved to the quarantine (:meth:`set_aside`)
        self._set_aside: dict[str, str] = {}
        #: the marker's generation this store saw (a new one means Redis lost its data meanwhile)
        self.generation: bytes | None = None
        self.keys = Keys(prefix)
        self._meta = self.keys.meta
        self._tables = self.keys.tables
        self._quarantine = self.keys.quarantine
        #: milliseconds a lease taken by a rewrite lasts (the cluster node sets it)
        self.lease_ms = 3000
        #: the players' keys, and every player this process saved or found
        self.players = RedisPlayers(self.client, self.keys, self._call, player_ttl)

    # -- keys ---------------------------------------------------------------
    def table_keys(self, table: str) -> tuple[str, str, str, str]:
        """``(state, events, hands, handseq)`` keys of ``table``."""
        k = self.keys
        return k.state(table), k.events(table), k.hands(table), k.handseq(table)

    # -- plumbing -----------------------------------------------------------
    async def _call(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run one Redis exchange, mapping Redis trouble to StoreUnavailable."""
        try:
            return await make()
        except rexc.ResponseError as exc:
            text = str(exc)
            if text.startswith(EMPTY):
                raise StoreEmpty(text) from None
            raise StoreUnavailable(f"redis: {text}") from None
        except (rexc.RedisError, OSError) as exc:
            raise StoreUnavailable(f"redis: {type(exc).__name__}: {exc}") from None

    async def _script(self, keys: list[str], args: list[Any]) -> Any:
        async def run() -> Any:
            try:
                return await self.client.execute_command("EVALSHA", COMMIT_SHA, len(keys), *keys, *args)
            except rexc.NoScriptError:  # a new or restarted Redis: load it once
                await self.client.execute_command("SCRIPT", "LOAD", COMMIT_SCRIPT)
                return await self.client.execute_command("EVALSHA", COMMIT_SHA, len(keys), *keys, *args)
        return await self._call(run)

    def _pack(self, batch: Sequence[Checkpoint], mode: str) -> tuple[list[str], list[Any]]:
        """Script KEYS and ARGV for ``batch`` (ARGV has only the two first
        arguments when nothing is left to write); a checkpoint that cannot be
        packed gets its ``error`` and is left out."""
        k = self.keys
        keys = [k.meta, k.tables, k.lobby]
        args: list[Any] = [mode, self.stream_bound, self.lease_ms]
        packb = msgpack.packb
        for cp in batch:
            try:
                state = cp.packed_state() if cp.full else b""
                rest = [
                    [x for event in cp.events for x in event],  # seq, packed record, ...
                    [x for hand in cp.hands for x in (hand["seq"], packb(hand))],
                    [x for step in cp.log for x in step],  # n, packed entry, ...
                    cp.logged,
                ]
                # Redis's Lua msgpack reads strings, not the bin type: bytes go as raw strings
                extra = packb(rest, use_bin_type=False)
            except Exception as exc:
                cp.error = exc
                continue
            t = cp.table
            keys += (k.state(t), k.events(t), k.hands(t), k.handseq(t), k.lease(t), k.epoch(t), k.log(t), k.logn(t))
            channel, message = cp.publish or ("", b"")
            args += (t, cp.token or "", state, extra, channel, message, cp.info or b"")
        return keys, args

    # -- the Store interface ------------------------------------------------
    async def commit(self, batch: Sequence[Checkpoint]) -> None:
        keys, args = self._pack(batch, "c")
        if len(args) > 3:
            self._refused(batch, await self._script(keys, args))

    @staticmethod
    def _refused(batch: Sequence[Checkpoint], refused: Any) -> None:
        """Give each checkpoint the script refused (not its lease) :class:`LeaseLost`."""
        if not refused:
            return
        ids = {r.decode() if isinstance(r, bytes) else str(r) for r in refused}
        for cp in batch:
            if cp.table in ids and cp.error is None:
                cp.error = LeaseLost(f"table {cp.table}: the lease is not this node's")

    async def load_tables(self) -> list[StoredTable]:
        """Every table of the index (:func:`~cardhall.server.store.redis_index.table_ids`:
        a member that is no id is set aside) with its state or the error that
        makes it unreadable."""
        client = self.client
        ids = await self.table_ids()
        out: list[StoredTable] = []
        for start in range(0, len(ids), LOAD_CHUNK):
            out += await self._load_chunk(ids[start:start + LOAD_CHUNK])
        if not await self._call(lambda: client.exists(self._meta)):
            await self._mark()
        await self.probe()
        await self._call(lambda: client.execute_command("SCRIPT", "LOAD", COMMIT_SCRIPT))
        return out

    async def _load_chunk(self, tables: Sequence[str]) -> list[StoredTable]:
        """``tables`` with their states (one ``MGET``) and input logs (:meth:`_logs`)."""
        keys = [self.keys.state(t) for t in tables]
        blobs = cast(list[Blob], await self._call(lambda: self.client.mget(keys)))
        logs = await self._call(lambda: self._logs(tables))
        return [stored_table(table, blob, log) for table, blob, log in zip(tables, blobs, logs)]

    async def _logs(self, tables: Sequence[str]) -> list[list[bytes]]:
        """The stored input log of each of ``tables`` (one pipeline of ``LRANGE``)."""
        async with self.client.pipeline(transaction=False) as pipe:
            for table in tables:
                pipe.lrange(self.keys.log(table), 0, -1)
            return list(await pipe.execute())

    async def migrate_keys(self) -> int:
        """Move every table stored under the key names before hash tags
        (``P:t:{id}``) to its names now; returns the number of tables moved.
        Idempotent, and safe while other nodes start (one script per table)."""
        ids = await self.table_ids()
        moved = 0
        for table in ids:
            moved += 1 if await self._migrate_table(table) else 0
        if moved:
            log.warning("moved %d tables to the hash-tagged key names (server/STORAGE.md)", moved)
        return moved

    async def _migrate_table(self, table: str) -> bool:
        """One :data:`MIGRATE_KEYS_SCRIPT` call for ``table``: True when it moved the keys."""
        old = self.keys.legacy_state(table)
        keys = [old, old + ":events", old + ":hands", old + ":handseq", *self.table_keys(table)]
        return bool(await self._call(lambda: self.client.eval(MIGRATE_KEYS_SCRIPT, len(keys), *keys)))

    async def table_ids(self) -> list[str]:
        """Ids of every stored table (``P:tables``); a member that is not
        UTF-8 text is moved to the quarantine and named in :meth:`set_aside`."""
        return await self._call(lambda: table_ids(self.client, self.keys, self._set_aside))

    def set_aside(self) -> dict[str, str]:
        return dict(self._set_aside)

    async def load_table(self, table: str) -> StoredTable | None:
        """One stored table (None when it is not stored, or quarantined: set
        aside for an operator, never served again); an unreadable one comes
        with its ``error``."""
        async def run() -> list[Any]:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.get(self.keys.state(table))
                pipe.hexists(self._quarantine, table)
                pipe.lrange(self.keys.log(table), 0, -1)
                return list(await pipe.execute())
        blob, quarantined, log = await self._call(run)
        if blob is None or quarantined:
            return None
        return stored_table(table, blob, log)

    async def events_since(self, table: str, seq: int, upto: int) -> list[tuple[int, Data]] | None:
        if upto <= seq:
            return []
        key = self.table_keys(table)[1]
        entries = cast(StreamEntries, await self._call(lambda: self.client.xrange(key, f"{seq + 1}-0", f"{upto}-0")))
        out: list[tuple[int, Data]] = []
        expected = seq + 1
        for entry_id, fields in entries:
            number = int(entry_id.split(b"-")[0])
            blob = fields.get(EVENT_FIELD)
            if number != expected or blob is None:
                return None
            try:
                out.append((number, unpack_event(blob)))
            except CheckpointError:
                return None
            expected += 1
        return out if expected == upto + 1 else None

    async def hands(self, table: str) -> list[Data]:
        return await self._hand_list(table, 0, -1)

    async def quarantined_state(self, table: str) -> StoredTable | None:
        """One pipeline: ``HEXISTS P:quarantine``, ``GET`` the state."""
        async def run() -> list[Any]:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.hexists(self._quarantine, table)
                pipe.get(self.keys.state(table))
                return list(await pipe.execute())
        quarantined, blob = await self._call(run)
        if not quarantined:
            return None
        return stored_table(table, blob) if blob is not None else StoredTable(table, error="no state kept")

    async def hand_count(self, table: str) -> int:
        key = self.table_keys(table)[2]
        return int(await self._call(lambda: self.client.llen(key)))

    async def hands_range(self, table: str, start: int, stop: int) -> list[Data]:
        """One ``LRANGE`` of the batch."""
        start = max(start, 0)
        return await self._hand_list(table, start, stop - 1) if stop > start else []

    async def _hand_list(self, table: str, first: int, last: int) -> list[Data]:
        """The hand records ``first..last`` (inclusive, as ``LRANGE``: -1 is the end)."""
        key = self.table_keys(table)[2]
        blobs = await self._call(lambda: self.client.lrange(key, first, last))
        out = []
        for blob in blobs:
            try:
                out.append(msgpack.unpackb(blob, strict_map_key=False))
            except Exception:
                log.error("table %s: an unreadable hand record in %s was skipped", table, key)
        return out

    async def delete_table(self, table: str, token: str | None = None) -> None:
        k = self.keys
        keys = [k.tables, k.lobby, k.state(table), k.events(table), k.lease(table), k.epoch(table),
                k.log(table), k.logn(table)]
        done = await self._call(lambda: self.client.eval(DELETE_SCRIPT, len(keys), *keys, table, token or ""))
        if not done:
            raise LeaseLost(f"table {table}: the lease is not this node's; not deleted")

    async def save_player(self, player: str, token_hash: str, name: str) -> None:
        await self.players.save(player, token_hash, name)

    async def touch_players(self, players: Sequence[str]) -> None:
        """Renew both keys of each player in ``players`` (ids) for ``player_ttl`` seconds."""
        await self.players.touch(players)

    async def forget_player(self, token_hash: str) -> None:
        """Drop the cached record; the keys expire by themselves (another node may still use the player)."""
        self.players.cache.pop(token_hash, None)

    async def find_player(self, token_hash: str) -> tuple[str, str] | None:
        return await self.players.find(token_hash)

    async def quarantine(self, table: str, reason: str, token: str | None = None) -> None:
        note = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {reason}"
        k = self.keys
        keys = [k.tables, k.lobby, k.quarantine, k.lease(table)]
        done = await self._call(lambda: self.client.eval(QUARANTINE_SCRIPT, len(keys), *keys, table, note, token or ""))
        if not done:
            raise LeaseLost(f"table {table}: the lease is not this node's; not quarantined")

    async def quarantined(self) -> dict[str, str]:
        raw = cast(dict[bytes, bytes], await self._call(lambda: self.client.hgetall(self._quarantine)))
        return {k.decode(): v.decode(errors="replace") for k, v in raw.items()}

    async def probe(self) -> bool:
        """Also False when the marker's ``generation`` is not the one this
        store saw before: Redis lost its data and another node of the cluster
        has already written the marker again (this node must write its own
        tables again too)."""
        client = self.client

        async def run() -> tuple[Any, Any, Any]:
            info = await client.info("server")
            generation = await client.hget(self._meta, "generation")
            if generation is None and await client.exists(self._meta):  # a marker from before generations
                await client.hsetnx(self._meta, "generation", secrets.token_hex(8))
                generation = await client.hget(self._meta, "generation")
            return info.get("run_id"), generation is not None, generation
        run_id, marked, generation = await self._call(run)
        if self.run_id is not None and run_id != self.run_id:
            log.warning("redis %s restarted (run_id %s -> %s)", redact_url(self.url), self.run_id, run_id)
        self.run_id = run_id
        if not marked:
            return False
        if self.generation is None:
            self.generation = generation
        return generation == self.generation

    async def rewrite(self, batch: Sequence[Checkpoint]) -> None:
        """One MULTI/EXEC: every table of ``batch`` (script calls of
        :data:`REWRITE_CHUNK` tables), the cached players, then the marker."""
        calls = [self._pack(batch[i:i + REWRITE_CHUNK], "r") for i in range(0, len(batch), REWRITE_CHUNK)]
        calls = [(keys, args) for keys, args in calls if len(args) > 3]
        players = list(self.players.cache.items())

        async def run() -> Any:
            await self.client.execute_command("SCRIPT", "LOAD", COMMIT_SCRIPT)
            async with self.client.pipeline(transaction=True) as pipe:
                for keys, args in calls:
                    pipe.execute_command("EVALSHA", COMMIT_SHA, len(keys), *keys, *args)
                for token_hash, (player, name) in players:
                    self.players.queue(pipe, player, token_hash, name)
                pipe.hset(self._meta, mapping=self._marker())
                pipe.hsetnx(self._meta, "generation", secrets.token_hex(8))  # the first node after a loss sets it
                pipe.hget(self._meta, "generation")
                return await pipe.execute()
        results = await self._call(run)
        self.generation = results[-1]
        for result in results[:len(calls)]:
            self._refused(batch, result)

    def describe(self) -> Data:
        return {"kind": self.kind, "url": redact_url(self.url), "prefix": self.prefix, "run_id": self.run_id}

    async def close(self) -> None:
        for client in (self.client, self.once):
            try:
                await client.aclose()
            except Exception:  # closing a dead connection
                pass

    # -- helpers ------------------------------------------------------------
    def _marker(self) -> dict[FieldT, EncodableT]:
        return {"format": FORMAT_VERSION, "marked": f"{time.time():.3f}"}

    async def _mark(self) -> None:
        async def run() -> Any:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.hset(self._meta, mapping=self._marker())
                pipe.hsetnx(self._meta, "generation", secrets.token_hex(8))
                pipe.hget(self._meta, "generation")
                return await pipe.execute()
        self.generation = (await self._call(run))[-1]

    async def raw_state(self, table: str) -> bytes | None:
        """The stored state bytes of ``table`` (tests, operators)."""
        return cast(Blob, await self._call(lambda: self.client.get(self.keys.state(table))))

    async def state(self, table: str) -> Data | None:
        """The state of ``table`` now (tests, operators): its last full state
        with its input log replayed (:func:`cardhall.server.stored.current`);
        CheckpointError when either is unreadable."""
        async def run() -> list[Any]:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.get(self.keys.state(table))
                pipe.lrange(self.keys.log(table), 0, -1)
                return list(await pipe.execute())
        blob, log = await self._call(run)
        if blob is None:
            return None
        item, _ = current(stored_table(table, blob, log))
        if item.data is None:
            raise CheckpointError(item.error or "unreadable")
        return item.data
