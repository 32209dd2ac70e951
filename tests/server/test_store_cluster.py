"""The Redis store on a real Redis Cluster of three masters
(:mod:`tests.server.cluster.redis_cluster`): a group commit is one script
call per partition of the batch, all in one pipeline; a master that finds no
script (a new or restarted one) gets it and the calls are sent again; a
master that lost its data is noticed by its partitions' markers and written
back by the rewrite; a slot moved to another master is followed; reads that
span partitions (the index, the quarantine, players) work across the masters;
every connection packs with hiredis; the layout before partitions is never
looked for (a cluster never held it)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio.cluster import RedisCluster as ClusterClient

from cardhall.server.store.base import Checkpoint, LeaseLost, StoreEmpty, StoreUnavailable
from cardhall.server.store.format import FORMAT_VERSION, pack_event
from cardhall.server.store.keys import PARTITIONS, partition_of, slot
from cardhall.server.store.redis import RedisStore

pytestmark = pytest.mark.redis

TABLES = [f"t_{i}" for i in range(100)]


def _checkpoint(table: str, seqs: range, token: str | None = None) -> Checkpoint:
    state = {"v": FORMAT_VERSION, "id": table, "seq": seqs[-1], "status": "running"}
    cp = Checkpoint(table, state, [(s, pack_event({"data": {"n": s}, "ts": 1.5})) for s in seqs])
    cp.token = token
    return cp


@pytest.fixture(scope="module")
def cluster(redis_cluster: object) -> object:
    """The module's Redis Cluster (tests/server/conftest.py)."""
    return redis_cluster


@pytest.fixture
async def store(cluster, request) -> AsyncIterator[RedisStore]:
    store = RedisStore(cluster.url, prefix=request.node.name, stream_bound=64)
    assert store.conn.clustered
    assert await store.load_tables() == []
    try:
        yield store
    finally:
        await store.close()


async def _evalsha_calls(client: ClusterClient) -> int:
    total = 0
    for node in client.get_primaries():
        stats = await client.info("commandstats", target_nodes=node)
        total += int(stats.get("cmdstat_evalsha", {}).get("calls", 0))
    return total


async def test_a_group_commit_is_one_script_call_per_partition(store):
    client = store.client
    before = await _evalsha_calls(client)
    await store.commit([_checkpoint(t, range(1, 4)) for t in TABLES])
    assert await _evalsha_calls(client) == before + len({partition_of(t) for t in TABLES})
    assert len({store.conn.node_of(store.keys.state(t)) for t in TABLES}) == 3  # every master took its share
    await store.commit([_checkpoint(t, range(4, 6)) for t in TABLES])
    loaded = {t.id: t.data["seq"] for t in await store.load_tables()}
    assert loaded == dict.fromkeys(TABLES, 5)
    assert [seq for seq, _ in await store.events_since("t_7", 0, 5)] == [1, 2, 3, 4, 5]
    for node in client.get_nodes():  # every connection made packs with hiredis
        assert node.connection_class.__name__.startswith("Hiredis")


async def test_a_master_without_the_script_gets_it(store):
    await store.commit([_checkpoint(t, range(1, 2)) for t in TABLES])
    await store.client.execute_command("SCRIPT FLUSH", target_nodes=ClusterClient.PRIMARIES)
    await store.commit([_checkpoint(t, range(2, 3)) for t in TABLES])
    assert (await store.state("t_3"))["seq"] == 2


async def test_a_refused_table_fails_alone(store):
    await store.client.set(store.keys.lease("t_1"), "n1|x|1")
    refused, fine = _checkpoint("t_1", range(1, 2), token="n2|y|2"), _checkpoint("t_2", range(1, 2))
    await store.commit([refused, fine])
    assert isinstance(refused.error, LeaseLost) and fine.error is None
    assert await store.table_ids() == ["t_2"]


async def test_a_master_that_lost_its_data_is_noticed_and_written_back(store):
    client = store.client
    await store.commit([_checkpoint(t, range(1, 3)) for t in TABLES])
    lost = client.get_node_from_key(store.keys.meta(0))
    await client.flushall(target_nodes=lost)
    assert await store.probe() is False
    with pytest.raises(StoreEmpty):
        await store.commit([_checkpoint(t, range(3, 4)) for t in TABLES])
    await store.rewrite([_checkpoint(t, range(1, 4)) for t in TABLES])
    assert await store.probe() is True
    assert all([await client.exists(store.keys.meta(n)) for n in range(PARTITIONS)])
    assert {t.id: t.data["seq"] for t in await store.load_tables()} == dict.fromkeys(TABLES, 3)


async def test_a_partition_moved_to_another_master_is_followed(cluster, store):
    table = "t_5"
    await store.commit([_checkpoint(table, range(1, 2))])
    source = store.conn.node_of(store.keys.state(table))[1]
    target = next(p for p in cluster.ports if p != source)
    cluster.move_slot(slot(store.keys.state(table)), source, target)
    await store.commit([_checkpoint(table, range(2, 3)), _checkpoint("t_6", range(1, 2))])
    assert store.conn.node_of(store.keys.state(table))[1] == target
    assert (await store.state(table))["seq"] == 2 and await store.probe() is True


async def test_what_spans_partitions_works_across_masters(store):
    await store.commit([_checkpoint(t, range(1, 2)) for t in TABLES[:20]])
    await store.quarantine("t_3", "unreadable")
    await store.delete_table("t_4")
    await store.client.sadd(store.keys.tables(9), b"t_\xff")
    assert await store.table_ids() == sorted(set(TABLES[:20]) - {"t_3", "t_4"})
    assert set(await store.quarantined()) == {"t_3", "t_\\xff"}
    assert await store.quarantined_state("t_3") is not None and await store.load_table("t_3") is None
    store.players.ttl = 100
    for i in range(10):
        await store.save_player(f"p_{i}", f"{i:02d}" * 32, f"n{i}")
    await store.touch_players([f"p_{i}" for i in range(12)])
    fresh = RedisStore(store.url, prefix=store.prefix)
    try:
        assert [await fresh.find_player(f"{i:02d}" * 32) for i in (0, 9)] == [("p_0", "n0"), ("p_9", "n9")]
    finally:
        await fresh.close()
    assert await store.migrate_keys() == 0


async def test_a_commit_not_acknowledged_by_enough_replicas_fails(cluster):
    store = RedisStore(cluster.url, prefix="sw", wait_replicas=1, wait_timeout=0.1)
    try:
        # the probe says so at once (the masters have no replica): the store counts as down
        with pytest.raises(StoreUnavailable, match=r"master 127\.0\.0\.1:\d+ has 0, .* connected replicas"):
            await store.load_tables()  # it marks the partitions before its probe
        with pytest.raises(StoreUnavailable, match="not acknowledged by 1 replicas"):
            await store.commit([_checkpoint(t, range(1, 2)) for t in TABLES[:10]])
    finally:
        await store.close()
