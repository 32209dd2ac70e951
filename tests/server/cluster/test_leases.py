"""Leases and fencing against a real Redis (``server/cluster/leases.py``,
``server/cluster/scripts.py``, the fenced scripts of ``server/store/scripts.py``).

The guarantee under test: a write of a table's data lands only while the
writer's token is the table's lease; a claim takes only a free lease and
moves the epoch on; a token from before lost Redis data never matches again.
"""

from __future__ import annotations

import msgpack
import orjson
import pytest

from cardhall.server.cluster.leases import NEW, TAKEOVER, Leases, token_epoch, token_node
from cardhall.server.cluster.registry import Registry
from cardhall.server.store.base import Checkpoint, LeaseLost
from cardhall.server.store.format import FORMAT_VERSION, pack_event
from cardhall.server.store.keys import Keys, partition_of
from cardhall.server.store.redis import RedisStore
from cardhall.server.store.redis_conn import RedisConn
from tests.conftest import until

pytestmark = pytest.mark.redis


def _checkpoint(table: str, seq: int, token: str | None) -> Checkpoint:
    state = {"v": FORMAT_VERSION, "id": table, "seq": seq, "status": "running"}
    cp = Checkpoint(table, state, [(seq, pack_event({"data": {"type": "note", "n": seq}, "ts": 0.0}))])
    cp.token = token
    return cp


#: a lease or heartbeat no test step outlives (milliseconds)
MINUTE_MS = 60_000


@pytest.fixture
async def store(redis_server):
    store = RedisStore(redis_server.url, prefix="fx", stream_bound=64)
    await store.load_tables()  # marks the store as holding data
    store.lease_ms = 800
    try:
        yield store
    finally:
        await store.close()


def _leases(store: RedisStore, node: str, nonce: str) -> Leases:
    return Leases(store.client, store.keys, node, nonce, 800)


async def _expired(store: RedisStore, table: str) -> None:
    """Once Redis has let ``table``'s lease (0.8 s, unrenewed) expire."""
    async def gone() -> bool:
        return not await store.client.exists(store.keys.lease(table))

    await until(gone, 30, f"the lease of {table} expired")


async def test_a_claim_takes_only_a_free_lease_and_moves_the_epoch_on(store):
    a, b = _leases(store, "a", "n1"), _leases(store, "b", "n2")
    assert await a.claim("t_1") is None  # not stored: no claim (a new table uses NEW)
    token = await a.claim("t_1", NEW)
    assert token is not None and token_node(token) == "a" and token_epoch(token) == 1
    await store.commit([_checkpoint("t_1", 1, token)])
    assert await b.claim("t_1") is None  # held
    assert await a.owner("t_1") == "a" and await b.owners(["t_1", "t_2"]) == {"t_1": "a", "t_2": None}
    assert await a.release("t_1", "a|other|1") is False  # not that token
    assert await a.release("t_1", token) is True
    again = await b.claim("t_1")
    assert again is not None and token_node(again) == "b" and token_epoch(again) == 2
    assert await b.orphans() == []


async def test_a_stale_owner_writes_nothing_after_its_lease_is_taken(store):
    a, b = _leases(store, "a", "n1"), _leases(store, "b", "n2")
    old = await a.claim("t_1", NEW)
    await store.commit([_checkpoint("t_1", 1, old)])
    await _expired(store, "t_1")  # a was paused
    assert await a.renew([("t_1", old)]) == [0]  # its renewal finds it gone
    assert await b.orphans() == ["t_1"]
    new = await b.claim("t_1")
    assert new is not None
    await store.commit([_checkpoint("t_1", 2, new)])
    stale = _checkpoint("t_1", 3, old)
    await store.commit([stale, _checkpoint("t_1", 3, new)])  # the batch's other checkpoint lands
    assert isinstance(stale.error, LeaseLost)
    assert (await store.state("t_1"))["seq"] == 3
    ids = [e[0] for e in await store.client.xrange(store.keys.events("t_1"))]
    assert ids == [b"1-0", b"2-0", b"3-0"]
    with pytest.raises(LeaseLost):
        await store.delete_table("t_1", old)
    with pytest.raises(LeaseLost):
        await store.quarantine("t_1", "stale", old)
    assert await store.table_ids() == ["t_1"]
    await store.delete_table("t_1", new)
    assert await store.table_ids() == [] and await store.client.get(store.keys.lease("t_1")) is None


async def test_an_expired_lease_nobody_took_is_claimed_again_only_at_its_epoch(store):
    a, b = _leases(store, "a", "n1"), _leases(store, "b", "n2")
    token = await a.claim("t_1", NEW)
    await store.commit([_checkpoint("t_1", 1, token)])
    await _expired(store, "t_1")
    again = await a.claim("t_1", expected_epoch=token_epoch(token))  # nobody owned it since
    assert again is not None and token_epoch(again) == 2
    await store.client.delete(store.keys.lease("t_1"))
    taken = await b.claim("t_1")
    assert taken is not None and token_epoch(taken) == 3
    await b.release("t_1", taken)
    assert await a.claim("t_1", expected_epoch=token_epoch(again)) is None  # b owned it meanwhile


