"""The node's sharded subscriptions (``server/cluster/listener.py``,
``server/cluster/subscriptions.py``) and the outbox's ``SPUBLISH``
(``server/cluster/outbox.py``), on a real standalone Redis and on a real
Redis Cluster of three masters (:mod:`tests.server.cluster.redis_cluster`).

What must hold: every message of one channel (a node's inbox, a table's
channel) arrives once and in the order it was published; when a
subscription stops delivering (Redis restarted, a master killed, a slot
moved to another master) the channels are subscribed again where their slot
is served now, and the relayed tables whose channels were there resync (all
of them when the inbox was among them)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from cardhall.server.cluster import wire
from cardhall.server.cluster.listener import Listener
from cardhall.server.cluster.outbox import Outbox
from cardhall.server.store.keys import Keys, partition_of, slot
from cardhall.server.store.redis_conn import RedisConn
from tests.conftest import until

pytestmark = pytest.mark.redis

NODE = "n1"
#: tables of different partitions (so of different slots, spread over the masters of a cluster)
TABLES = ["t_1", "t_2", "t_3", "t_4", "t_5", "t_6", "t_7", "t_8"]


class Router:
    """What the listener hands messages to (the part of the router it uses)."""

    def __init__(self) -> None:
        self.got: dict[str, list[Any]] = {}
        self.resyncs: list[list[str] | None] = []

    def on_channel(self, table: str, data: list[Any]) -> None:
        self.got.setdefault(table, []).append(data)

    def resync(self, tables: Any = None) -> None:
        self.resyncs.append(None if tables is None else sorted(tables))


class Subscribed:
    """A listener of node :data:`NODE` on ``conn``, its inbox, router and outbox."""

    def __init__(self, conn: RedisConn) -> None:
        self.conn = conn
        self.keys = Keys("ls")
        self.inbox: list[Any] = []
        self.router = Router()
        self.listener = Listener(conn, self.keys, NODE, self.inbox.append, self.router)  # type: ignore[arg-type]
        self.outbox = Outbox(conn.once)
        self.task: asyncio.Task[None] | None = None

    async def start(self, tables: list[str]) -> None:
        await self.listener.open()
        for table in tables:
            await self.listener.subscribe(self.keys.channel(table))
        self.task = asyncio.get_running_loop().create_task(self.listener.run())
        self.outbox.start()

    def publish(self, tables: list[str], n: int) -> None:
        self.outbox.send(self.keys.inbox(NODE), wire.pack(["x", n]))
        for table in tables:
            self.outbox.send(self.keys.channel(table), wire.pack(["e", n]))

    async def stop(self) -> None:
        await self.outbox.stop()
        if self.task is not None:
            self.task.cancel()
        await self.listener.close()
        await self.conn.close()


async def delivered_after_trouble(s: Subscribed, tables: list[str], first: int) -> int:
    """Publish rounds of numbered messages (the inbox and every table channel, a round each
    0.1 s: one may be lost while subscriptions are made again) from ``first`` until one round
    came whole, each of its messages once; the number of the first such round."""
    s.inbox.clear()
    s.router.got.clear()
    sent = first

    def whole() -> int | None:
        for n in range(first, sent):
            if s.inbox.count(["x", n]) == 1 and all(s.router.got.get(t, []).count(["e", n]) == 1 for t in tables):
                return n
        return None

    deadline = time.monotonic() + 60
    while whole() is None:
        assert time.monotonic() < deadline, (s.inbox, s.router.got)
        s.publish(tables, sent)
        sent += 1
        await s.outbox.flushed()
        await asyncio.sleep(0.1)  # the pace of the rounds, not a wait for them: a late round counts too
    n = whole()
    assert n is not None
    return n


@pytest.fixture
async def standalone(redis_server) -> AsyncIterator[Subscribed]:
    s = Subscribed(RedisConn(redis_server.url, timeout=1.0))
    try:
        yield s
    finally:
        await s.stop()


@pytest.fixture
async def clustered(redis_cluster) -> AsyncIterator[Subscribed]:
    s = Subscribed(RedisConn(redis_cluster.url, timeout=1.0))
    assert s.conn.clustered
    try:
        yield s
    finally:
        await s.stop()


async def test_every_channel_in_order_then_an_unsubscribed_one_no_more(standalone):
    s = standalone
    assert len({partition_of(t) for t in TABLES}) == len(TABLES)
    await s.start(TABLES)
    for n in range(50):
        s.publish(TABLES, n)
    await until(lambda: len(s.inbox) == 50 and all(len(s.router.got.get(t, ())) == 50 for t in TABLES), 30)
    assert s.inbox == [["x", n] for n in range(50)]
    assert all(s.router.got[t] == [["e", n] for n in range(50)] for t in TABLES)
    await s.listener.unsubscribe(s.keys.channel("t_1"))
    await s.listener.subscribe(s.keys.channel("t_1"))  # again: delivered again
    await s.listener.unsubscribe(s.keys.channel("t_2"))
    s.router.got.clear()
    s.publish(TABLES, 50)
    s.publish(["t_1"], 51)  # after t_2's, from the same Redis: once it is in, t_2's would have been too
    await until(lambda: s.router.got.get("t_1") == [["e", 50], ["e", 51]]
                and all(s.router.got.get(t) == [["e", 50]] for t in TABLES if t not in ("t_1", "t_2")), 30)
    assert "t_2" not in s.router.got and s.router.resyncs == []
    assert set(s.listener.channels()) == {s.keys.inbox(NODE), *[s.keys.channel(t) for t in TABLES if t != "t_2"]}


async def test_redis_restarted_every_channel_is_subscribed_again_and_everything_resyncs(standalone, redis_server,
                                                                                     caplog):
    s = standalone
    caplog.set_level(logging.WARNING, logger="cardhall.cluster")
    await s.start(TABLES[:3])
    s.publish(TABLES[:3], 0)
    await until(lambda: len(s.inbox) == 1, 30)
    redis_server.stop()
    await until(lambda: s.keys.inbox(NODE) not in s.listener.channels(), 30)  # the broken subscription noticed
    subscribing = asyncio.get_running_loop().create_task(s.listener.subscribe(s.keys.channel("t_4")))
    # a subscription asked for while Redis is away: the listener tried making them again and failed
    # (logged), and the request either failed too (left to that retry) or waits behind it
    await until(lambda: any("subscribing again" in r.getMessage() for r in caplog.records)
                and (subscribing.done() or s.listener.changing), 30, "a failed attempt to subscribe again")
    redis_server.start()
    await subscribing  # subscribed on the new subscription
    await delivered_after_trouble(s, TABLES[:4], 1)
    assert s.router.resyncs and s.router.resyncs[0] is None  # the inbox was on it: every relayed table


async def test_on_a_cluster_each_channel_is_read_from_its_master(clustered, redis_cluster):
    s = clustered
    await s.start(TABLES)
    where = s.listener.channels()
    assert len(set(where.values())) == 3  # the channels are spread over the three masters
    assert all(where[c] == s.conn.node_of(c) for c in where)
    for n in range(30):
        s.publish(TABLES, n)
    await until(lambda: len(s.inbox) == 30 and all(len(s.router.got.get(t, ())) == 30 for t in TABLES), 30)
    assert s.inbox == [["x", n] for n in range(30)]
    assert all(s.router.got[t] == [["e", n] for n in range(30)] for t in TABLES)


async def test_on_a_cluster_a_moved_slot_is_subscribed_where_it_went_and_its_table_resyncs(clustered, redis_cluster):
    s = clustered
    await s.start(TABLES)
    channel = s.keys.channel("t_1")
    source = s.conn.node_of(channel)
    target = next(m for m in s.conn.masters() if m != source and m != s.conn.node_of(s.keys.inbox(NODE)))
    await asyncio.to_thread(redis_cluster.move_slot, slot(channel), source[1], target[1])
    await until(lambda: s.listener.channels().get(channel) == target, 30)
    await delivered_after_trouble(s, TABLES, 1)
    assert s.router.resyncs == [["t_1"]]  # that table only


async def test_on_a_cluster_a_killed_master_started_again_is_subscribed_again(clustered, redis_cluster):
    s = clustered
    await s.start(TABLES)
    inbox_master = s.conn.node_of(s.keys.inbox(NODE))
    victim = next(m for m in s.conn.masters() if m != inbox_master)
    on_it = sorted(s.keys.table_of_channel(c) for c, m in s.listener.channels().items() if m == victim)
    assert on_it
    redis_cluster.kill(victim[1])
    # the listener noticed: nothing is subscribed on the killed master any more
    await until(lambda: victim not in s.listener.channels().values(), 30, "the killed master's channels lost")
    await asyncio.to_thread(redis_cluster.start, victim[1])
    await asyncio.to_thread(redis_cluster.wait_ok)
    await delivered_after_trouble(s, TABLES, 1)
    assert s.router.resyncs[0] == on_it
