"""The ``Store`` interface, run against both stores: the in-memory store
(keeping states, as tests and tools use it) and the Redis store on a real
``redis-server`` started for the test. Then the checkpoint format (versions,
migrations, unreadable data) and what only Redis does (one script per group
commit, refusing to write into a Redis that lost its data, the rewrite)."""

from __future__ import annotations

import asyncio
import doctest
import re
from collections.abc import AsyncIterator

import msgpack
import pytest
import redis.asyncio as aioredis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cardhall.server.store.committer
import cardhall.server.store.format
import cardhall.server.store.redis
from cardhall.server.store.base import Checkpoint, Store, StoreEmpty, StoreUnavailable
from cardhall.server.store.format import FORMAT_VERSION, CheckpointError, pack_event, pack_state, unpack_state
from cardhall.server.store.keys import PARTITIONS, Keys, partition_of
from cardhall.server.store.memory import MemoryStore
from cardhall.server.store.redis import RedisStore
from tests.server.conftest import free_port


def _state(table: str, seq: int, **extra: object) -> dict:
    return {"v": FORMAT_VERSION, "id": table, "seq": seq, "status": "running", **extra}


def _event(seq: int) -> tuple[int, dict]:
    return seq, {"data": {"type": "note", "n": seq}, "private": {"1": {"card": "Ah"}}, "ts": 1.5, "turn": None}


def _checkpoint(table: str, seqs: range, hands: list[dict] | None = None) -> Checkpoint:
    return Checkpoint(table, _state(table, seqs[-1] if seqs else 0), [(s, pack_event(_event(s)[1])) for s in seqs], hands)


def _hand(seq: int, match: int = 1) -> dict:
    return {"game": "loco_poker", "match": match, "hand": {"n": seq}, "seq": seq}


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def store(request) -> AsyncIterator[Store]:
    """Each store, as the hall uses it (loaded once before the first commit)."""
    if request.param == "memory":
        yield MemoryStore(event_bound=64, keep_states=True)
        return
    server = request.getfixturevalue("redis_server")
    store = RedisStore(server.url, prefix="st", stream_bound=64)
    assert await store.load_tables() == []
    try:
        yield store
    finally:
        await store.close()


@pytest.mark.parametrize("module", [cardhall.server.store.format, cardhall.server.store.redis])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


async def test_commit_then_load_gives_the_last_state(store):
    await store.commit([_checkpoint("t_a", range(1, 4)), _checkpoint("t_b", range(1, 2))])
    await store.commit([_checkpoint("t_a", range(4, 6))])
    loaded = {t.id: t for t in await store.load_tables()}
    assert set(loaded) == {"t_a", "t_b"}
    assert loaded["t_a"].data == _state("t_a", 5) and loaded["t_a"].error is None
    assert loaded["t_b"].data == _state("t_b", 1)


async def test_events_since_gives_exactly_the_missing_events(store):
    await store.commit([_checkpoint("t_a", range(1, 4))])
    await store.commit([_checkpoint("t_a", range(4, 11))])
    assert await store.events_since("t_a", 3, 10) == [_event(s) for s in range(4, 11)]
    assert await store.events_since("t_a", 0, 4) == [_event(s) for s in range(1, 5)]
    assert await store.events_since("t_a", 10, 10) == []
    assert await store.events_since("t_a", 5, 12) is None  # not all stored
    assert await store.events_since("t_unknown", 0, 3) is None


async def test_events_beyond_the_bound_are_trimmed(store):
    for start in range(1, 1001, 50):
        await store.commit([_checkpoint("t_a", range(start, start + 50))])
    assert await store.events_since("t_a", 0, 1000) is None  # the oldest are gone
    assert await store.events_since("t_a", 960, 1000) == [_event(s) for s in range(961, 1001)]


