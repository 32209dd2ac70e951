"""The Redis store (``cardhall serve --redis URL``): tables, their event
streams, hand histories and players in a standalone Redis or a Redis
Cluster, through redis-py's asyncio clients (made by
:class:`~cardhall.server.store.redis_conn.RedisConn`; hiredis parses the
replies and packs the commands).

The keyspace is cut into 64 partitions (:mod:`cardhall.server.store.keys`):
every key of a table, and its partition's marker, index, lobby and
quarantine, lie in the partition's hash slot. A group commit is one
``EVALSHA`` of :data:`COMMIT_SCRIPT` per call: on a standalone Redis one call
for the whole batch, on a cluster one per partition of the batch, all sent in
one non-transactional pipeline (redis-py sends each master its share, side by
side). For every table the script appends the new events to the table's
stream (entry id = ``seq``, trimmed to about ``stream_bound`` entries), sets
the state or appends the input log, appends the finished hands and adds the
table to its partition's index. A Lua script runs atomically, so each
checkpoint (in fact each call) is written entirely or not at all, and it is
idempotent: events, log steps and hands already stored are skipped, so a
commit whose reply was lost can be sent again. Before writing, the script
checks the marker of every table's partition; when a partition's data is
gone (a Redis or a shard restarted without persistence) its marker is gone,
nothing is written and :class:`~cardhall.server.store.base.StoreEmpty` tells
the hall to write every table again from memory (:meth:`RedisStore.rewrite`).

Key layout and format: ``server/STORAGE.md``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

import msgpack
from redis import exceptions as rexc

from cardhall.server.store import redis_index
from cardhall.server.store.base import (
    Checkpoint,
    Data,
    LeaseLost,
    Store,
    StoredTable,
    StoreEmpty,
    StoreUnavailable,
)
from cardhall.server.store.format import CheckpointError, unpack_event
from cardhall.server.store.keys import PARTITIONS, Keys, partition_of
from cardhall.server.store.redis_conn import RedisConn, redact, redis_trouble
from cardhall.server.store.redis_migrate import migrate
from cardhall.server.store.redis_players import RedisPlayers
from cardhall.server.store.scripts import COMMIT_SCRIPT, COMMIT_SHA, DELETE_SCRIPT, EMPTY, EVENT_FIELD, QUARANTINE_SCRIPT
from cardhall.server.stored import current

log = logging.getLogger("cardhall.store")

T = TypeVar("T")

# The replies of this store's client, as they are: it is made with
# ``decode_responses=False``, so every string in a reply is bytes. redis-py
# types its replies for either setting (``bytes | str``), so the reads below
# cast them to these.
#: a GET or HGET: the value, or None for no key
Blob = bytes | None
#: an XRANGE: (entry id, fields) pairs
StreamEntries = list[tuple[bytes, dict[bytes, bytes]]]
#: one script call: its KEYS and ARGV
Call = tuple[list[str], list[Any]]

#: a commit's packers, made once (``msgpack.packb`` makes one per call); Lua's msgpack reads bytes as raw strings
_PACKER, _RAW_PACKER = msgpack.Packer(autoreset=True), msgpack.Packer(autoreset=True, use_bin_type=False)

#: tables per script call when rewriting everything (bounds one command's size)
REWRITE_CHUNK = 50
#: tables read per pipeline at start-up
LOAD_CHUNK = 500


class RedisStore(Store):
    """Tables, events, hands and players in the Redis at ``url`` (a
    standalone Redis, or any node of a Redis Cluster: ``clustered`` None asks
    it) under keys starting with ``prefix`` (shared by every node of one
    cluster of cardhall servers).

    ``stream_bound``: events kept per table stream (approximately: Redis trims
    whole stream nodes), for ``join`` with ``since`` after a restart.
    ``timeout``: seconds a Redis command may take before the store counts as
    unavailable (a stopped Redis that keeps the socket open).
    ``wait_replicas``: when above 0, each commit waits (``WAIT``, up to
    ``wait_timeout`` seconds) until that many replicas of each master it
    wrote to hold it; fewer is a failed commit (StoreUnavailable: the tables
    stall and the commit is sent again).
    Every method raises :class:`~cardhall.server.store.base.StoreUnavailable` when Redis
    cannot be reached.
    """

    kind = "redis"

    def __init__(self, url: str, prefix: str = "cardhall", stream_bound: int = 1024, timeout: float = 3.0,
                 player_ttl: float = 0.0, *, clustered: bool | None = None, wait_replicas: int = 0,
                 wait_timeout: float = 1.0) -> None:
        self.url = url
        #: seconds a player's keys live after their last use (0: for ever; ``Settings.player_expiry``)
        self.player_ttl = player_ttl
        self.prefix = prefix
        self.stream_bound = stream_bound
        self.wait_replicas = wait_replicas
        self.wait_ms = max(1, int(wait_timeout * 1000))
        self.conn = RedisConn(url, timeout, clustered)
        self.client = self.conn.client
        #: the same Redis without the one retry: for what must not be sent twice (a command that
        #: timed out may have been carried out: every script of the store is idempotent, a
        #: ``SPUBLISH`` of a request is not)
        self.once = self.conn.once
        self.run_id: str | None = None
        #: index members that are no table id, moved to the quarantine (:meth:`set_aside`)
        self._set_aside: dict[str, str] = {}
        #: each partition's marker generation this store saw (a new one means its data was lost meanwhile)
        self.generations: list[bytes | None] = [None] * PARTITIONS
        self.keys = Keys(prefix)
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
        """Run one Redis exchange, mapping Redis trouble to StoreUnavailable
        (StoreEmpty for a marker found missing by a script)."""
        try:
            return await make()
        except rexc.ResponseError as exc:
            text = str(exc)
            if EMPTY in text:
                raise StoreEmpty(text) from None
            raise StoreUnavailable(f"redis: {text}") from None
        except Exception as exc:  # CLUSTERDOWN, a slot not served, a connection dropped in a failover...
            if not redis_trouble(exc):
                raise
            raise StoreUnavailable(f"redis: {type(exc).__name__}: {exc}") from None

    def _pack(self, batch: Sequence[Checkpoint], mode: str) -> Call:
        """Script KEYS and ARGV for ``batch`` (ARGV has only the three first
        arguments when nothing is left to write); a checkpoint that cannot be
        packed gets its ``error`` and is left out."""
        k = self.keys
        keys: list[str] = []
        args: list[Any] = [mode, self.stream_bound, self.lease_ms]
        packb, pack_raw = _PACKER.pack, _RAW_PACKER.pack
        for cp in batch:
            try:
                state = cp.packed_state() if cp.full else b""
                rest = [
                    [x for event in cp.events for x in event],  # seq, packed record, ...
                    [x for hand in cp.hands for x in (hand["seq"], packb(hand))],
                    [x for step in cp.log for x in step],  # n, packed entry, ...
                    cp.logged,
                ]
                extra = pack_raw(rest)  # bytes as raw strings (:data:`_RAW_PACKER`)
            except Exception as exc:
                cp.error = exc
                continue
            t = cp.table
            keys += k.commit_keys(t)
            channel, message = cp.publish or ("", b"")
            args += (t, cp.token or "", state, extra, channel, message, cp.info or b"")
        return keys, args

    def _calls(self, batch: Sequence[Checkpoint], mode: str) -> list[Call]:
        """The script calls of a commit: the whole batch in one on a
        standalone Redis, one per partition on a cluster (calls with
        nothing to write left out)."""
        if not self.conn.clustered:
            calls = [self._pack(batch, mode)]
        else:
            parts: dict[int, list[Checkpoint]] = {}
            for cp in batch:
                parts.setdefault(partition_of(cp.table), []).append(cp)
            calls = [self._pack(cps, mode) for cps in parts.values()]
        return [(keys, args) for keys, args in calls if len(args) > 3]

    async def _send(self, calls: list[Call]) -> list[Any]:
        """Run ``calls`` (one pipeline; each call's reply in order). A call
        that finds no script (a new, restarted or promoted master) is sent
        again once the script is loaded on every master; the first error
        left is raised, a missing marker before anything else."""
        replies: list[Any] = [None] * len(calls)
        todo = list(range(len(calls)))
        for attempt in (1, 2):
            got = await self._round([calls[i] for i in todo])
            errors = [r for r in got if isinstance(r, Exception) and not isinstance(r, rexc.NoScriptError)]
            if errors:
                raise next((e for e in errors if EMPTY in str(e)), errors[0])
            missing = []
            for i, reply in zip(todo, got, strict=True):
                if isinstance(reply, rexc.NoScriptError):
                    if attempt == 2:
                        raise reply
                    missing.append(i)
                else:
                    replies[i] = reply
            if not missing:
                break
            await self.client.script_load(COMMIT_SCRIPT)  # a cluster client loads it on every master
            todo = missing
        return replies

    async def _round(self, calls: list[Call]) -> list[Any]:
        """One pipeline of ``EVALSHA`` calls (and ``WAIT``s: :attr:`wait_replicas`);
        their replies, errors included."""
        client, n, clustered = self.client, self.wait_replicas, self.conn.clustered
        masters: dict[str, Any] = {}
        nodes: list[Any] = []
        slot_map = None
        if clustered:  # each call sent to its slot's master: redis-py would hash its 11 keys per table twice
            await self.conn.ready()
            slot_map = client.nodes_manager.slots_cache  # a new one after a reload (a retried pipeline)
            nodes = [client.get_node_from_key(keys[0]) for keys, _ in calls]
            masters = {node.name: node for node in nodes}
        async with client.pipeline(transaction=False) as pipe:
            for i, (keys, args) in enumerate(calls):
                target = {"target_nodes": nodes[i]} if clustered else {}
                pipe.execute_command("EVALSHA", COMMIT_SHA, len(keys), *keys, *args, **target)
            if n and clustered:
                for node in masters.values():  # one WAIT per master, after every call it got
                    pipe.execute_command("WAIT", n, self.wait_ms, target_nodes=node)
            elif n:
                pipe.execute_command("WAIT", n, self.wait_ms)
            replies = list(await pipe.execute(raise_on_error=False))
        scripts, waits = replies[:len(calls)], replies[len(calls):]
        if n and not any(isinstance(r, Exception) for r in scripts):
            self._acknowledged(waits)
            if clustered and (client.nodes_manager.slots_cache is not slot_map or any(
                    client.get_node_from_key(keys[0]).name != node.name for (keys, _), node in zip(calls, nodes))):
                # a WAIT may have gone to another connection than the writes: they are not known to be replicated
                raise StoreUnavailable("redis: the slot map changed during the commit: not known to be replicated")
        return scripts

    def _acknowledged(self, waits: list[Any]) -> None:
        """Raise StoreUnavailable unless every ``WAIT`` counted :attr:`wait_replicas` replicas."""
        for reply in waits:
            if isinstance(reply, Exception):
                raise reply
            if int(reply) < self.wait_replicas:
                raise StoreUnavailable(f"redis: the commit was not acknowledged by {self.wait_replicas} "
                                       f"replicas within {self.wait_ms} ms ({reply} did)")

    # -- the Store interface ------------------------------------------------
    async def commit(self, batch: Sequence[Checkpoint]) -> None:
        """One script call (standalone) or one per partition (cluster), one
        round trip. Any call failing fails the whole batch (the committer
        sends it again: the script is idempotent); a refused table's
        checkpoint gets :class:`LeaseLost`."""
        calls = self._calls(batch, "c")
        if calls:
            for refused in await self._call(lambda: self._send(calls)):
                self._refused(batch, refused)

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
        makes it unreadable; then the partitions without a marker are marked."""
        ids = await self.table_ids()
        out: list[StoredTable] = []
        for start in range(0, len(ids), LOAD_CHUNK):
            chunk = ids[start:start + LOAD_CHUNK]
            out += await self._call(lambda chunk=chunk: redis_index.load_states(self.client, self.keys, chunk))  # type: ignore[misc]
        found = await self._call(lambda: redis_index.generations(self.client, self.keys))
        missing = [n for n, generation in enumerate(found) if generation is None]
        if missing:
            await self._mark(missing)
        await self.probe()
        await self._call(lambda: self.client.script_load(COMMIT_SCRIPT))
        return out

    async def migrate_keys(self) -> int:
        """Move every table stored under the key names before partitions
        (``P:{id}``, or before hash tags ``P:t:{id}``) to its partition;
        returns the number of tables moved. Idempotent, and safe while other
        nodes start (one script per table); nothing to move on a Redis
        Cluster, which never held the old names
        (:mod:`cardhall.server.store.redis_migrate`). Then, as before, index
        members that are no table id are set aside (:meth:`table_ids`)."""
        moved = 0 if self.conn.clustered else await self._call(lambda: migrate(self.client, self.keys))
        await self.table_ids()
        return moved

    async def table_ids(self) -> list[str]:
        """Ids of every stored table (every partition's index); a member that
        is not UTF-8 text is moved to the quarantine and named in :meth:`set_aside`."""
        return await self._call(lambda: redis_index.table_ids(self.client, self.keys, self._set_aside))

    def set_aside(self) -> dict[str, str]:
        return dict(self._set_aside)

    async def load_table(self, table: str) -> StoredTable | None:
        """One stored table (None when it is not stored, or quarantined: set
        aside for an operator, never served again); an unreadable one comes
        with its ``error``."""
        blob, quarantined, log = await self._call(lambda: redis_index.read_table(self.client, self.keys, table))
        if blob is None or quarantined:
            return None
        return redis_index.stored_table(table, blob, log)

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
        """One pipeline: ``HEXISTS`` the partition's quarantine, ``GET`` the state (:func:`read_table`)."""
        blob, quarantined, _ = await self._call(lambda: redis_index.read_table(self.client, self.keys, table))
        if not quarantined:
            return None
        return redis_index.stored_table(table, blob) if blob is not None else StoredTable(table, error="no state kept")

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
        k, n = self.keys, partition_of(table)
        keys = [k.tables(n), k.lobby(n), k.state(table), k.events(table), k.lease(table), k.epoch(table),
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
        self.players.forget(token_hash)

    async def find_player(self, token_hash: str) -> tuple[str, str] | None:
        return await self.players.find(token_hash)

    async def rename_player(self, player: str, token_hash: str, name: str) -> None:
        await self.players.rename(player, token_hash, name)

    async def player_name(self, player: str) -> str | None:
        return await self.players.name(player)

    def player_renamed(self, player: str, token_hash: str, name: str) -> None:
        self.players.renamed(player, token_hash, name)

    async def quarantine(self, table: str, reason: str, token: str | None = None) -> None:
        note = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {reason}"
        k, n = self.keys, partition_of(table)
        keys = [k.tables(n), k.lobby(n), k.quarantine(n), k.lease(table)]
        done = await self._call(lambda: self.client.eval(QUARANTINE_SCRIPT, len(keys), *keys, table, note, token or ""))
        if not done:
            raise LeaseLost(f"table {table}: the lease is not this node's; not quarantined")

    async def quarantined(self) -> dict[str, str]:
        return await self._call(lambda: redis_index.quarantined(self.client, self.keys))

    async def probe(self) -> bool:
        """Whether every partition holds cardhall's data: False when a
        partition's marker is missing (its Redis or shard lost its data), or
        its ``generation`` is not the one this store saw before (it was lost,
        and another node has already written the marker again: this node must
        write its own tables again too). One pipeline of ``HGET``; on a
        standalone Redis also ``INFO server`` (a restart is logged)."""
        client = self.client

        async def info() -> Any:
            return (await client.info("server")).get("run_id")
        if not self.conn.clustered:  # a cluster's masters have a run id each: not followed
            run_id = await self._call(info)
            if self.run_id is not None and run_id != self.run_id:
                log.warning("redis %s restarted (run_id %s -> %s)", redact(self.url), self.run_id, run_id)
            self.run_id = run_id
        if self.wait_replicas:
            short = await self._call(lambda: self.conn.short_of_replicas(self.wait_replicas))
            if short:  # commits there cannot be acknowledged: down for the service until replicas are back
                raise StoreUnavailable(f"redis: {short}; every commit waits for {self.wait_replicas} "
                                       f"(--redis-wait-replicas)")
        found = await self._call(lambda: redis_index.generations(self.client, self.keys))
        seen = self.generations
        for n, generation in enumerate(found):
            if seen[n] is None:
                seen[n] = generation
        return all(g is not None and g == seen[n] for n, g in enumerate(found))

    async def rewrite(self, batch: Sequence[Checkpoint]) -> None:
        """Write everything again after a loss: the cached players first (one
        non-transactional pipeline), then per partition holding tables of
        ``batch`` one MULTI/EXEC of its tables (script calls of
        :data:`REWRITE_CHUNK` tables) and its marker, then the markers of the
        other partitions (one pipeline). A partition's marker so appears with
        its tables, never before."""
        parts: dict[int, list[Checkpoint]] = {}
        for cp in batch:
            parts.setdefault(partition_of(cp.table), []).append(cp)
        calls: dict[int, list[Call]] = {}
        for n, cps in parts.items():
            packed = [self._pack(cps[i:i + REWRITE_CHUNK], "r") for i in range(0, len(cps), REWRITE_CHUNK)]
            if chunks := [(keys, args) for keys, args in packed if len(args) > 3]:
                calls[n] = chunks
        await self.players.rewrite()

        async def partition(n: int, chunks: list[Call]) -> list[Any]:
            async with self.client.pipeline(transaction=True) as pipe:
                for keys, args in chunks:  # EVAL: a script missing inside a MULTI would fail alone
                    pipe.execute_command("EVAL", COMMIT_SCRIPT, len(keys), *keys, *args)
                redis_index.queue_mark(pipe, self.keys, n)
                return list(await pipe.execute())
        for n, chunks in calls.items():
            replies = await self._call(lambda n=n, chunks=chunks: partition(n, chunks))  # type: ignore[misc]
            self.generations[n] = replies[-1]
            for result in replies[:-1]:
                self._refused(batch, result)
        await self._mark([n for n in range(PARTITIONS) if n not in calls])

    def describe(self) -> Data:
        return {"kind": self.kind, "url": redact(self.url), "prefix": self.prefix, "cluster": self.conn.clustered,
                "run_id": self.run_id}

    async def close(self) -> None:
        await self.conn.close()

    # -- helpers ------------------------------------------------------------
    async def _mark(self, partitions: Sequence[int]) -> None:
        """Mark ``partitions`` (one pipeline), keeping each one's generation."""
        found = await self._call(lambda: redis_index.mark(self.client, self.keys, partitions))
        for n, generation in zip(partitions, found, strict=True):
            self.generations[n] = generation

    async def raw_state(self, table: str) -> bytes | None:
        """The stored state bytes of ``table`` (tests, operators)."""
        return cast(Blob, await self._call(lambda: self.client.get(self.keys.state(table))))

    async def state(self, table: str) -> Data | None:
        """The state of ``table`` now (tests, operators): its last full state
        with its input log replayed (:func:`cardhall.server.stored.current`);
        CheckpointError when either is unreadable."""
        blob, _, log = await self._call(lambda: redis_index.read_table(self.client, self.keys, table))
        if blob is None:
            return None
        item, _ = current(redis_index.stored_table(table, blob, log))
        if item.data is None:
            raise CheckpointError(item.error or "unreadable")
        return item.data
