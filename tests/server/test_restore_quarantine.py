"""On Redis, one bad table never loops and never stops the service.

* A table whose state cannot be written once it runs again (its stored
  ``seq`` is the largest 64-bit number, so its next event's checkpoint cannot
  be encoded) breaks once after a restart and is quarantined then, in the store: a second
  restart does not restore it, and its quarantine note is the one written at
  the break; the healthy table beside it is served both times.
* A real ``cardhall serve --redis`` process, with a member of the tables set
  that is not UTF-8 and a finished table whose stored options lack
  ``auto_rematch``, starts, quarantines those two and serves the others.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import replace
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from cardhall.server.store.format import pack_state
from cardhall.server.store.keys import PARTITIONS, Keys
from cardhall.server.store.redis import RedisStore
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, RedisServer, free_port, running_server

pytestmark = pytest.mark.redis

BOTS = {"game": "no_limit_holdem", "seats": 2, "bots": 2, "options": {"pause": 0, "bot_think": 0.05}}
WAITING = {"game": "loco_poker", "seats": 3, "bots": 1}


async def _create(http: str, spec: dict[str, Any]) -> str:
    async with httpx.AsyncClient(base_url=http, timeout=5) as client:
        reply = await client.post("/api/tables", json=spec)
        assert reply.status_code == 201, reply.text
        return reply.json()["table"]


async def _rewrite_state(redis: RedisServer, prefix: str, table: str, change) -> None:
    store = RedisStore(redis.url, prefix)
    state = await store.state(table)
    assert state is not None
    change(state)
    db = aioredis.Redis.from_url(redis.url)
    await db.set(store.keys.state(table), pack_state(state))
    await db.aclose()
    await store.close()


async def _index(redis: RedisServer, prefix: str) -> tuple[set[bytes], dict[bytes, bytes]]:
    """Every partition's table index and quarantine, merged."""
    db = aioredis.Redis.from_url(redis.url)
    keys = Keys(prefix)
    members: set[bytes] = set()
    quarantine: dict[bytes, bytes] = {}
    for n in range(PARTITIONS):
        members |= await db.smembers(keys.tables(n))
        quarantine |= await db.hgetall(keys.quarantine(n))
    await db.aclose()
    return members, quarantine


async def test_a_table_that_breaks_after_its_restore_is_quarantined_once(redis_server):
    settings = replace(TEST_SETTINGS, redis_url=redis_server.url, redis_prefix="loop", operator_key="ops")
    async with running_server(settings) as srv:
        doomed = await _create(srv.http, BOTS)
        healthy = await _create(srv.http, WAITING)

    def past_64_bits(state: dict[str, Any]) -> None:
        state["seq"] = 2**64 - 1  # still stored; the next event's seq is not

    await _rewrite_state(redis_server, "loop", doomed, past_64_bits)

    async with running_server(settings) as srv:
        # the bots play on; their first event cannot be written
        await until(lambda: doomed not in srv.hall.tables or srv.hall.tables[doomed].machine.status == "broken",
                    60, "the doomed table breaking")
        assert srv.hall.tables[doomed].machine.status == "broken"

        async def quarantined() -> bool:
            return doomed.encode() in (await _index(redis_server, "loop"))[1]

        await until(quarantined, 30, "the doomed table in the quarantine")
        members, quarantine = await _index(redis_server, "loop")
        assert doomed.encode() in quarantine and doomed.encode() not in members
        note = quarantine[doomed.encode()]
        assert b"cannot be written" in note
        async with httpx.AsyncClient(base_url=srv.http, timeout=5) as http:
            health = (await http.get("/healthz")).json()
            lobby = {t["id"]: t["status"] for t in (await http.get("/api/tables")).json()}
        assert health["status"] == "ok" and health["broken_tables"] == 1
        assert lobby[doomed] == "broken" and lobby[healthy] == "waiting"

    async with running_server(settings) as srv:  # restarted again: not restored, set aside as it was
        # the recovery is over before the server serves (the app's start-up)
        assert srv.hall.recovery["tables"] == 1
        assert doomed not in srv.hall.tables and healthy in srv.hall.tables
        members, quarantine = await _index(redis_server, "loop")
        assert quarantine == {doomed.encode(): note} and doomed.encode() not in members


def _wait_healthy(port: int, proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, f"cardhall serve exited with {proc.returncode}"
        assert time.monotonic() < deadline, "cardhall serve did not answer /healthz"
        try:
            reply = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            if reply.status_code == 200:
                return reply.json()
        except httpx.HTTPError:
            pass
        time.sleep(0.05)


async def test_serve_starts_with_a_bad_index_member_and_a_table_missing_an_option(redis_server):
    settings = replace(TEST_SETTINGS, redis_url=redis_server.url, redis_prefix="bad")
    async with running_server(settings) as srv:
        finished = await _create(srv.http, WAITING)
        healthy = [await _create(srv.http, WAITING) for _ in range(2)]

    def finished_without_auto_rematch(state: dict[str, Any]) -> None:
        state["status"] = "finished"
        del state["table_options"]["auto_rematch"]

    await _rewrite_state(redis_server, "bad", finished, finished_without_auto_rematch)
    db = aioredis.Redis.from_url(redis_server.url)
    await db.sadd(Keys("bad").tables(7), b"t_\xff\xfe")  # in any partition's index
    await db.aclose()

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(port),
                             "--log-level", "warning", "--redis", redis_server.url, "--redis-prefix", "bad"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        health = _wait_healthy(port, proc)
        lobby = {t["id"] for t in httpx.get(f"http://127.0.0.1:{port}/api/tables", timeout=5).json()}
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=15)
    assert health["store"]["quarantined_tables"] == 2, (health, err.decode()[-3000:])
    assert lobby == set(healthy)
    members, quarantine = await _index(redis_server, "bad")
    assert members == {t.encode() for t in healthy}
    assert set(quarantine) == {finished.encode(), b"t_\\xff\\xfe"}
    assert b"auto_rematch" in quarantine[finished.encode()]
    assert b"quarantined" in err  # said in the log, by name