async def test_a_node_started_again_with_its_id_takes_its_leases_back(store):
    first = _leases(store, "a", "first-process")
    token = await first.claim("t_1", NEW)
    await store.commit([_checkpoint("t_1", 1, token)])
    second = _leases(store, "a", "second-process")
    other = _leases(store, "b", "n2")
    assert await other.orphans(takeover=False) == [] and await other.claim("t_1", TAKEOVER) is None
    assert await second.orphans(takeover=True) == ["t_1"]
    back = await second.claim("t_1", TAKEOVER)
    assert back is not None and back != token and token_epoch(back) == 2
    stale = _checkpoint("t_1", 2, token)
    await store.commit([stale])
    assert isinstance(stale.error, LeaseLost)  # the first process could not write any more


async def test_after_redis_lost_its_data_a_rewrite_takes_the_lease_and_old_tokens_never_match(store):
    a = _leases(store, "a", "n1")
    token = await a.claim("t_1", NEW)
    await store.commit([_checkpoint("t_1", 5, token)])
    await store.client.flushall()  # Redis restarted empty
    assert await store.probe() is False
    fresh = _checkpoint("t_1", 5, token)
    await store.rewrite([fresh])  # the owner writes its memory again: it takes the lease first
    assert fresh.error is None and await store.client.get(store.keys.lease("t_1")) == token.encode()
    assert int(await store.client.get(store.keys.epoch("t_1"))) == token_epoch(token)
    # a stale owner of the same table with a token of the same epoch but another process is refused
    stale = _checkpoint("t_1", 6, f"b|old|{token_epoch(token)}")
    await store.commit([stale])
    assert isinstance(stale.error, LeaseLost)


async def test_tables_stored_under_the_old_key_names_are_moved(store):
    client = store.client
    state = {"v": FORMAT_VERSION, "id": "t_old", "seq": 1, "status": "running"}
    await client.set("fx:t:t_old", msgpack.packb(state))
    await client.xadd("fx:t:t_old:events", {"1": b"x"}, id="1-0")
    await client.sadd(store.keys.old_tables, "t_old")  # the layout before partitions
    assert await store.migrate_keys() == 1
    assert await store.migrate_keys() == 0  # idempotent
    assert await client.exists("fx:t:t_old") == 0
    assert (await store.state("t_old"))["seq"] == 1
    assert await client.xlen(store.keys.events("t_old")) == 1


async def test_leases_heartbeats_and_the_lobby_on_a_redis_cluster(redis_cluster):
    """Every script runs on one slot and what spans partitions is pipelined:
    the same calls work on a Redis Cluster of three masters. The leases and the
    heartbeat last a minute: nothing here waits for one to expire, and a busy
    machine may take seconds between a claim and its check."""
    conn = RedisConn(redis_cluster.url, timeout=2.0)
    await conn.ready()
    keys = Keys("lc")
    client = conn.client
    a, b = Leases(client, keys, "a", "n1", MINUTE_MS), Leases(client, keys, "b", "n2", MINUTE_MS)
    tables = [f"t_{i}" for i in range(40)]
    assert len({conn.node_of(keys.lease(t)) for t in tables}) == 3
    channel = keys.channel(tables[0])
    sub = conn.subscriber(*conn.node_of(channel))
    pubsub = sub.pubsub(ignore_subscribe_messages=True)
    try:
        await pubsub.ssubscribe(channel)
        tokens = {t: await a.claim(t, NEW) for t in tables}
        assert all(tok is not None and token_node(tok) == "a" for tok in tokens.values())
        message = None
        for _ in range(10):  # the claim's owner change, on the table's sharded channel
            message = message or await pubsub.get_message(timeout=0.5)
        assert message is not None and message["type"] == "smessage" and msgpack.unpackb(message["data"]) == ["o", "a"]
        for t in tables:  # stored (what the commit does)
            await client.sadd(keys.tables(partition_of(t)), t)
        assert await b.stored(tables[5]) and not await b.stored("t_none")
        assert await b.owners(tables) == dict.fromkeys(tables, "a")
        assert await b.orphans() == []
        for t in (tables[17], tables[3]):
            await client.delete(keys.lease(t))
        held = [(t, tokens[t]) for t in tables]
        assert await a.renew(held) == [3, 17]  # indexes in ``held``, whatever the partitions
        assert sorted(await b.orphans()) == sorted([tables[3], tables[17]])
        assert len(await b.orphans(limit=1)) == 1
        again = Leases(client, keys, "a", "n3", MINUTE_MS)
        assert sorted(await again.orphans(takeover=True)) == sorted(tables)
        assert await a.release(tables[0], tokens[tables[0]]) is True
        assert (await b.owners([tables[0], tables[1]])) == {tables[0]: None, tables[1]: "a"}
        # the registry ({nodes}: one slot) and the lobby (one hash per partition)
        registry = Registry(client, keys, "a", MINUTE_MS)
        assert await registry.beat({"id": "a", "tables": 2}) is True
        assert set(registry.live) == {"a"} and (await registry.holder("a"))[0]["tables"] == 2
        # a placement counts for its node until a heartbeat reports the table (read back with the live nodes)
        assert await registry.place(tables[0]) == "a" and registry.placing == {}
        await registry.beat({"id": "a", "tables": 2})
        assert registry.placing == {"a": {tables[0]}}
        await registry.beat({"id": "a", "tables": 3}, [tables[0]])
        assert registry.placing == {}
        for t in tables[:10]:
            await client.hset(keys.lobby(partition_of(t)), t, orjson.dumps({"id": t}))
        assert await registry.infos() == {t: {"id": t} for t in tables[:10]}
        assert await registry.info(tables[4]) == {"id": tables[4]} and await registry.info(tables[20]) is None
        await registry.leave()
        assert await registry.holder("a") is None
    finally:
        await pubsub.aclose()
        await sub.aclose()
        await conn.close()
