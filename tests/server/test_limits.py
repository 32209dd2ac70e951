"""The per-player and per-address limits, in memory and in Redis (server/limits.py,
server/store/redis_limits.py; SPEC "Limits").

Both implementations refuse at the same counts with the same codes and
messages (chat: per player, then per address, a player's refused messages
spending none of its address's); in Redis two nodes (two :class:`RedisLimits` on one prefix) share
one count, a count whose table is gone heals once it is full, a refusal is
held on its node for :data:`~cardhall.server.store.redis_limits.HOLD` at most,
a dead node's websockets stop counting, and Redis down answers ``unavailable``
(websockets: the node's own count). Through real halls on one Redis prefix, a
table handed to another node or restored by it still counts against its
creator's address and owner, until it closes. One test runs the Redis
implementation on a Redis Cluster of three masters.
"""

from __future__ import annotations

import asyncio
import doctest
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

import cardhall.server.limits
from cardhall.clients.client import Client
from cardhall.protocol.errors import ProtocolError
from cardhall.server.chat import ADDRESS_BURST, BURST
from cardhall.server.config import Settings
from cardhall.server.limits import Limits, MemoryLimits
from cardhall.server.store.base import Checkpoint
from cardhall.server.store.format import FORMAT_VERSION
from cardhall.server.store.keys import partition_of
from cardhall.server.store.redis import RedisStore
from cardhall.server.store.redis_limits import HOLD, RedisLimits
from tests.conftest import code_of, until
from tests.server.conftest import TEST_SETTINGS, RedisServer, running_server

SETTINGS = Settings(max_tables_per_player=2, max_tables_per_address=3, new_players_per_address=3,
                    new_players_window=3600.0, max_connections_per_ip=2)
WAITING_TABLE = {"game": "loco_poker", "seats": 3}  # nobody plays it
PLAYER_REFUSAL = ("rate_limited", "too many chat messages: at most 5 per 10 s")
ADDRESS_REFUSAL = ("rate_limited", "too many chat messages from this address: at most 15 per 10 s")


def test_doctests():
    result = doctest.testmod(cardhall.server.limits)
    assert result.failed == 0 and result.attempted > 0


async def _refused(awaitable: Any) -> tuple[str, str] | None:
    """``(code, message)`` of the ProtocolError ``awaitable`` raises, None if it returns."""
    try:
        await awaitable
    except ProtocolError as exc:
        return exc.code, exc.message
    return None


class Nodes:
    """Stores and :class:`RedisLimits` of "nodes" on one Redis and prefix
    (``n1|a``, ``n2|b``...), every one live until :meth:`kill`."""

    def __init__(self, url: str, prefix: str, settings: Settings = SETTINGS) -> None:
        self.url, self.prefix, self.settings = url, prefix, settings
        self.stores: list[RedisStore] = []
        self.live: set[str] = set()

    async def node(self, name: str, timeout: float = 3.0) -> RedisLimits:
        store = RedisStore(self.url, prefix=self.prefix, timeout=timeout)
        await store.load_tables()  # marks the partitions: commits may write
        self.stores.append(store)
        me = f"{name}|{len(self.stores)}"
        self.live.add(me)
        return RedisLimits(store, self.settings, me, lambda: sorted(self.live))

    def kill(self, limits: RedisLimits) -> None:
        self.live.discard(limits.me)

    async def close(self) -> None:
        for store in self.stores:
            await store.close()


@pytest.fixture
async def nodes(redis_server: RedisServer, request: pytest.FixtureRequest) -> AsyncIterator[Nodes]:
    made = Nodes(redis_server.url, request.node.name)
    try:
        yield made
    finally:
        await made.close()


@pytest.fixture(params=["memory", "redis"])
async def one(request: pytest.FixtureRequest) -> AsyncIterator[Limits]:
    """The limits of :data:`SETTINGS`, in memory or in a Redis of the test's own."""
    if request.param == "memory":
        yield MemoryLimits(SETTINGS)
        return
    redis = request.getfixturevalue("redis_server")
    made = Nodes(redis.url, "one")
    try:
        yield await made.node("n1")
    finally:
        await made.close()


