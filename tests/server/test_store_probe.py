"""Redis losing its data while nothing saves (``server/STORAGE.md``, "Redis
trouble"), with real ``cardhall serve --redis`` processes and a real
``redis-server`` of the test's own.

The only table waits on a person's 120 s clock, so no table commits anything;
the Redis is emptied (``FLUSHALL``: what a restart without persistence does).
Leases are renewed rarely (``--lease-renew 60``, longer than any wait here), so
only the store probe can notice.

* The probe timer (``--store-probe``) notices within its interval, ``/healthz``
  counts the rewrite, and the tables and players held in memory are written
  back; after a ``kill -9`` and a restart the table, the seat and the player's
  token are back.
* A graceful stop (SIGTERM) right after the loss, before any probe, writes
  them back before the process exits; a restart gets them all.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import redis.asyncio as aioredis

from cardhall.clients.client import Client
from cardhall.server.store.keys import PARTITIONS, Keys
from tests.conftest import until
from tests.server.conftest import RedisServer, free_port

pytestmark = pytest.mark.redis

PREFIX = "probe"


class Node:
    """One ``cardhall serve --redis`` process (started again on the same port and node id)."""

    def __init__(self, redis: RedisServer, workdir: Path, probe: float) -> None:
        self.redis = redis
        self.port = free_port()
        self.http = f"http://127.0.0.1:{self.port}"
        self.ws = f"ws://127.0.0.1:{self.port}/ws"
        self.probe = probe
        self.log = open(workdir / "server.log", "ab")
        self.proc: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("CARDHALL_REDIS_URL", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(self.port),
             "--log-level", "warning", "--redis", self.redis.url, "--redis-prefix", PREFIX,
             "--node-id", "probe-node", "--lease-ttl", "180", "--lease-renew", "60",
             "--store-probe", str(self.probe)], env=env, stdout=self.log, stderr=self.log)
        proc = self.proc
        async with httpx.AsyncClient() as http:

            async def answers() -> bool:
                assert proc.poll() is None, "the server exited; see server.log"
                try:
                    return (await http.get(f"{self.http}/healthz")).status_code == 200
                except httpx.HTTPError:
                    return False

            await until(answers, 60, "the server answering /healthz")

    def stop(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)
        self.proc.wait(20)
        self.proc = None

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()


async def _waiting_table(node: Node) -> tuple[Client, str]:
    """Ann's heads-up table against a bot, waiting for her to act (120 s clock)."""
    ann = await Client(node.ws).connect()
    await ann.hello("ann")
    table = await ann.create_table("fixed_limit_holdem", seats=2, bots=1,
                                   options={"action_clock": 120, "time_bank": 0, "pause": 0, "bot_think": 0})
    snapshot = await ann.join(table, role="player", seat=1)
    frame = snapshot
    while not (frame.get("legal") and frame.get("turn", {}).get("seat") == 1):
        frame = await ann.next_event(table, timeout=30)
    return ann, table


async def _stored(db: aioredis.Redis, table: str) -> bool:
    """Redis holds every partition's marker and ``table``'s state (the players are checked by their token after a restart)."""
    keys = Keys(PREFIX)
    markers = await db.exists(*(keys.meta(n) for n in range(PARTITIONS)))
    return bool(markers == PARTITIONS and await db.exists(keys.state(table)))


async def _back(node: Node, ann: Client, table: str) -> None:
    """After a restart: the table recovered, Ann's token gives her player and her seat."""
    async with httpx.AsyncClient(base_url=node.http) as http:
        health = (await http.get("/healthz")).json()
        assert health["recovery"]["tables"] == 1, health
        assert (await http.get(f"/api/tables/{table}")).status_code == 200
    again = await Client(node.ws).connect()
    try:
        assert (await again.hello("ann", token=ann.token))["player"] == ann.player
        assert (await again.join(table, role="player"))["you"] == 1
    finally:
        await again.close()


@pytest.fixture
def node_parts(redis_server, tmp_path):
    nodes: list[Node] = []

    def make(probe: float) -> Node:
        nodes.append(Node(redis_server, tmp_path, probe))
        return nodes[-1]
    yield make
    for n in nodes:
        n.close()


async def test_lost_data_is_noticed_by_the_probe_and_survives_a_kill(redis_server, node_parts):
    node = node_parts(0.3)
    await node.start()
    db = aioredis.Redis.from_url(redis_server.url)
    try:
        ann, table = await _waiting_table(node)
        assert await _stored(db, table)
        await db.flushall()
        # the probe finds the marker gone and writes everything back (within 30 s: before any lease renewal)
        await until(lambda: _stored(db, table), 30, "the lost data noticed and written back")
        async with httpx.AsyncClient(base_url=node.http) as http:
            health = (await http.get("/healthz")).json()
            assert health["store"]["rewrites"] == 1 and health["store"]["up"] is True
            assert "cardhall_store_rewrites_total 1.0" in (await http.get("/metrics")).text
        await ann.close()
        node.stop(signal.SIGKILL)
        await node.start()
        await _back(node, ann, table)
    finally:
        await db.aclose()


async def test_a_graceful_stop_writes_lost_data_back_first(redis_server, node_parts):
    node = node_parts(600)  # no probe before the stop
    await node.start()
    db = aioredis.Redis.from_url(redis_server.url)
    try:
        ann, table = await _waiting_table(node)
        await ann.close()
        await db.flushall()
        node.stop(signal.SIGTERM)
        assert await _stored(db, table), "the stop did not write the lost data back"
        await node.start()
        await _back(node, ann, table)
    finally:
        await db.aclose()