async def test_a_commit_sent_again_writes_nothing_twice(store):
    """A commit whose reply was lost is sent again (same events, same hands)."""
    first = _checkpoint("t_a", range(1, 6), hands=[_hand(3), _hand(5)])
    await store.commit([first])
    again = _checkpoint("t_a", range(1, 8), hands=[_hand(3), _hand(5), _hand(7)])  # a retry that grew
    await store.commit([again])
    assert await store.events_since("t_a", 0, 7) == [_event(s) for s in range(1, 8)]
    assert [h["seq"] for h in await store.hands("t_a")] == [3, 5, 7]


async def test_deleted_table_keeps_its_hands(store):
    await store.commit([_checkpoint("t_a", range(1, 4), hands=[_hand(2, match=1)]), _checkpoint("t_b", range(1, 3))])
    await store.delete_table("t_a")
    assert [t.id for t in await store.load_tables()] == ["t_b"]
    assert await store.events_since("t_a", 0, 3) is None
    assert await store.hands("t_a") == [_hand(2, match=1)]


async def test_players_are_found_by_token_hash(store):
    await store.save_player("p_1", "ab" * 32, "ann")
    assert await store.find_player("ab" * 32) == ("p_1", "ann")
    assert await store.find_player("cd" * 32) is None


async def test_unreadable_checkpoints_are_reported_and_quarantined(store):
    await store.commit([_checkpoint(t, range(1, 3)) for t in ("t_ok", "t_bad", "t_new")])
    await _put_state(store, "t_bad", b"\xc1garbage")
    await _put_state(store, "t_new", pack_state(_state("t_new", 2) | {"v": FORMAT_VERSION + 1}))
    loaded = {t.id: t for t in await store.load_tables()}
    assert loaded["t_ok"].data is not None
    assert loaded["t_bad"].data is None and "not a msgpack checkpoint" in loaded["t_bad"].error
    assert loaded["t_new"].data is None and "newer than this server's" in loaded["t_new"].error
    for table in ("t_bad", "t_new"):
        await store.quarantine(table, loaded[table].error)
    assert [t.id for t in await store.load_tables()] == ["t_ok"]
    assert set(await store.quarantined()) == {"t_bad", "t_new"}


async def test_a_checkpoint_that_cannot_be_encoded_fails_alone(store):
    bad = Checkpoint("t_bad", _state("t_bad", 1, oops={1, 2}), [(1, pack_event(_event(1)[1]))])  # a set: not msgpack data
    good = _checkpoint("t_good", range(1, 3))
    await store.commit([bad, good])
    assert isinstance(bad.error, TypeError) and good.error is None
    assert [t.id for t in await store.load_tables()] == ["t_good"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(1, 6), st.booleans()), min_size=1, max_size=12), st.data())
async def test_stream_is_the_history_whatever_the_retries(store, steps, data):
    """Property: committing events in checkpoints, some sent twice (a retry),
    leaves exactly the history 1..n; ``since`` anywhere in it gives its tail."""
    table = f"t_{id(steps)}"
    seq = 0
    for size, retry in steps:
        cp = _checkpoint(table, range(seq + 1, seq + size + 1))
        await store.commit([cp])
        if retry:
            await store.commit([_checkpoint(table, range(seq + 1, seq + size + 1))])
        seq += size
    since = data.draw(st.integers(0, seq))
    assert await store.events_since(table, since, seq) == [_event(s) for s in range(since + 1, seq + 1)]
    loaded = {t.id: t.data for t in await store.load_tables()}
    assert loaded[table]["seq"] == seq