async def test_tables_are_refused_at_the_same_counts_and_released(one: Limits):
    player = ("too_many_tables", "at most 2 open tables per player")
    address = ("too_many_tables", "at most 3 open tables per client address")
    assert await _refused(one.take_table("t_1", "p1", "a")) is None
    assert await _refused(one.take_table("t_2", "p1", "a")) is None
    assert await _refused(one.take_table("t_3", "p1", "a")) == player  # the player's limit, named first
    assert await _refused(one.take_table("t_3", "p1", "b")) == player
    assert await _refused(one.take_table("t_3", "p2", "a")) is None  # the address's third, another player
    assert await _refused(one.take_table("t_4", "p3", "a")) == address
    assert await _refused(one.take_table("t_4", None, "a")) == address  # HTTP without a token
    assert await _refused(one.take_table("t_4", "p3", None)) is None  # an operator's: not counted per address
    assert await _refused(one.take_table("t_5", None, None)) is None
    await one.release_table("t_1")
    await one.release_table("t_1")  # twice: nothing more
    await one.release_table("t_9")  # never counted
    assert await _refused(one.take_table("t_6", "p1", "a")) is None  # the player's and the address's room back
    assert await _refused(one.take_table("t_7", "p1", "c")) == player
    assert await _refused(one.take_table("t_7", "p4", "a")) == address


async def test_new_players_chat_and_websockets_at_the_same_counts(one: Limits):
    for _ in range(3):
        await one.new_player("a")
    assert await _refused(one.new_player("a")) == (
        "rate_limited", "at most 3 new players per 3600 s from one address; say hello with your token, or retry later")
    await one.new_player("b")
    for _ in range(int(BURST)):
        await one.chat("p1", "a")
    assert await _refused(one.chat("p1", "a")) == ("rate_limited", "too many chat messages: at most 5 per 10 s")
    await one.chat("p2", "a")
    assert [await one.open_socket("a") for _ in range(3)] == [True, True, False]
    assert await one.open_socket("b")
    one.close_socket("a")
    assert await one.open_socket("a")


