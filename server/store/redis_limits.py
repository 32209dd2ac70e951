"""The limits counted in Redis: one count for every node on one Redis and prefix.

:class:`RedisLimits` is the :class:`~cardhall.server.limits.Limits` of a
service on the Redis store (one node or a cluster, on a standalone Redis or a
Redis Cluster): every node asks the same keys, so a client meets each limit
at the same count whichever nodes its connections and requests reach (SPEC
"Limits", deploy/README.md "Limits for newcomers", ``server/STORAGE.md``
"Redis key layout"). Every script touches one key (one hash slot); the keys
of a player or an address carry no hash tag, so they spread over a Redis
Cluster's masters.

* **Open tables** (:data:`TAKE_TABLE`): a sorted set per player
  (``P:limit:player-tables:<id>``) and per address (``P:limit:address-tables:<address>``)
  of the open tables' ids, scored with the Redis time they were counted (ms).
  A creation adds the id to each (one script per key, one pipeline) only
  while the set holds fewer than the limit, and writes ``[owner, address]``
  beside the table (``P:{pN.k}:<table>:made``) so that whichever node later
  closes, deletes or quarantines it (after a handover or a restart) removes
  it from both. Counts heal: a set at its limit first drops the members that
  are not in their partition's table index any more (a node that died
  between counting and storing, a release that failed while Redis was
  away), once they are older than :data:`GRACE_MS` (a creation being stored).
* **New players** per address, **chat** per player and per address, and
  **renames** per player (:data:`~cardhall.server.store.redis_buckets.BUCKET`): a token bucket in a
  hash (``t`` tokens, ``at`` Redis ms), expiring once it would be full again; **table passwords**
  per player and per address the same way, a right one given back
  (:class:`~cardhall.server.store.redis_buckets.PasswordTries`). A chat message takes its
  player's token, then (a second script: the two keys are in different hash
  slots) its address's; one the address refuses has spent its player's token,
  as in memory (:mod:`cardhall.server.limits`: the slack falls on the sender).
* **Websockets** per address (:data:`SOCKETS_OPEN`): a hash per address
  (``P:limit:sockets:<address>``) with one field per node process
  (``<node id>|<nonce>``) holding that process's own count, as it knew it at
  its last write: written whole by each open (which checks the sum over the
  live nodes' fields, dropping the others: a dead node's websockets stop
  counting with its heartbeat), after closes (batched) and every
  :data:`REFRESH` seconds (with the hash's TTL, :data:`SOCKETS_TTL_MS`).

A refusal is remembered on this node (:attr:`RedisLimits._held`) so that a
flood is answered without Redis: for a token bucket exactly until its next
token (no slack); for tables and websockets :data:`HOLD` seconds (a table
closed or a websocket closed on another node meanwhile is seen that much
later: a refusal may be repeated for up to 1 s, never an extra admission).

Redis unavailable: a table, a ``hello`` without a token, a ``chat``, a
``rename`` and a table password get ``unavailable``; a websocket is counted against this node's own count
(the per-node bound), and written to Redis when it answers again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import orjson

from cardhall.protocol.errors import ProtocolError
from cardhall.server.chat import ADDRESS_BURST, ADDRESS_RATE, BURST, RATE
from cardhall.server.config import Settings
from cardhall.server.limits import (
    RENAME_BURST,
    RENAME_RATE,
    too_many_players,
    too_many_renames,
    too_many_tables,
    too_much_chat,
    too_much_chat_from_address,
)
from cardhall.server.store.keys import partition_of
from cardhall.server.store.redis import RedisStore
from cardhall.server.store.redis_buckets import BUCKET, PasswordTries
from cardhall.server.store.redis_conn import redis_trouble

log = logging.getLogger("cardhall.limits")

T = TypeVar("T")

#: milliseconds a counted table may take to appear in its partition's index
#: before a full count may drop it as a leak (a creation is stored within
#: a few Redis timeouts, or refused and released)
GRACE_MS = 30_000
#: seconds a refused table or websocket is refused here without asking Redis again
HOLD = 1.0
#: milliseconds an address's websocket hash lives after its last write
SOCKETS_TTL_MS = 300_000
#: seconds between two writes of every websocket count of this node (renewing the TTL)
REFRESH = 60.0
#: members of a full table count looked at for leaks per creation
HEAL_AT_MOST = 100
#: refusals remembered before the expired ones are dropped
HELD_AT_MOST = 10_000
#: addresses per pipeline when writing websocket counts
WRITE_CHUNK = 1000
#: seconds between two warnings that Redis cannot count
WARN_EVERY = 10.0

#: Count table ARGV[1] in the sorted set KEYS[1] unless it holds ARGV[2]
#: members already. ARGV[3]: the grace in ms; ARGV[4]: members returned at
#: most. Returns {1} when counted (or counted before), else {0, members older
#: than the grace...} (the caller drops those that are no open table and tries again).
TAKE_TABLE = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {1} end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now, ARGV[1])
  return {1}
end
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]), 'LIMIT', 0, ARGV[4])
table.insert(old, 1, 0)
return old
"""

