"""``cardhall bench cluster`` at a tiny size (the figures themselves are a
benchmark, deploy/README.md): it runs end to end, failover and handover
included, the fault round with ``--faults``, the rebalance round alone with
``--only rebalance``, and every figure is there and sane. Nothing here is timed."""

from __future__ import annotations

import doctest
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cardhall.clients.bench import cluster, cluster_faults, cluster_load, cluster_procs, cluster_rebalance, rebalance_figures
from cardhall.clients.bench.cluster import parse_sizes
from cardhall.clients.cli import build_parser
from tests.conftest import require

ARGS = ["--nodes", "1,2", "--tables", "4", "--spectators", "2", "--duration", "2", "--warmup", "1", "--lease-ttl", "1",
        "--skip-rebalance"]  # the rebalance round: its own test below


def test_a_tiny_cluster_benchmark_reports_every_figure():
    require(shutil.which("redis-server") is not None, "redis-server is not installed (apt-get install redis-server)")
    done = subprocess.run([sys.executable, "-m", "cardhall.clients.cli", "bench", "cluster", *ARGS, "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["machine"]["cpus"] >= 1 and out["lease_ttl_s"] == 1.0
    assert [r["nodes"] for r in out["runs"]] == [1, 2]
    for r in out["runs"]:
        assert r["seq_gaps"] == 0 and r["errors"] == {} and r["owner_changes"] == 0
        assert r["actions_per_s"] > 0 and r["events_per_s"] > 0 and r["connections"] == 8
        assert r["planned_connections"] == r["connected"] == 8 and r["connect_failures"] == 0
        assert 0 < r["p50_ms"] <= r["p95_ms"] <= r["p99_ms"] <= r["max_ms"]
        assert sum(r["tables_per_node"].values()) == 4 and len(r["tables_per_node"]) == r["nodes"]
        assert r["cpu"]["nodes_s"] >= 0 and r["cpu"]["redis_s"] >= 0 and "ratio_to_1" in r["cpu"]
        names = {p["name"] for p in r["processes"]}
        assert names == {*(f"b{i}" for i in range(1, r["nodes"] + 1)), "redis", "load", "bench"}
        assert all(isinstance(p["pid"], int) and p["affinity"] for p in r["processes"])
    one, two = out["runs"]
    assert one["cpu"]["ratio_to_1"] == 1.0
    assert one["hop"]["owner"]["connections"] == 8 and one["hop"]["other"]["connections"] == 0
    # two nodes, two spectators per table spread round-robin: one on the owner, one on the other node
    assert two["hop"]["owner"]["connections"] == two["hop"]["other"]["connections"] == 4
    assert "extra_p50_ms" in two["hop"] and "extra_p99_ms" in two["hop"]
    failover = out["failover"]
    assert failover["node"] in ("b1", "b2") and failover["tables"] >= 1 and failover["seq_gaps"] == 0
    assert failover["resumed"] == failover["observed"] == failover["tables"]
    assert failover["max_s"] > 0 and failover["lease_ttl_s"] == 1.0
    assert sum(failover["claimed_by"].values()) == failover["tables"] and failover["node"] not in failover["claimed_by"]
    handover = out["handover"]
    assert handover["exited"] and handover["seq_gaps"] == 0 and handover["tables"] >= 1
    assert handover["histogram"]["count"] == handover["tables"] and handover["histogram"]["p99_le_ms"] is not None
    assert handover["clients"]["resumed"] == handover["clients"]["observed"] == handover["tables"]
    assert handover["clients"]["longest_wait_max_ms"] > 0
    assert handover["connections"]["planned"] == handover["connections"]["connected"] == 8
    assert out["all_connected"] and out["shortfalls"] == [] and out["faults"] is None  # not without --faults
    assert out["rebalance"] is None


def _number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


@pytest.mark.slow
def test_the_fault_round_reports_its_figures():
    """``--faults`` at a tiny size (3 nodes, 3 tables, 1 player, lease TTL 1 s):
    a node, then Redis, stopped with SIGSTOP; every figure is there and is a
    number (their values are a benchmark's, not checked), in the JSON and the text."""
    require(shutil.which("redis-server") is not None, "redis-server is not installed (apt-get install redis-server)")
    args = ["--nodes", "3", "--tables", "3", "--spectators", "2", "--duration", "1", "--warmup", "0.5",
            "--lease-ttl", "1", "--skip-failover", "--skip-handover", "--skip-rebalance", "--faults", "--fault-players", "1"]
    done = subprocess.run([sys.executable, "-m", "cardhall.clients.cli", "bench", "cluster", *args, "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    f = out["faults"]
    assert f["nodes"] == 3 and f["tables"] == 3 and f["lease_ttl_s"] == 1.0
    assert f["players"]["planned"] == f["players"]["seated"] == 1
    assert f["connections"]["planned"] == f["connections"]["connected"] == 6
    assert f["node_stop"]["node"] in ("b1", "b2", "b3") and f["node_stop"]["players_hosted"] == 1
    assert f["node_stop"]["tables_owned"] >= 1
    base = f["baseline"]["silence"]
    assert base["connections"] == 7 and all(_number(base[k]) for k in ("p50_s", "p99_s", "max_s", "lag_max_s"))
    for fault in (f["node_stop"], f["redis_pause"]):
        assert fault["stopped_s"] >= 3.0 and fault["observed_s"] >= 2.0 and _number(fault["settled_s"])
        si, cl, sc = fault["silence"], fault["closed"], fault["shown_connected"]
        assert si["connections"] + cl["connections"] == 7  # 6 spectators and the player
        if si["connections"]:
            assert all(_number(si[k]) for k in ("p50_s", "p99_s", "max_s", "unheard"))
        assert all(_number(cl[k]) for k in ("connections", "reconnected")) and isinstance(cl["close_codes"], dict)
        assert sc["players"] == 1 and sc["deadline_s"] == 5.0
        assert all(_number(sc[k]) for k in ("stayed_open", "never", "shown_disconnected", "polls"))
        assert sc["polls"] > 0 and sc["stayed_open"] <= 1
        if sc["stayed_open"] > sc["never"]:
            assert _number(sc["p50_s"]) and _number(sc["max_s"])
        assert _number(fault["tables_first_event_after"]["tables"]) and _number(fault["seq_gaps"])
    text = cluster.report(out)
    assert "-- faults: a fresh 3-node cluster" in text and "SIGSTOP of b" in text and "Redis stopped" in text
    assert "no fault, the same figures" in text
    assert text.count("shown connected again") == 2 and text.count("silence (longest time") == 2


@pytest.mark.slow
def test_the_rebalance_round_alone_reports_its_figures():
    """``--only rebalance`` at a tiny size (2 nodes, 4 bot tables, 2 players,
    a hold of 1 s): only that round runs; a rolling restart of both nodes, every
    spectator closed once and resumed, the players' acknowledged actions all
    found in the stored history, no repeat, the tables even again at the end."""
    require(shutil.which("redis-server") is not None, "redis-server is not installed (apt-get install redis-server)")
    args = ["--nodes", "2", "--only", "rebalance", "--tables", "4", "--spectators", "2", "--warmup", "1",
            "--lease-ttl", "1", "--rebalance-hold", "1", "--rebalance-players", "2", "--rebalance-observe", "6"]
    done = subprocess.run([sys.executable, "-m", "cardhall.clients.cli", "bench", "cluster", *args, "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["runs"] == [] and out["failover"] is out["handover"] is out["faults"] is None
    r = out["rebalance"]
    assert r["nodes"] == 2 and r["tables"] == 4 and r["rebalance_hold_s"] == 1.0 and r["rebalance_rate"] is None
    assert [x["node"] for x in r["restarts"]] == ["b1", "b2"] and all(x["exited"] for x in r["restarts"])
    assert all(_number(x[k]) for x in r["restarts"] for k in ("exit_s", "ready_s", "listed_s"))
    c = r["connections"]
    assert c["planned"] == c["connected"] == c["closed"] == c["reconnected"] == c["held_at_end"] == 8 and c["lost"] == 0
    assert set(c["close_codes"]) <= {"1001", "4012", "none"}
    assert c["resumed"] + c["silent_over_5s"] == 8 and _number(r["clients"]["resumed_silence_max_ms"])
    assert r["seq_gaps"] == r["repeats"] == 0
    p = r["players"]
    assert p["planned"] == p["seated"] == p["tables_checked"] == 2 and p["acks"] > 0 and p["checked_acks"] == p["acks"]
    assert p["acks_lost"] == p["diverged"] == p["repeats"] == 0 and p["events"] > 0
    b = r["balance"]
    assert b["total_tables"] == 6 and b["even_share"] == 3.0 and sum(b["counts_at_end"].values()) == 6
    assert rebalance_figures.within(b["counts_at_end"], 2, 6, None), b  # even again at the end
    assert _number(b["within_one_s"]) and isinstance(b["target_met"], bool)
    assert r["moves"]["total"] >= 1 and r["pause"]["count"] >= 1 and r["handover"]["count"] >= 1
    assert _number(r["pause"]["mean_ms"]) and r["pause"]["p99_le_ms"] is not None
    assert r["timeline"] and _number(r["last_ready_s"]) and _number(r["observed_s"])
    text = cluster.report(out)
    assert "-- rebalance: a fresh 2-node cluster" in text and "pause per move" in text and "acknowledged actions" in text
    assert "work per CPU-second" not in text  # no measuring window


def test_every_spectator_connects_past_the_per_address_defaults():
    """30 spectators on one node, all from 127.0.0.1 and each a new player: past
    a node's default 20 new players per address (and near its 64 connections per
    address), so the bench must start its nodes without those limits; every one
    of them connects, and the figures say so."""
    require(shutil.which("redis-server") is not None, "redis-server is not installed (apt-get install redis-server)")
    args = ["--nodes", "1", "--tables", "5", "--spectators", "6", "--duration", "1", "--warmup", "0.5",
            "--skip-failover", "--skip-handover", "--json"]  # one node: no rebalance round
    done = subprocess.run([sys.executable, "-m", "cardhall.clients.cli", "bench", "cluster", *args],
                          capture_output=True, text=True, timeout=120)
    out = json.loads(done.stdout)
    (r,) = out["runs"]
    assert r["connections"] == 30, (r["errors"], done.stderr[-3000:])  # 20 before: the rest refused rate_limited
    assert r["planned_connections"] == r["connected"] == 30 and r["connect_failures"] == 0
    assert r["errors"] == {} and r["hop"]["owner"]["connections"] == r["hop"]["owner"]["planned"] == 30
    assert out["all_connected"] and out["shortfalls"] == [] and done.returncode == 0, done.stderr[-3000:]
    assert "30 of 30 spectators connected" in done.stderr


def test_the_nodes_run_without_the_per_address_limits(capsys):
    from cardhall.clients.bench.cluster_procs import LOAD_LIMITS, Cluster

    class FakeRedis:
        url = "redis://127.0.0.1:1/0"

    c = Cluster(FakeRedis(), 2, Path("/nonexistent"), connections=400)  # not started
    for n in c.nodes:
        flags = dict(zip(n.argv, n.argv[1:]))
        for flag in ("--max-connections-per-ip", "--new-players-per-address", "--max-tables-per-address",
                     "--bot-think-floor"):
            assert flags[flag] == "0" and flag in LOAD_LIMITS
        assert "--max-connections" not in flags  # 400 fit the default 10000
    big = Cluster(FakeRedis(), 1, Path("/nonexistent"), connections=20_000)
    assert dict(zip(big.nodes[0].argv, big.nodes[0].argv[1:]))["--max-connections"] == "21000"
    assert "--new-players-per-address 0" in capsys.readouterr().err


def test_a_shortfall_of_spectators_is_reported_and_fails(monkeypatch, capsys):
    short = {"runs": [{"nodes": 2, "planned_connections": 400, "connected": 40, "connections": 40,
                       "connect_failure_kinds": {"rate_limited": 360}}], "handover": None}
    monkeypatch.setattr(cluster, "run", lambda args: {**short, "shortfalls": cluster.shortfalls(short)})
    monkeypatch.setattr(cluster, "report", lambda out: "the figures")
    assert cluster.main(build_parser().parse_args(["bench", "cluster"])) == 1
    err = capsys.readouterr().err
    assert "WARNING" in err and "40 of 400 spectators connected" in err and "rate_limited" in err


def test_the_command_line():
    args = build_parser().parse_args(["bench", "cluster", "--nodes", "2,3", "--skip-failover", "--json"])
    assert args.func.__module__ == "cardhall.clients.bench.cluster"
    assert args.skip_failover and not args.skip_handover and args.json and args.lease_ttl == 3.0
    assert not args.faults and args.fault_players == 12  # the fault round is asked for with --faults
    assert not args.skip_rebalance and args.only is None and args.rebalance_players == 6  # the rebalance round: on
    assert args.rebalance_rate is args.rebalance_hold is None  # the server's defaults
    only = build_parser().parse_args(["bench", "cluster", "--only", "rebalance", "--rebalance-hold", "2"])
    assert cluster.parse_only(only.only) == {"rebalance"} and only.rebalance_hold == 2.0
    assert cluster_rebalance.node_args(only) == ("--redis-stream-bound", "100000", "--rebalance-hold", "2.0")
    with pytest.raises(SystemExit):
        cluster.parse_only("rebalance,failover")  # failover runs in a measured session: not a round of its own
    assert parse_sizes(args.nodes) == [2, 3]
    with pytest.raises(SystemExit):
        parse_sizes("0,x")
    assert doctest.testmod(cluster).failed == 0
    assert doctest.testmod(cluster_load).failed == doctest.testmod(cluster_procs).failed == 0
    assert doctest.testmod(cluster_faults).failed == doctest.testmod(cluster_rebalance).failed == 0


def test_the_rebalance_figures_across_restarts():
    """What the round computes from its records, without a cluster: counters and
    histograms summed over processes (a restarted node's start again at 0), the
    time to balance from the polls, tables changing node, acknowledged actions
    against a stored history, and a shortfall of its connections."""
    def scrape(moves: int, le10: int, le100: int, total: float) -> str:
        return (f"cardhall_rebalance_moves_total {moves}.0\n"
                f'cardhall_rebalance_pause_seconds_bucket{{le="0.01"}} {le10}.0\n'
                f'cardhall_rebalance_pause_seconds_bucket{{le="0.1"}} {le100}.0\n'
                f'cardhall_rebalance_pause_seconds_bucket{{le="+Inf"}} {le100}.0\n'
                f"cardhall_rebalance_pause_seconds_count {le100}.0\ncardhall_rebalance_pause_seconds_sum {total}\n")
    # b1 before its SIGTERM (5 moves and 4 pauses so far, 2 of them before the round), then restarted: from 0
    segments = [(scrape(2, 1, 2, 0.01), scrape(5, 2, 4, 0.1)), ("", scrape(3, 10, 10, 0.05))]
    assert rebalance_figures.increase(segments, rebalance_figures.MOVES) == 6
    pause = rebalance_figures.histogram_increase(segments, rebalance_figures.PAUSE)
    assert pause == {"count": 12, "mean_ms": 11.67, "p50_le_ms": 10.0, "p99_le_ms": 100.0}
    timeline = [(100.0, {"b1": 104, "b2": 102}), (101.0, {"b1": 104, "b2": 102, "b3": 0}),
                (130.0, {"b1": 75, "b2": 70, "b3": 61}), (131.0, {"b1": 70, "b2": 69, "b3": 67}),
                (140.0, {"b1": 69, "b2": 69, "b3": 68})]
    assert rebalance_figures.balance_times(timeline, 3, 206, 101.0) == (30.0, 30.0)
    assert rebalance_figures.balance_times(timeline, 3, 206, 101.0, None) == (39.0, 39.0)
    assert rebalance_figures.balance_times(timeline[:3], 3, 206, 101.0) == (None, None)  # b3 at 61: 11 % under
    moved = rebalance_figures.owner_changes([(0.0, {"b1": {"t1", "t2"}}), (1.0, {"b1": {"t2"}, "b3": {"t1"}}),
                                             (2.0, {"b1": {"t2"}, "b3": {"t1"}})])
    assert moved == [(1.0, "t1", "b1", "b3")]
    assert rebalance_figures.check_history([(10, 12)], {11: 5.0, 12: 5.1}, {11: 5.0, 12: 5.1})["lost"] == 0
    assert rebalance_figures.check_history([(10, 12)], {11: 5.0, 12: 5.1}, {11: 5.0})["lost"] == 1  # 12 not stored
    assert rebalance_figures.check_history([(10, 10)], {10: 4.0}, {10: 4.0})["lost"] == 1  # no event before the ok
    short = {"runs": [], "handover": None, "rebalance": {
        "connections": {"planned": 400, "connected": 390, "failure_kinds": {"TimeoutError": 10}},
        "players": {"planned": 6, "seated": 6, "failures": []}}}
    assert cluster.shortfalls(short) == ["rebalance: 390 of 400 spectators connected ({'TimeoutError': 10}), "
                                         "6 of 6 players seated"]
