"""``cardhall loadtest`` against a real server (a short run; the measurements
themselves are benchmarks, docs/LOAD.md): its figures, with its documented JSON keys,
connections spread over loopback addresses past a per-address limit,
players that play through the protocol, no errors and no ``seq`` gaps, and
no table of its own left open (without an operator key: closed by their owner)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest

from cardhall.clients.cli import build_parser
from cardhall.clients.client import fetch_json
from cardhall.clients.commands.loadtest import report
from cardhall.clients.load.run import KEYS, LoadSpec, run
from tests.conftest import until
from tests.fuzz.conftest import ServerThread
from tests.server.conftest import TEST_SETTINGS


@pytest.fixture(scope="module")
def server():
    srv = ServerThread(replace(TEST_SETTINGS, max_connections_per_ip=4, rate=1e6, burst=1e6)).start()
    yield srv
    srv.stop()


async def test_a_short_load_test_plays_measures_and_spreads_its_addresses(server):
    spec = LoadSpec(url=server.live.url, tables=4, seats=3, players=2, spectators=2, think=0.0, warmup=1.0,
                    duration=2.0, workers=2, addresses=5)
    running = asyncio.ensure_future(asyncio.to_thread(run, spec))

    def played() -> bool:  # every load player's table plays: seats 1 and 2 are the load's, acting through the protocol
        seqs = server.call(lambda live: {t.id: t.machine.seq for t in live.hall.tables.values()})
        assert not running.done(), f"the run ended before every table played: {seqs}"
        return len(seqs) == 4 and all(seq > 10 for seq in seqs.values())

    await until(played, 120, "every table of the load played")
    out = await running
    assert set(KEYS) <= set(out)
    json.dumps(out)
    assert out["connections"] == out["connections_opened"] == 16  # 4 per address allowed: needs the spread
    assert out["errors"] == {} and out["seq_gaps"] == 0
    assert out["actions_per_s"] > 0 and out["player_acts_per_s"] > 0 and out["events_per_s"] > 0
    assert 0 < out["p50_ms"] <= out["p95_ms"] <= out["p99_ms"] <= out["max_ms"]
    assert out["server_rss_bytes"] > 10 * 2**20
    text = report(out)
    assert "connections held   16 of 16" in text and "seq gaps           0" in text
    # no operator key: each table was closed by its owner (the load's watcher) when the run ended
    assert out["tables_closed"] == 4 and server.call(lambda live: dict(live.hall.tables)) == {}
    assert fetch_json(server.live.http + "/api/tables") == []


def test_idle_connections_figure_and_the_command_line(server):
    spec = LoadSpec(url=server.live.url, tables=0, idle=20, warmup=0.2, duration=0.5, addresses=6)
    out = run(spec)
    assert out["connections"] == 20 and out["errors"] == {}
    assert "idle_bytes_per_connection" in out
    args = build_parser().parse_args(["loadtest", "--server", server.live.url, "--tables", "0", "--idle", "5",
                                      "--json", "--source-addresses", "2"])
    assert args.func.__module__ == "cardhall.clients.commands.loadtest" and args.idle == 5 and args.json
