"""The service on Redis in normal operation: group
commit (the tables that acted in one loop iteration share one Redis script
call), the command line (``--redis`` and ``CARDHALL_REDIS_URL``), and what
``/healthz`` says about the store."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import replace

import httpx
import pytest
import redis.asyncio as aioredis

from tests.conftest import until
from tests.games import quick
from tests.server.conftest import TEST_SETTINGS, free_port, running_server

pytestmark = pytest.mark.redis


def _metric(text: str, name: str) -> float:
    return float(re.search(rf"^{name} ([0-9.e+-]+)$", text, re.M).group(1))  # type: ignore[union-attr]


async def test_tables_acting_together_share_one_commit(redis_server):
    settings = replace(TEST_SETTINGS, redis_url=redis_server.url, redis_prefix="gc")
    db = aioredis.Redis.from_url(redis_server.url)
    async with running_server(settings) as srv:
        owner = await srv.client("owner")
        for _ in range(20):
            await owner.create_table("loco_poker", seats=3, bots=3, options=quick(
                "loco_poker", pause=0, bot_think=0, auto_rematch=True))
        async with httpx.AsyncClient(base_url=srv.http) as http:

            async def played(enough: float) -> bool:
                return _metric((await http.get("/metrics")).text, "cardhall_actions_total") > enough

            await until(lambda: played(300), 60, "300 actions played")
            scripts = int((await db.info("commandstats"))["cmdstat_evalsha"]["calls"])
            metrics = (await http.get("/metrics")).text
            health = (await http.get("/healthz")).json()
        await owner.close()
    await db.aclose()
    commits = _metric(metrics, "cardhall_commit_tables_count")
    checkpoints = _metric(metrics, "cardhall_commit_tables_sum")
    actions = _metric(metrics, "cardhall_actions_total")
    print(f"{actions:.0f} actions, {checkpoints:.0f} checkpoints in {commits:.0f} commits, {scripts} scripts, "
          f"{_metric(metrics, 'cardhall_commit_seconds_sum') / commits * 1000:.2f} ms per commit")
    assert actions > 300
    assert checkpoints / commits > 3  # many tables per round trip
    assert scripts <= commits + 5  # one script call per group commit (plus the odd shutdown save)
    assert health["store"] | {"run_id": None} == {"kind": "redis", "url": redis_server.url, "prefix": "gc",
                                                  "cluster": False, "run_id": None, "up": True, "stalled_tables": 0,
                                                  "quarantined_tables": 0, "rewrites": 0}


def test_serve_takes_redis_from_the_environment(redis_server):
    port = free_port()
    env = {**os.environ, "CARDHALL_REDIS_URL": redis_server.url}
    proc = subprocess.Popen([sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(port),
                             "--log-level", "warning", "--redis-prefix", "envtest"], env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None and time.monotonic() < deadline
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).json()
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        assert health["store"]["kind"] == "redis" and health["store"]["prefix"] == "envtest"
        assert health["recovery"] == {"tables": 0, "quarantined": 0, "replayed": 0, "seconds": health["recovery"]["seconds"]}
    finally:
        proc.terminate()
        proc.wait(15)