async def test_chat_counts_against_its_player_and_its_address(one: Limits):
    """Three players' bursts fill one address; a fourth player there is refused
    on the address's count, from another address it is not; a player refused
    on its own count spends none of its address's."""
    per_address = int(ADDRESS_BURST // BURST)
    for p in range(per_address):
        for _ in range(int(BURST)):
            await one.chat(f"p{p}", "a")
    assert await _refused(one.chat("p9", "a")) == ADDRESS_REFUSAL
    assert await _refused(one.chat("p9", "a")) == ADDRESS_REFUSAL
    assert await _refused(one.chat("p8", "b")) is None  # another address: a budget of its own
    assert await _refused(one.chat("p0", "b")) == PLAYER_REFUSAL  # the player's count, whichever its address
    # a flooding player at address c: refused on its own count, c's budget untouched by it
    for _ in range(int(BURST)):
        await one.chat("f", "c")
    for _ in range(int(ADDRESS_BURST)):
        assert await _refused(one.chat("f", "c")) == PLAYER_REFUSAL
    for i in range(int(ADDRESS_BURST - BURST)):
        assert await _refused(one.chat(f"n{i // int(BURST)}", "c")) is None, i
    assert await _refused(one.chat("n9", "c")) == ADDRESS_REFUSAL


async def test_two_nodes_share_one_count(nodes: Nodes):
    n1, n2 = await nodes.node("n1"), await nodes.node("n2")
    await n1.take_table("t_1", "p1", "a")
    await n1.take_table("t_2", "p2", "a")
    await n2.take_table("t_3", "p1", "a")
    assert await _refused(n2.take_table("t_4", "p3", "a")) == ("too_many_tables", "at most 3 open tables per client address")
    assert await _refused(n2.take_table("t_4", "p1", "b")) == ("too_many_tables", "at most 2 open tables per player")
    await n2.release_table("t_1")  # counted by n1: its record names its owner and address
    await n2.take_table("t_4", "p1", "a")
    for node in (n1, n2, n1):
        await node.new_player("x")
    assert await _refused(n2.new_player("x")) is not None
    for i in range(int(BURST)):
        await (n1, n2)[i % 2].chat("p1", "a")
    assert await _refused(n1.chat("p1", "a")) is not None and await _refused(n2.chat("p1", "a")) is not None
    for i in range(int(ADDRESS_BURST - BURST)):  # the address's rest, by other players on both nodes
        await (n1, n2)[i % 2].chat(f"q{i // int(BURST)}", "a")
    assert await _refused(n2.chat("q9", "a")) == ADDRESS_REFUSAL
    assert await _refused(n1.chat("q9", "a")) == ADDRESS_REFUSAL
    # websockets: two at most from one address, whichever node holds them
    assert await n1.open_socket("a") and await n2.open_socket("a")
    assert not await n2.open_socket("a")  # refused, and held on n2 for HOLD
    n2.close_socket("a")
    await until(lambda: _field(nodes, "a", n2.me))  # written to Redis at once
    assert await n1.open_socket("a")
    assert not await n1.open_socket("a")
    nodes.kill(n1)  # n1's heartbeat gone: its websockets stop counting
    n3 = await nodes.node("n3")
    assert await n3.open_socket("a") and await n3.open_socket("a")
    assert not await n3.open_socket("a")


async def _field(nodes: Nodes, address: str, me: str) -> bool:
    """Whether node process ``me`` holds no websocket of ``address`` in Redis."""
    store = nodes.stores[0]
    return await store.client.hget(f"{nodes.prefix}:limit:sockets:{address}", me) is None


def _checkpoint(table: str) -> Checkpoint:
    return Checkpoint(table, {"v": FORMAT_VERSION, "id": table, "seq": 0, "status": "waiting"}, [])


async def test_a_count_whose_table_is_gone_heals_once_full(nodes: Nodes):
    n1 = await nodes.node("n1")
    n1.grace_ms = 0  # every member is past its grace at once
    store = nodes.stores[0]
    await store.commit([_checkpoint("t_kept")])  # a stored table stays counted
    assert await store.client.sismember(store.keys.tables(partition_of("t_kept")), "t_kept")
    for table in ("t_kept", "t_leak1", "t_leak2"):  # the two others were never stored (their node died)
        await n1.take_table(table, None, "a")
    await n1.take_table("t_new", None, "a")  # full: the two leaks are dropped, t_new counted
    members = {m.decode() for m in await store.client.zrange(n1.address_tables("a"), 0, -1)}
    assert members == {"t_kept", "t_new"}
    await store.commit([_checkpoint("t_new")])
    await n1.take_table("t_3", None, "a")
    await store.commit([_checkpoint("t_3")])
    assert await _refused(n1.take_table("t_4", None, "a")) is not None  # three stored: nothing to heal
    # within its grace a member is never dropped (a creation being stored)
    n2 = await nodes.node("n2")
    await n2.take_table("t_b1", "p9", None)
    await n2.take_table("t_b2", "p9", None)
    assert await _refused(n2.take_table("t_b3", "p9", None)) == ("too_many_tables", "at most 2 open tables per player")


async def test_a_refusal_is_held_on_its_node_for_a_second_at_most(nodes: Nodes):
    n1, n2 = await nodes.node("n1"), await nodes.node("n2")
    for i in range(3):
        await n1.take_table(f"t_{i}", None, "a")
    assert await _refused(n2.take_table("t_x", None, "a")) is not None
    await n1.release_table("t_0")
    assert await _refused(n1.take_table("t_y", None, "a")) is None  # n1 released it: not held there
    await n1.release_table("t_y")
    started = time.monotonic()
    refused = 0
    while await _refused(n2.take_table("t_x", None, "a")) is not None:  # held on n2, then asked again
        refused += 1
        assert time.monotonic() - started < HOLD + 5.0, "the refusal is held past its second"
        await asyncio.sleep(0.02)
    assert refused > 0  # answered on n2 without Redis until its hold ended


async def test_redis_down_answers_unavailable_and_websockets_fall_back_to_the_node(redis_server: RedisServer):
    redis = redis_server
    made = Nodes(redis.url, "down")
    try:
        n1 = await made.node("n1", timeout=0.5)
        await n1.take_table("t_1", "p1", "a")
        redis.stop()
        for call in (n1.take_table("t_2", "p1", "a"), n1.new_player("a"), n1.chat("p1", "a")):
            refused = await _refused(call)
            assert refused is not None and refused[0] == "unavailable", refused
        await n1.release_table("t_1")  # logged, never raised
        assert [await n1.open_socket("a") for _ in range(3)] == [True, True, False]  # this node's own count
        n1.close_socket("a")
        redis.start()
        await n1.sweep(time.monotonic() + 3600)  # the refresh writes what could not be written
        store = made.stores[0]
        assert int(await store.client.hget(n1.sockets_of("a"), n1.me)) == 1
    finally:
        await made.close()


# -- through real halls: a table moved to another node keeps its counts ------------------------------



@pytest.mark.parametrize("how", ["handed", "restarted"])
async def test_a_moved_table_still_counts_against_its_owner_and_address(redis_server: RedisServer, how: str):
    """Node a's tables go to node b (a SIGTERM's handover while b runs, or
    b started after a stopped and restoring them): b refuses the owner's and
    the address's next table, and releases both counts when one closes."""
    redis = redis_server
    base = replace(TEST_SETTINGS, redis_url=redis.url, redis_prefix=f"moved-{how}", max_tables_per_player=2,
                   max_tables_per_address=3, placement="local", lease_ttl=1.5, lease_renew=0.3,
                   operator_key="ops")
    a_settings, b_settings = replace(base, node_id="a"), replace(base, node_id="b")
    async with running_server(a_settings) as a:
        p = await a.client("p")
        q = await a.client("q")
        mine = [await p.create_table(**WAITING_TABLE) for _ in range(2)]
        await q.create_table(**WAITING_TABLE)
        assert await code_of(p.create_table(**WAITING_TABLE)) == "too_many_tables: player"
        token = p.token
        await p.close()
        await q.close()
        if how == "handed":
            b_server = running_server(b_settings)
            b = await b_server.__aenter__()
    if how == "restarted":
        b_server = running_server(b_settings)
        b = await b_server.__aenter__()
    try:
        await until(lambda: len(b.hall.tables) == 3, timeout=20)
        p = await Client(b.url).connect()
        await p.hello("p", token=token)
        assert await code_of(p.create_table(**WAITING_TABLE)) == "too_many_tables: player"
        q = await b.client("q2")  # another player from the same address
        assert await code_of(q.create_table(**WAITING_TABLE)) == "too_many_tables: client address"
        async with httpx.AsyncClient(base_url=b.http) as http:
            closed = await http.post(f"/api/ops/tables/{mine[0]}/close", headers={"X-Operator-Key": "ops"})
            assert closed.status_code in (200, 202), closed.text
        await until(lambda: _not_counted(b, mine[0]))
        assert await code_of(p.create_table(**WAITING_TABLE)) == "ok"  # the owner's and the address's room back
        await p.close()
        await q.close()
    finally:
        await b_server.__aexit__(None, None, None)


async def _not_counted(live: Any, table: str) -> bool:
    limits = live.hall.limits
    assert isinstance(limits, RedisLimits)
    score = await limits.client.zscore(limits.address_tables("127.0.0.1"), table)
    return score is None


# -- a Redis Cluster ---------------------------------------------------------------------------------

async def test_the_counts_work_on_a_redis_cluster(redis_cluster: Any):
    made = Nodes(redis_cluster.url, "rc")
    try:
        n1, n2 = await made.node("n1"), await made.node("n2")
        assert made.stores[0].conn.clustered
        n1.grace_ms = 0
        for i in range(3):  # ids in several partitions: records and index look-ups on several masters
            await (n1, n2)[i % 2].take_table(f"t_{i}", "p1" if i < 2 else "p2", "a")
        assert await _refused(n2.take_table("t_9", "p3", "a")) == ("too_many_tables", "at most 3 open tables per client address")
        await n2.release_table("t_0")  # counted by n1
        await n2.take_table("t_9", "p1", "b")  # t_0's room for p1 back; t_1 and t_9 never stored
        assert await _refused(n1.take_table("t_10", "p1", "c")) is None  # full for p1: the two leaks healed
        for i in range(int(BURST)):
            await (n1, n2)[i % 2].chat("p1", "a")
        assert await _refused(n1.chat("p1", "a")) is not None
        for i in range(int(ADDRESS_BURST - BURST)):
            await (n1, n2)[i % 2].chat(f"q{i // int(BURST)}", "a")
        assert await _refused(n1.chat("q9", "a")) == ADDRESS_REFUSAL
        assert await n1.open_socket("a") and await n2.open_socket("a") and not await n1.open_socket("a")
    finally:
        await made.close()
