"""``cardhall bench cluster --redis-cluster 3`` at a tiny size: the same load on
one Redis, on a Redis Cluster of 3 masters with a replica each, and on it with
the nodes waiting for a replica; every figure of the comparison is there (the
figures themselves are a benchmark's, deploy/README.md). Nothing here is timed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from cardhall.clients.bench import cluster, redis_cluster
from cardhall.clients.cli import build_parser
from tests.conftest import require

ARGS = ["--redis-cluster", "3", "--nodes", "2", "--tables", "4", "--spectators", "2",
        "--duration", "1", "--warmup", "0.5", "--lease-ttl", "1", "--json"]


# with replicas (and the round waiting for one per commit) behind --runslow: the replicas' first sync
# makes the cluster slower to start
@pytest.mark.parametrize("replicas", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_one_redis_against_a_redis_cluster(replicas: int):
    require(shutil.which("redis-server") is not None and shutil.which("redis-cli") is not None,
            "redis-server and redis-cli are not installed (apt-get install redis-server)")
    done = subprocess.run([sys.executable, "-m", "cardhall.clients.cli", "bench", "cluster", *ARGS,
                           "--redis-cluster-replicas", str(replicas)], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    summary = out["redis_cluster"]
    assert summary["masters"] == 3 and summary["replicas_per_master"] == replicas and summary["nodes"] == 2
    assert summary["failed"] == [] and sorted(summary["layout"]) == ["redis-m1", "redis-m2", "redis-m3"]
    wait = replicas > 0
    stores = ["redis", "redis-cluster"] + (["redis-cluster-wait"] if wait else [])
    assert [r["store"] for r in out["runs"]] == stores and out["failover"] is out["handover"] is None
    for r in out["runs"]:
        assert r["seq_gaps"] == 0 and r["errors"] == {} and r["connections"] == 8 and r["actions"] > 0
        masters = r["redis_shards"]["masters"]
        assert sum(m["tables"] for m in masters.values()) == 4
        names = {p["name"] for p in r["processes"]}
        assert set(masters) <= names and all(m["cpu_s_per_1000_actions"] is not None for m in masters.values())
        if r["store"] == "redis":
            assert list(masters) == ["redis"] and "redis_wait_calls" not in r
        else:
            assert list(masters) == ["redis-m1", "redis-m2", "redis-m3"]
            assert len(r["redis_shards"]["replicas"]) == 3 * replicas
            assert (r["redis_wait_calls"] > 0) == (r["store"] == "redis-cluster-wait")
    rows = summary["comparison"]
    assert [row["store"] for row in rows] == stores and rows[0]["ratio"]["actions_per_s"] == 1.0
    assert all(set(row["ratio"]) == set(redis_cluster.FIGURES) for row in rows)
    assert set(summary["medians"]) == set(stores)
    text = cluster.report(out)
    assert "-- one Redis against a Redis Cluster of 3 masters" in text and "busiest shard" in text


def test_the_command_line():
    args = build_parser().parse_args(["bench", "cluster", "--redis-cluster", "3"])
    assert args.redis_cluster == 3 and args.redis_cluster_replicas == 0 and args.rounds == 1
