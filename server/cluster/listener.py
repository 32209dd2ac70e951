"""This node's sharded subscriptions: its inbox and the channels of the tables it relays.

Pub/sub is sharded everywhere (``SSUBSCRIBE``; on a standalone Redis too):
each channel is subscribed on the master serving its hash slot (the inbox
``P:inbox:{node}``, a table's ``P:{tag}:id:ch``), through one connection per
master (a :class:`~.subscriptions.Shard`, ``RedisConn.subscriber``), each
read by its own task. A message on the inbox goes to the node
(``on_inbox``), one on a table's channel to the router
(:meth:`~cardhall.server.cluster.router.Router.on_channel`), in the order
that master delivered them: everything of one channel comes from one master,
in order (messages of different channels, on different masters, have no
order between them).

When a subscription goes wrong it is made again by :meth:`Listener.run`,
retried until Redis answers: after the slot map is loaded again
(``RedisConn.refresh``) every channel that needs it is subscribed where its
slot is served now. That is every channel of a connection that broke (Redis
restarted, a master killed or failed over, a connection dropped or silent
for :data:`KEEPALIVE` seconds after a ``PING``), and a channel the master
unsubscribed itself (its slot moved to another master: a migration) or
refused. Meanwhile messages of those channels may have been lost, so the
connections relaying those tables resume from their cursor
(:meth:`Router.resync`: every relayed table's when the inbox was among
them, as inputs and replies sent to this node may be lost too). A table
relayed while subscriptions are made again is subscribed once that is done,
on the master its slot has then (:meth:`Listener.subscribe` waits for it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from redis import exceptions as rexc

from cardhall.server.cluster import wire
from cardhall.server.cluster.router import Router
from cardhall.server.cluster.subscriptions import Address, Shard
from cardhall.server.store.keys import Keys

log = logging.getLogger("cardhall.cluster")

#: seconds between two attempts to subscribe again while Redis does not answer
RETRY = 0.5
#: a master connection silent this long is pinged; one still silent as long after the ping is broken
KEEPALIVE = 10.0
#: what redis-py raises when a master cannot be reached or the slot map not loaded
FAILURES = (rexc.RedisError, rexc.RedisClusterException, OSError)


class Listener:
    """The subscriptions of node ``node`` through ``conn`` (the store's
    ``RedisConn``: ``node_of``, ``subscriber``, ``refresh``)."""

    def __init__(self, conn: Any, keys: Keys, node: str, on_inbox: Callable[[list[Any]], None],
                 router: Router) -> None:
        self.conn = conn
        self.keys = keys
        self.inbox = keys.inbox(node)
        self._inbox = self.inbox.encode()
        self.on_inbox = on_inbox
        self.router = router
        #: the channels to listen on (the inbox once open, the relayed tables')
        self._wanted: set[str] = set()
        #: the connection of each master subscribed on, and the one each wanted channel is subscribed on
        self._shards: dict[Address, Shard] = {}
        self._where: dict[str, Shard] = {}
        #: held by whatever changes the subscriptions (one at a time, in the order they were asked for)
        self._lock = asyncio.Lock()
        #: set when a subscription needs making again
        self._trouble = asyncio.Event()
        self._running = False
        #: closed (the node stops): no subscription changes any more
        self._closed = False

    @property
    def changing(self) -> bool:
        """A change of the subscriptions is under way (one holds the lock that orders them)."""
        return self._lock.locked()

    async def open(self) -> None:
        """Subscribe the inbox (once; raises RedisError or OSError)."""
        async with self._lock:
            if self.inbox in self._wanted:
                return
            await self.conn.ready()
            await self._join(self.inbox, self.conn.node_of(self.inbox))
            self._wanted.add(self.inbox)

    async def close(self) -> None:
        """End every subscription (after a subscription change under way, up
        to a second: its connection is not closed under it)."""
        self._running = False
        self._closed = True
        try:
            await asyncio.wait_for(self._lock.acquire(), 1.0)
        except TimeoutError:
            locked = False
        else:
            locked = True
        try:
            shards, self._shards, self._where = list(self._shards.values()), {}, {}
            for shard in shards:
                await shard.close()
        finally:
            if locked:
                self._lock.release()

    async def subscribe(self, channel: str) -> None:
        """Listen on ``channel`` too (subscriptions being made again are waited for)."""
        async with self._lock:
            if channel in self._wanted:
                return
            self._wanted.add(channel)
            try:
                await self._join(channel, self.conn.node_of(channel))
            except Exception as exc:  # subscribed when the subscriptions are made again
                log.warning("could not subscribe to %s: %s: %s", channel, type(exc).__name__, exc)
                self._trouble.set()

    async def unsubscribe(self, channel: str) -> None:
        """Stop listening on ``channel``."""
        async with self._lock:
            self._wanted.discard(channel)
            shard = self._where.pop(channel, None)
            if shard is not None and not self._closed:
                with contextlib.suppress(*FAILURES):
                    await shard.leave(channel)

    def channels(self) -> dict[str, Address]:
        """Each channel listened on, and the master it is subscribed on (for tests and diagnostics)."""
        return {c: s.address for c, s in self._where.items() if c not in s.lost and not s.broken}

    async def run(self) -> None:
        """Read every subscription (one task per master) for ever, and make
        them again when they go wrong."""
        self._running = True
        for shard in list(self._shards.values()):
            shard.start(self._deliver, self._trouble.set)
        while True:
            try:
                await asyncio.wait_for(self._trouble.wait(), KEEPALIVE)
            except TimeoutError:
                await self._keepalive()
                continue
            await asyncio.sleep(RETRY)  # more trouble may come meanwhile (a migration moves many slots)
            self._trouble.clear()
            await self._again()

    def _deliver(self, channel: bytes, data: bytes) -> None:
        message = wire.unpack(data)
        if channel == self._inbox:
            self.on_inbox(message)
        else:
            self.router.on_channel(self.keys.table_of_channel(channel.decode()), message)

    async def _join(self, channel: str, address: Address) -> None:
        """Subscribe ``channel`` on the master at ``address`` (its connection
        opened first when there is none yet). Raises RedisError or OSError."""
        shard = self._shards.get(address)
        if shard is None or shard.broken:
            host, port = address
            shard = Shard(address, self.conn.subscriber(host, port))
            try:
                await shard.connect()
            except BaseException:
                await shard.close()
                raise
            old = self._shards.get(address)
            self._shards[address] = shard
            if old is not None:  # broken: its channels are subscribed again by :meth:`_again`
                await old.close()
            if self._running:
                shard.start(self._deliver, self._trouble.set)
        self._where[channel] = shard
        try:
            await shard.join(channel)
        except Exception:
            shard.broken = True
            self._trouble.set()
            raise

    async def _keepalive(self) -> None:
        """Ping each master connection silent for :data:`KEEPALIVE` seconds;
        one that did not answer the last ping in as long is broken."""
        now = time.monotonic()
        for shard in list(self._shards.values()):
            if shard.broken or shard.closed:
                continue
            if shard.pinged is not None and now - shard.pinged >= KEEPALIVE:
                log.warning("cluster listener: %s:%d does not answer; subscribing again", *shard.address)
                shard.broken = True
                self._trouble.set()
            elif shard.pinged is None and now - shard.heard >= KEEPALIVE:
                try:
                    await shard.ping()
                except Exception:  # whatever the ping raised, the connection is not usable
                    shard.broken = True
                    self._trouble.set()

    async def _again(self) -> None:
        """Subscribe every channel that needs it where its slot is served now
        (the slot map loaded again), retried until Redis answers; then the
        connections relaying those tables resume."""
        moved: set[str] = set()
        async with self._lock:
            failures = 0
            while True:
                try:
                    await self.conn.refresh()
                    await self._place(moved)
                    break
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # redis-py's own errors on a dropped connection too: never give up
                    if failures % 20 == 0:  # every 10 s
                        log.warning("cluster listener: %s: %s; subscribing again", type(exc).__name__, exc)
                    failures += 1
                    await asyncio.sleep(RETRY)
        if not moved:
            return
        log.info("cluster listener: %d channels subscribed again", len(moved))
        if self.inbox in moved:
            self.router.resync()
        else:
            self.router.resync([self.keys.table_of_channel(c) for c in moved])

    async def _place(self, moved: set[str]) -> None:
        """Each wanted channel on the master serving its slot, adding to
        ``moved`` each one subscribed again; the connections no channel uses
        any more close."""
        for channel in sorted(self._wanted):
            address = self.conn.node_of(channel)
            shard = self._where.get(channel)
            if shard is not None and shard.address == address and not shard.broken and channel not in shard.lost:
                continue
            if shard is not None and not shard.broken:
                with contextlib.suppress(*FAILURES):
                    await shard.leave(channel)  # moved by a change of the slot map it did not tell
            self._where.pop(channel, None)
            moved.add(channel)
            await self._join(channel, address)
        used = {id(s) for s in self._where.values()}
        for address, shard in list(self._shards.items()):
            if id(shard) not in used:
                del self._shards[address]
                await shard.close()
