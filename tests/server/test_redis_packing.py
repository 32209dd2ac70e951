"""server/store/redis_packing.py: the Redis store's connections pack commands
with hiredis, byte for byte as redis-py's own Python packer would, and the
store works through them against a real redis-server."""

from __future__ import annotations

import os

import pytest
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import Connection
from redis.exceptions import DataError

from cardhall.server.store.base import Checkpoint
from cardhall.server.store.format import FORMAT_VERSION, pack_event
from cardhall.server.store.redis import RedisStore
from cardhall.server.store.redis_packing import hiredis_packed, use_hiredis_packing

pytestmark = pytest.mark.redis


def _python_packed(*args) -> bytes:
    return b"".join(Connection().pack_command(*args))


def _commit_like(tables: int) -> list:
    """The shape of a group commit's EVALSHA: 8 keys and 7 arguments per table."""
    args: list = ["EVALSHA", "0" * 40, 3 + 8 * tables, "P:meta", "P:tables", "P:lobby"]
    for t in range(tables):
        args += [f"cardhall:P:{{t{t}}}:{k}" for k in ("s", "e", "h", "hs", "l", "ep", "log", "logn")]
    args += ["c", 1024, 3000, "inbox:"]
    for t in range(tables):
        args += [f"t{t}", "", b"", os.urandom(50 + 40 * t), "n1 n2", bytearray(b"\x00\xff"), memoryview(b"info")]
    return args


@pytest.mark.parametrize("args", [
    _commit_like(1), _commit_like(80),
    ["SCRIPT LOAD", "return 1"], [b"CONFIG GET", b"maxmemory"],  # a first argument of two words
    ["SET", "é ü", 0.1, 1e-07, 1e20, -0.0, 2**64, -5, 3.0, b"\r\n"],
])
def test_the_bytes_are_redis_pys_own(args):
    assert b"".join(hiredis_packed(*args)) == _python_packed(*args)


def test_an_argument_redis_py_would_refuse_is_a_data_error():
    with pytest.raises(DataError):
        hiredis_packed("SET", "k", object())


async def test_a_cluster_client_packs_with_hiredis_on_every_node_it_knows_or_finds():
    client = RedisCluster(host="127.0.0.1", port=1)  # makes no connection yet
    try:
        assert use_hiredis_packing(client) and use_hiredis_packing(client)  # twice: the same class
        (node,) = client.startup_nodes
        assert node.connection_class.__name__ == "HiredisConnection"
        assert client.connection_kwargs["connection_class"] is node.connection_class  # nodes found later
        assert isinstance(node.acquire_connection(), Connection)
    finally:
        await client.aclose()


async def test_the_store_commits_and_reads_through_hiredis_packed_commands(redis_server):
    store = RedisStore(redis_server.url, prefix="packing-test")
    try:
        assert store.client.connection_pool.connection_class.__name__.startswith("Hiredis")
        assert await store.load_tables() == []
        events = [(seq, pack_event({"data": {"type": "chat", "text": "é ü " * 200, "n": seq}, "ts": 1.5}))
                  for seq in (1, 2, 3)]
        state = {"v": FORMAT_VERSION, "id": "t_1", "seq": 3, "status": "running", "note": "é" * 3000}
        await store.commit([Checkpoint("t_1", state, events)])
        (stored,) = await store.load_tables()
        assert stored.error is None and stored.data["note"] == "é" * 3000 and stored.data["seq"] == 3
        assert [seq for seq, _ in await store.events_since("t_1", 0, 3)] == [1, 2, 3]
        assert (await store.events_since("t_1", 2, 3))[0][1]["data"]["text"] == "é ü " * 200
    finally:
        await store.close()