# -- the format ---------------------------------------------------------------
def test_migrations_upgrade_old_checkpoints_step_by_step(monkeypatch):
    """The migration path: a checkpoint of format 1 read by a server of format 3."""
    monkeypatch.setattr(cardhall.server.store.format, "FORMAT_VERSION", 3)
    monkeypatch.setitem(cardhall.server.store.format.MIGRATIONS, 1, lambda d: {**d, "clocks": "seconds left"})
    monkeypatch.setitem(cardhall.server.store.format.MIGRATIONS, 2, lambda d: {**{k: v for k, v in d.items() if k != "old"}, "renamed": d["old"]})
    data = unpack_state(msgpack.packb({"v": 1, "id": "t_1", "old": 7}))
    assert data == {"v": 3, "id": "t_1", "clocks": "seconds left", "renamed": 7}
    monkeypatch.delitem(cardhall.server.store.format.MIGRATIONS, 2)
    with pytest.raises(CheckpointError, match="no migration from checkpoint format 2 to 3"):
        unpack_state(msgpack.packb({"v": 1, "id": "t_1", "old": 7}))


@pytest.mark.parametrize("blob, message", [
    (None, "no state stored"),
    (b"\xc1", "not a msgpack checkpoint"),
    (msgpack.packb([1, 2]), "not a map"),
    (msgpack.packb({"id": "t"}), "no format version"),
    (msgpack.packb({"v": "1"}), "no format version"),
    (msgpack.packb({"v": FORMAT_VERSION + 1}), "newer than this server's"),
    (msgpack.packb({"v": 0}), "no migration from checkpoint format 0"),
])
def test_unreadable_checkpoints_say_why(blob, message):
    with pytest.raises(CheckpointError, match=message):
        unpack_state(blob)


class _SlowStore(MemoryStore):
    """A memory store whose commits take a loop iteration or more (as a
    networked store's), recording how many run at once."""

    def __init__(self) -> None:
        super().__init__(keep_states=True)
        self.running = 0
        self.most = 0
        self.sizes: list[int] = []

    def commit_now(self, batch):  # type: ignore[override]
        return False

    async def commit(self, batch):  # type: ignore[override]
        self.running += 1
        self.most = max(self.most, self.running)
        self.sizes.append(len(batch))
        try:
            await asyncio.sleep(0.01)
            super().commit_now(batch)
        finally:
            self.running -= 1


async def test_group_commit_splits_a_large_batch_into_two_commits_in_flight():
    store = _SlowStore()
    committer = cardhall.server.store.committer.GroupCommitter(store)
    await asyncio.gather(*(committer.commit(_checkpoint(f"t_{i}", range(1, 3))) for i in range(40)))
    assert store.sizes == [20, 20] and store.most == 2
    assert {t.id for t in await store.load_tables()} == {f"t_{i}" for i in range(40)}
    # a small batch goes whole; a job run exclusively waits for the commits in flight
    pending = [asyncio.ensure_future(committer.commit(_checkpoint(f"t_{i}", range(3, 5)))) for i in range(5)]
    while not store.running:
        await asyncio.sleep(0)
    seen = await committer.exclusive(lambda: asyncio.sleep(0, result=(store.running, list(store.sizes))))
    assert seen == (0, [20, 20, 5])
    await asyncio.gather(*pending)
    assert await store.events_since("t_4", 0, 4) == [_event(s) for s in range(1, 5)]


# -- Redis only ----------------------------------------------------------------
@pytest.mark.redis
async def test_one_group_commit_is_one_redis_script_call(redis_server):
    store = RedisStore(redis_server.url, prefix="gc")
    await store.load_tables()
    db = aioredis.Redis.from_url(redis_server.url)
    try:
        before = await _evalsha_calls(db)
        await store.commit([_checkpoint(f"t_{i}", range(1, 5), hands=[_hand(4)]) for i in range(100)])
        assert await _evalsha_calls(db) == before + 1
        assert len(await store.load_tables()) == 100
    finally:
        await db.aclose()
        await store.close()