#: A websocket opens: KEYS[1] the address's hash. ARGV: limit, this process's
#: field, its count with the new websocket, the TTL in ms, the other live
#: processes' fields. Fields of processes not live are dropped; admitted when
#: the sum is at most the limit. This process's field is set to its count
#: (without the new websocket when refused). Returns 1 admitted, 0 refused.
SOCKETS_OPEN = """
local mine = tonumber(ARGV[3])
local live = {}
for i = 5, #ARGV do live[ARGV[i]] = true end
local total = mine
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local f = fields[i]
  if f ~= ARGV[2] then
    if live[f] then total = total + tonumber(fields[i + 1]) else redis.call('HDEL', KEYS[1], f) end
  end
end
local ok = total <= tonumber(ARGV[1])
if not ok then mine = mine - 1 end
if mine > 0 then
  redis.call('HSET', KEYS[1], ARGV[2], mine)
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
else
  redis.call('HDEL', KEYS[1], ARGV[2])
end
if ok then return 1 end
return 0
"""


class RedisLimits:
    """:class:`~cardhall.server.limits.Limits` in the Redis of ``store`` under
    its prefix (the module docstring). ``me``: this process's field in the
    websocket hashes (``<node id>|<nonce>``); ``live``: the fields of every
    live node process (read at each websocket opened)."""

    def __init__(self, store: RedisStore, settings: Settings, me: str, live: Callable[[], Iterable[str]]) -> None:
        self.store = store
        self.settings = settings
        self.client = store.client
        self.keys = store.keys
        self.me = me
        self.live = live
        #: ms a counted table has to be stored before a full count may drop it (tests shorten it)
        self.grace_ms = GRACE_MS
        #: key -> monotonic seconds until which this node refuses it without asking Redis
        self._held: dict[str, float] = {}
        #: address -> websockets open here from it
        self._sockets: dict[str, int] = {}
        #: addresses whose count here is to be written
        self._dirty: set[str] = set()
        self._flushing: asyncio.Task[None] | None = None
        self._refreshed = time.monotonic()
        self._warned = float("-inf")
        self.passwords = PasswordTries(self.client, self.keys.prefix, self._redis)

    # -- keys ----------------------------------------------------------------------
    def player_tables(self, player: str) -> str:
        """Sorted set: the open tables owned by ``player`` -> Redis ms counted."""
        return f"{self.keys.prefix}:limit:player-tables:{player}"

    def address_tables(self, address: str) -> str:
        """Sorted set: the open tables created from ``address`` -> Redis ms counted."""
        return f"{self.keys.prefix}:limit:address-tables:{address}"

    def made(self, table: str) -> str:
        """String, in ``table``'s partition: JSON ``[owner, address]`` it is counted against (null: not)."""
        return self.keys.base(table) + ":made"

    def new_players(self, address: str) -> str:
        """Hash: the token bucket of new players from ``address``."""
        return f"{self.keys.prefix}:limit:new-players:{address}"

    def chat_of(self, player: str) -> str:
        """Hash: the token bucket of ``player``'s chat messages."""
        return f"{self.keys.prefix}:limit:chat:{player}"

    def chat_from(self, address: str) -> str:
        """Hash: the token bucket of the chat messages from client ``address``."""
        return f"{self.keys.prefix}:limit:chat-address:{address}"

    def renames_of(self, player: str) -> str:
        """Hash: the token bucket of ``player``'s renames."""
        return f"{self.keys.prefix}:limit:renames:{player}"

    def sockets_of(self, address: str) -> str:
        """Hash: ``<node id>|<nonce>`` -> websockets from ``address`` open at that node process."""
        return f"{self.keys.prefix}:limit:sockets:{address}"

    # -- plumbing ------------------------------------------------------------------
    async def _redis(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run one exchange; Redis trouble becomes ProtocolError ``unavailable``."""
        try:
            return await make()
        except Exception as exc:
            if not redis_trouble(exc):
                raise
            self._warn(exc)
            raise ProtocolError("unavailable", "the limits cannot be counted right now (the store is down); "
                                "retry shortly") from None

    def _warn(self, exc: BaseException) -> None:
        now = time.monotonic()
        if now - self._warned >= WARN_EVERY:
            self._warned = now
            log.warning("redis cannot count the limits: %s: %s", type(exc).__name__, exc)

    def _is_held(self, key: str) -> bool:
        until = self._held.get(key)
        if until is None:
            return False
        if time.monotonic() < until:
            return True
        del self._held[key]
        return False

    def _hold(self, key: str, seconds: float) -> None:
        now = time.monotonic()
        if len(self._held) >= HELD_AT_MOST:
            self._held = {k: u for k, u in self._held.items() if u > now}
            if len(self._held) >= HELD_AT_MOST:  # a flood of distinct keys: forgetting only asks Redis again
                self._held.clear()
        self._held[key] = now + seconds

    # -- tables --------------------------------------------------------------------
    async def take_table(self, table: str, owner: str | None, address: str | None) -> None:
        settings = self.settings
        counts: list[tuple[str, int, bool]] = []  # (key, limit, is the player's)
        if owner is not None:
            counts.append((self.player_tables(owner), settings.max_tables_per_player, True))
        if address is not None and settings.max_tables_per_address:
            counts.append((self.address_tables(address), settings.max_tables_per_address, False))
        else:
            address = None
        if not counts:
            return
        for key, limit, player in counts:
            if limit <= 0 or self._is_held(key):
                raise too_many_tables(player, limit)
        refused = await self._redis(lambda: self._take(table, counts, orjson.dumps([owner, address])))
        if refused is not None:
            key, limit, player = refused
            self._hold(key, HOLD)
            raise too_many_tables(player, limit)

    async def _take(self, table: str, counts: list[tuple[str, int, bool]],
                    record: bytes) -> tuple[str, int, bool] | None:
        """Count ``table`` in every set of ``counts`` and write its record;
        the first count refused after healing (the others undone), or None."""
        async with self.client.pipeline(transaction=False) as pipe:
            for key, limit, _ in counts:
                pipe.eval(TAKE_TABLE, 1, key, table, limit, self.grace_ms, HEAL_AT_MOST)
            pipe.set(self.made(table), record)
            replies = (await pipe.execute())[:-1]
        full = [(count, [m.decode() for m in reply[1:]]) for count, reply in zip(counts, replies, strict=True)
                if not int(reply[0])]
        if full:
            full = await self._heal(table, full)
        if not full:
            return None
        async with self.client.pipeline(transaction=False) as pipe:  # undo the counts that were taken
            for key, _, _ in counts:
                pipe.zrem(key, table)
            pipe.delete(self.made(table))
            await pipe.execute()
        return full[0][0]

    async def _heal(self, table: str, full: list[tuple[tuple[str, int, bool], list[str]]]
                    ) -> list[tuple[tuple[str, int, bool], list[str]]]:
        """Drop from each full count its members older than the grace that
        are no stored table, and count ``table`` again there; the counts
        still full."""
        old = sorted({m for _, members in full for m in members})
        if not old:
            return full
        k = self.keys
        async with self.client.pipeline(transaction=False) as pipe:
            for member in old:
                pipe.sismember(k.tables(partition_of(member)), member)
            stored = dict(zip(old, map(bool, await pipe.execute()), strict=True))
        gone = {m for m, kept in stored.items() if not kept}
        if not gone:
            return full
        log.info("dropped %d counted tables that are not stored any more (a leak healed)", len(gone))
        again: list[tuple[tuple[str, int, bool], list[str]]] = []
        async with self.client.pipeline(transaction=False) as pipe:
            for (key, limit, _), members in full:
                dropped = [m for m in members if m in gone]
                if dropped:
                    pipe.zrem(key, *dropped)
                pipe.eval(TAKE_TABLE, 1, key, table, limit, self.grace_ms, HEAL_AT_MOST)
            replies = [r for r in await pipe.execute() if isinstance(r, list)]
        for (count, _), reply in zip(full, replies, strict=True):
            if not int(reply[0]):
                again.append((count, [m.decode() for m in reply[1:]]))
        return again

    async def release_table(self, table: str) -> None:
        try:
            raw = await self.client.getdel(self.made(table))
            if raw is None:
                return
            owner, address = orjson.loads(raw)
            async with self.client.pipeline(transaction=False) as pipe:
                for key in (self.player_tables(owner) if owner is not None else None,
                            self.address_tables(address) if address is not None else None):
                    if key is not None:
                        pipe.zrem(key, table)
                        self._held.pop(key, None)
                await pipe.execute()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the counts heal once they are full (not stored, past the grace)
            log.warning("table %s: its limit counts could not be released now: %s: %s", table,
                        type(exc).__name__, exc)

    def restored(self, table: str, owner: str | None) -> None:
        """Nothing: its counts stay in Redis whichever node serves it."""
        return None

    # -- token buckets -----------------------------------------------------------------
    async def _bucket(self, key: str, burst: float, rate: float, refusal: Callable[[], ProtocolError]) -> None:
        if self._is_held(key):
            raise refusal()
        wait = int(await self._redis(lambda: self.client.eval(BUCKET, 1, key, burst, rate)))
        if wait:
            self._hold(key, wait / 1000)
            raise refusal()

    async def new_player(self, address: str) -> None:
        settings = self.settings
        per = settings.new_players_per_address
        if per > 0:
            await self._bucket(self.new_players(address), per, per / settings.new_players_window,
                               lambda: too_many_players(settings))

    async def chat(self, player: str, address: str) -> None:
        await self._bucket(self.chat_of(player), BURST, RATE, too_much_chat)
        await self._bucket(self.chat_from(address), ADDRESS_BURST, ADDRESS_RATE, too_much_chat_from_address)

    async def rename(self, player: str) -> None:
        await self._bucket(self.renames_of(player), RENAME_BURST, RENAME_RATE, too_many_renames)

    async def password_try(self, player: str | None, address: str) -> None:
        await self.passwords.take(player, address)

    async def password_right(self, player: str, address: str) -> None:
        try:
            await self.passwords.give(player, address)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the tokens come back with time
            self._warn(exc)

    # -- websockets -----------------------------------------------------------------
    async def open_socket(self, address: str) -> bool:
        limit = self.settings.max_connections_per_ip
        if not limit:
            return True
        key = self.sockets_of(address)
        here = self._sockets.get(address, 0) + 1
        if here > limit or self._is_held(key):
            return False
        self._sockets[address] = here
        others = [f for f in self.live() if f != self.me]
        try:
            admitted = int(await self.client.eval(SOCKETS_OPEN, 1, key, limit, self.me, here, SOCKETS_TTL_MS,
                                                  *others))
        except Exception as exc:
            if not redis_trouble(exc):
                self._forget(address)
                raise
            self._warn(exc)
            self._changed(address)  # written once Redis answers again; admitted by this node's own count
            return True
        if not admitted:
            self._forget(address)
            self._hold(key, HOLD)
            return False
        if self._sockets.get(address, 0) != here:  # another opened or closed meanwhile: write the count now
            self._changed(address)
        return True

    def close_socket(self, address: str) -> None:
        if self.settings.max_connections_per_ip:
            self._forget(address)
            self._changed(address)

    def _forget(self, address: str) -> None:
        left = self._sockets.get(address, 1) - 1
        if left > 0:
            self._sockets[address] = left
        else:
            self._sockets.pop(address, None)

    def _changed(self, address: str) -> None:
        """Write ``address``'s count here soon (one task writes every changed one)."""
        self._dirty.add(address)
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        while self._dirty:
            batch, self._dirty = self._dirty, set()
            if not await self._write_or_keep(batch):
                return

    async def _write_or_keep(self, batch: set[str]) -> bool:
        """:meth:`_write` ``batch``; when it fails, log it and keep the
        addresses for the next refresh. True when written."""
        try:
            await self._write(batch)
        except Exception as exc:
            if not redis_trouble(exc):
                log.exception("writing websocket counts failed")
            self._warn(exc)
            self._dirty |= batch
            return False
        return True

    async def _write(self, addresses: Iterable[str]) -> None:
        """Set this process's field of each address's hash to its count here (none: removed)."""
        todo = list(addresses)
        for start in range(0, len(todo), WRITE_CHUNK):
            async with self.client.pipeline(transaction=False) as pipe:
                for address in todo[start:start + WRITE_CHUNK]:
                    key, here = self.sockets_of(address), self._sockets.get(address, 0)
                    if here:
                        pipe.hset(key, self.me, here)
                        pipe.pexpire(key, SOCKETS_TTL_MS)
                    else:
                        pipe.hdel(key, self.me)
                await pipe.execute()

    async def sweep(self, now: float) -> None:
        """Every :data:`REFRESH` seconds, write every websocket count of this
        node (renewing the hashes' TTL) and any that could not be written;
        drop the refusals held past their time. Never raises (logged)."""
        if now - self._refreshed < REFRESH:
            return
        self._refreshed = now
        mono = time.monotonic()
        self._held = {k: until for k, until in self._held.items() if until > mono}
        if not self.settings.max_connections_per_ip:
            return
        batch = self._dirty | set(self._sockets)
        self._dirty = set()
        await self._write_or_keep(batch)
