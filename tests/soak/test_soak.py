"""The 10-minute soaks, behind ``--soak`` (never in CI).

A ``cardhall serve`` process of its own, in memory and then on a
``redis-server`` of its own, carries 2,000 websocket connections for
``CARDHALL_SOAK_SECONDS`` (default 600): 200 six-seat no-limit tables, two
seats of each played over the protocol by the load generator (its own
process, the random strategy, 0.2 s mean think time, like the server bots in
the other four seats), two spectators per table and 1,200 idle connections,
over 20 loopback source addresses. It passes with 0 errors, 0 ``seq`` gaps or
reorderings and every connection held to the end; it prints the load
generator's figures (``pytest --soak -s tests/soak``). docs/LOAD.md quotes them.
"""

from __future__ import annotations

import json
import os

import pytest

from cardhall.clients.bench.server import _serve, _stop
from cardhall.clients.load.probe import free_port, wait_port
from cardhall.clients.load.run import LoadSpec, run
from tests.conftest import require
from tests.server.conftest import REDIS_SERVER, RedisServer

SECONDS = float(os.environ.get("CARDHALL_SOAK_SECONDS", "600"))
pytestmark = [pytest.mark.soak, pytest.mark.timeout(SECONDS + 600)]  # the suite's 300 s limit is for tests


def soak(store_args: list[str]) -> dict:
    """One soak against a fresh server started with ``store_args``; its figures."""
    port = free_port()
    server = _serve(port, store_args)
    try:
        wait_port(port, server)
        spec = LoadSpec(url=f"ws://127.0.0.1:{port}/ws", tables=200, seats=6, players=2, spectators=2, idle=1200,
                        think=0.2, warmup=10.0, duration=SECONDS, addresses=20, server_pid=server.pid)
        out = run(spec)
        assert server.poll() is None, "the server died during the soak"
    finally:
        _stop(server)
    print(json.dumps(out, indent=1, sort_keys=True))
    return out


def check(out: dict) -> None:
    assert out["errors"] == {}, out["errors"]
    assert out["seq_gaps"] == 0 and out.get("seq_reorders", 0) == 0
    assert out["connections"] == out["connections_opened"] == 2000
    assert out["actions_per_s"] > 0 and out["events_per_s"] > 0


def test_soak_in_memory() -> None:
    check(soak([]))


def test_soak_with_redis() -> None:
    require(REDIS_SERVER is not None, "redis-server is not installed (set CARDHALL_REDIS_SERVER)")
    assert REDIS_SERVER is not None
    redis = RedisServer(REDIS_SERVER)
    redis.start()
    try:
        check(soak(["--redis", redis.url]))
    finally:
        redis.close()