@pytest.mark.redis
async def test_a_redis_that_lost_its_data_gets_nothing_until_rewritten(redis_server):
    store = RedisStore(redis_server.url, prefix="rw")
    await store.load_tables()
    await store.save_player("p_1", "ab" * 32, "ann")
    await store.commit([_checkpoint("t_a", range(1, 4)), _checkpoint("t_b", range(1, 3))])
    db = aioredis.Redis.from_url(redis_server.url)
    try:
        await db.flushall()  # what a restart without persistence looks like
        assert await store.probe() is False
        with pytest.raises(StoreEmpty):
            await store.commit([_checkpoint("t_a", range(4, 6))])
        assert await db.keys("rw:*") == []  # nothing half-written
        await store.rewrite([_checkpoint("t_a", range(1, 6), hands=[_hand(5)]), _checkpoint("t_b", range(1, 3))])
        assert await store.probe() is True
        loaded = {t.id: t.data for t in await store.load_tables()}
        assert loaded == {"t_a": _state("t_a", 5), "t_b": _state("t_b", 2)}
        assert await store.events_since("t_a", 0, 5) == [_event(s) for s in range(1, 6)]
        assert [h["seq"] for h in await store.hands("t_a")] == [5]
        fresh = RedisStore(redis_server.url, prefix="rw")  # no cache: the player is in Redis again
        assert await fresh.find_player("ab" * 32) == ("p_1", "ann")
        await fresh.close()
        await store.commit([_checkpoint("t_a", range(6, 8))])  # and commits go through again
        assert await store.events_since("t_a", 5, 7) == [_event(6), _event(7)]
    finally:
        await db.aclose()
        await store.close()


@pytest.mark.redis
async def test_a_partition_that_lost_its_marker_refuses_commits_until_rewritten(redis_server):
    """Markers are per partition (on a cluster, per shard): one lost, or
    written again by another node (a new generation), is noticed by the probe
    and refuses a commit touching it; the rewrite marks every partition."""
    store = RedisStore(redis_server.url, prefix="pm")
    await store.load_tables()
    keys = store.keys
    a, b = "t_a", next(f"t_{i}" for i in range(100) if partition_of(f"t_{i}") != partition_of("t_a"))
    await store.commit([_checkpoint(a, range(1, 3)), _checkpoint(b, range(1, 3))])
    db = aioredis.Redis.from_url(redis_server.url)
    try:
        assert all([await db.exists(keys.meta(n)) for n in range(PARTITIONS)])
        await db.delete(keys.meta(partition_of(a)))
        assert await store.probe() is False
        with pytest.raises(StoreEmpty, match=re.escape(keys.meta(partition_of(a)))):
            await store.commit([_checkpoint(b, range(3, 4)), _checkpoint(a, range(3, 4))])
        assert await store.events_since(b, 0, 3) is None  # the whole call refused: nothing half-written
        await store.rewrite([_checkpoint(a, range(1, 4)), _checkpoint(b, range(1, 4))])
        assert await store.probe() is True
        await db.hset(keys.meta(partition_of(b)), "generation", "another")  # another node marked it after a loss
        assert await store.probe() is False
        await store.rewrite([_checkpoint(b, range(1, 4))])
        assert store.generations[partition_of(b)] == b"another" and await store.probe() is True
        await store.commit([_checkpoint(a, range(4, 5)), _checkpoint(b, range(4, 5))])
        assert [t.data["seq"] for t in await store.load_tables()] == [4, 4]
    finally:
        await db.aclose()
        await store.close()


@pytest.mark.redis
async def test_the_layout_before_partitions_is_moved_to_the_partitions(redis_server):
    """A store written before partitions (one ``P:tables``, ``P:lobby``,
    ``P:quarantine``, ``P:meta``, each table under ``P:{id}``, older ones under
    ``P:t:{id}``) is moved by ``migrate_keys``: idempotent, and two nodes
    starting together move each table once."""
    db = aioredis.Redis.from_url(redis_server.url)
    keys = Keys("old")
    old = {t: keys.old_base(t) for t in ("t_a", "t_b", "t_q")}
    await db.hset(keys.old_meta, mapping={"format": FORMAT_VERSION, "generation": "g"})
    for t in ("t_a", "t_b"):
        await db.set(old[t], msgpack.packb(_state(t, 3)))
        await db.xadd(old[t] + ":events", {"1": b"e"}, id="3-0")
        await db.rpush(old[t] + ":log", b"step")
        await db.set(old[t] + ":logn", 4)
        await db.rpush(old[t] + ":hands", msgpack.packb(_hand(2)))
        await db.set(old[t] + ":handseq", 2)
        await db.set(old[t] + ":lease", f"n1|x|{len(t)}", px=60_000)
        await db.set(old[t] + ":epoch", 5)
        await db.hset(keys.old_lobby, t, b'{"id": "%s"}' % t.encode())
    await db.set(old["t_q"], b"\xc1")
    await db.set(keys.legacy_state("t_l"), msgpack.packb(_state("t_l", 1)))  # before hash tags
    await db.xadd(keys.legacy_state("t_l") + ":events", {"1": b"e"}, id="1-0")
    await db.sadd(keys.old_tables, "t_a", "t_b", "t_l", b"t_\xff")
    await db.hset(keys.old_quarantine, "t_q", "unreadable")
    stores = [RedisStore(redis_server.url, prefix="old") for _ in range(2)]
    try:
        moved = await asyncio.gather(*(s.migrate_keys() for s in stores))
        assert sum(moved) == 4 and await stores[0].migrate_keys() == 0
        store = stores[0]
        assert await db.keys("old:t:*") == [] and not await db.exists(keys.old_meta, keys.old_tables,
                                                                      keys.old_lobby, keys.old_quarantine)
        assert [k for k in await db.keys("old:*") if not k.startswith(b"old:{p")] == []  # nothing left behind
        assert await store.table_ids() == ["t_a", "t_b", "t_l"]
        assert set(await store.quarantined()) == {"t_q", "t_\\xff"}
        assert await store.raw_state("t_q") == b"\xc1"
        for t in ("t_a", "t_b"):
            assert await db.get(keys.logn(t)) == b"4" and await db.lrange(keys.log(t), 0, -1) == [b"step"]
            assert await store.hands(t) == [_hand(2)] and await db.get(keys.handseq(t)) == b"2"
            assert await db.get(keys.lease(t)) == f"n1|x|{len(t)}".encode() and 0 < await db.pttl(keys.lease(t))
            assert await db.get(keys.epoch(t)) == b"5" and await db.xlen(keys.events(t)) == 1
            assert await db.hget(keys.lobby(partition_of(t)), t) == b'{"id": "%s"}' % t.encode()
        assert (await store.state("t_l"))["seq"] == 1 and await db.xlen(keys.events("t_l")) == 1
    finally:
        await db.aclose()
        for s in stores:
            await s.close()


async def test_an_unreachable_redis_is_unavailable_not_an_error():
    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0", prefix="x", timeout=0.5)
    try:
        for call in (store.commit([_checkpoint("t_a", range(1, 2))]), store.load_tables(), store.probe(),
                     store.find_player("ab" * 32), store.events_since("t_a", 0, 1)):
            with pytest.raises(StoreUnavailable):
                await asyncio.wait_for(call, 5)
    finally:
        await store.close()


async def test_redis_url_password_is_never_shown():
    store = RedisStore("redis://:hunter2@127.0.0.1:1/0")
    assert "hunter2" not in str(store.describe())
    await store.close()


async def _put_state(store: Store, table: str, blob: bytes) -> None:
    if isinstance(store, MemoryStore):
        store.put_raw_state(table, blob)
    else:
        assert isinstance(store, RedisStore)
        await store.client.set(store.table_keys(table)[0], blob)


async def _evalsha_calls(db: aioredis.Redis) -> int:
    stats = await db.info("commandstats")
    return int(stats.get("cmdstat_evalsha", {}).get("calls", 0))
