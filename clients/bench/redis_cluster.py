"""The comparison of ``cardhall bench cluster --redis-cluster N``: one Redis against a Redis Cluster.

The cluster is a :class:`~.redis_cluster_procs.RedisCluster` (``N`` masters,
N >= 3, and with ``--redis-cluster-replicas 1`` one replica of each, on free
loopback ports under the bench's directory, nothing persisted); its
:meth:`~.redis_cluster_procs.RedisCluster.named_pids` names the processes
``redis-m1..mN`` (masters, in slot order) and ``redis-r1..`` (replicas, ``rK``
of ``mK``) for the CPU figures.

:func:`compare` runs the benchmark's load (the largest size of ``--nodes``,
every figure of :func:`~.cluster.measure`) on a private standalone Redis and
on the cluster in turn (``--rounds`` times), and with replicas once more on
the cluster with every node started with ``--redis-wait-replicas 1`` (each
commit waits for its master's replica: Redis ``WAIT``), when ``cardhall
serve`` has that option. Per run, :func:`shards`: each master's slots, the
tables whose partition it serves, its CPU seconds over the window and those
per 1,000 actions (the cost of one shard: how many actions, so how many
nodes, a shard carries). :func:`comparison`: per run, actions/s, Redis
CPU-seconds per 1,000 actions on the busiest shard and on all masters (and
the replicas'), node CPU-milliseconds per action, the spectators' latency
p50/p99, each with its ratio to one Redis in the same round (and with
``--rounds`` over 1, :func:`medians`), the CPU-seconds other processes used
meanwhile (noise), the masters' ``WAIT`` calls, and where the nodes, Redis
and the load ran (share of samples per CPU). :func:`report_lines` prints it
as a table.
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from cardhall.clients.bench.cluster_procs import Redis, Session
from cardhall.clients.bench.redis_cluster_procs import UP_WITHIN, RedisCluster, Shard

#: ``--cluster-node-timeout`` of the bench's cluster (ms)
NODE_TIMEOUT_MS = 5000
#: the round with ``--redis-wait-replicas``: its nodes' extra options
WAIT_ARGS = ("--redis-wait-replicas", "1")


def _slots(shard: Shard) -> str:
    """A master's slot ranges as text (``0-5460``)."""
    return ",".join(f"{a}-{b}" for a, b in shard.slots)


def calls(cluster: RedisCluster, command: str) -> int:
    """How many times the masters have run ``command`` (``INFO commandstats``, as redis-py parses it), e.g. ``wait``."""
    stats = [cluster.proc(m.port).client().info("commandstats") for m in cluster.masters()]
    return sum(int((x.get(f"cmdstat_{command}") or {}).get("calls", 0)) for x in stats)


def serve_has(flag: str) -> bool:
    """``cardhall serve`` takes option ``flag`` (this checkout's parser)."""
    import argparse

    from cardhall.clients.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return flag in sub.choices["serve"]._option_string_actions


def _tables_by_master(store: Any, tables: list[str]) -> dict[str, tuple[str, int]]:
    """Per master (``redis`` for one Redis): its slots and how many of ``tables`` it holds."""
    from cardhall.server.store.keys import partition_of, slot, tag

    if not isinstance(store, RedisCluster):
        return {"redis": ("0-16383", len(tables))}
    masters = store.named_masters()
    got = Counter(next(n for n, m in masters.items() if m.serves(slot(tag(partition_of(t))))) for t in tables)
    return {name: (_slots(m), got.get(name, 0)) for name, m in masters.items()}


def shards(run: dict[str, Any], store: Any, tables: list[str]) -> dict[str, Any]:
    """The shards of ``run`` (figures of :func:`~.cluster.measure`) on ``store``:
    per master (``redis`` for one Redis) its slots, tables and CPU seconds (and
    per 1,000 actions); the replicas' CPU seconds."""
    cpu = {p["name"]: p["cpu_s"] for p in run["processes"] if p["name"].startswith("redis")}
    thousands = run["actions"] / 1000 or None
    held = _tables_by_master(store, tables)
    out: dict[str, Any] = {"masters": {}, "replicas": {}}
    for name, (slots, tables_held) in held.items():
        out["masters"][name] = {"slots": slots, "tables": tables_held,
                                "cpu_s": cpu.get(name), "cpu_s_per_1000_actions": _per(cpu.get(name), thousands)}
    for name, value in cpu.items():
        if name.startswith("redis-r"):
            out["replicas"][name] = {"cpu_s": value, "cpu_s_per_1000_actions": _per(value, thousands)}
    return out


def _per(x: float | None, by: float | None, digits: int = 4) -> float | None:
    return None if x is None or not by else round(x / by, digits)


def where(run: dict[str, Any]) -> dict[str, dict[int, float]]:
    """Where the nodes, Redis and the load ran in ``run``: role -> CPU -> share of the samples.

    >>> where({"processes": [{"name": "b1", "cpus": {0: 3, 1: 1}}, {"name": "redis-m1", "cpus": {1: 2}},
    ...                      {"name": "load", "cpus": {}}, {"name": "bench", "cpus": {0: 9}}]})
    {'nodes': {0: 0.75, 1: 0.25}, 'redis': {1: 1.0}, 'load': {}}
    """
    roles: dict[str, Counter[int]] = {"nodes": Counter(), "redis": Counter(), "load": Counter()}
    for p in run["processes"]:
        role = "redis" if p["name"].startswith("redis") else "load" if p["name"] == "load" else \
            None if p["name"] == "bench" else "nodes"
        if role is not None:
            roles[role].update({int(k): v for k, v in p["cpus"].items()})
    return {role: {cpu: round(n / sum(c.values()), 2) for cpu, n in sorted(c.items())} for role, c in roles.items()}


#: the figures of a row of :func:`comparison` that have a ratio to one Redis, as the text table heads them
FIGURES = {"actions_per_s": "actions/s", "redis_busiest_shard": "Redis CPU-s/1,000 actions: busiest shard",
           "redis_all_masters": "all masters", "node_cpu_ms_per_action": "node CPU-ms/action", "p50_ms": "p50 ms",
           "p99_ms": "p99 ms"}


def comparison(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per run of :func:`compare` (module docstring): the :data:`FIGURES`,
    ``redis_per_shard`` (each master's CPU-s per 1,000 actions), ``redis_replicas``
    (all replicas'), ``others_cpu_s`` (the machine's CPU-s used by other processes
    in the window: noise), ``wait_calls`` (the masters' ``WAIT`` calls in the
    session, on the cluster: 0 unless its nodes wait for replicas), ``where`` (:func:`where`); ``ratio``: each figure over
    the run on one Redis of the same round (None when there is none).

    >>> run = {"round": 1, "store": "redis", "actions": 1000, "actions_per_s": 100.0, "p50_ms": 2.0, "p99_ms": 8.0,
    ...        "cpu": {"nodes_s": 5.0}, "processes": [], "redis_shards": {"masters": {"redis": {"cpu_s_per_1000_actions": 0.2}},
    ...        "replicas": {}}}
    >>> other = {**run, "store": "redis-cluster", "p99_ms": 12.0, "redis_shards": {"masters": {
    ...     "redis-m1": {"cpu_s_per_1000_actions": 0.1}, "redis-m2": {"cpu_s_per_1000_actions": 0.15}}, "replicas": {}}}
    >>> [r["ratio"] for r in comparison([run, other])][1]
    {'actions_per_s': 1.0, 'redis_busiest_shard': 0.75, 'redis_all_masters': 1.25, 'node_cpu_ms_per_action': 1.0, 'p50_ms': 1.0, 'p99_ms': 1.5}
    """
    rows = []
    for r in runs:
        masters = [m["cpu_s_per_1000_actions"] for m in r["redis_shards"]["masters"].values()]
        masters = [x for x in masters if x is not None]
        replicas = [x["cpu_s_per_1000_actions"] for x in r["redis_shards"]["replicas"].values()]
        rows.append({"round": r["round"], "store": r["store"], "nodes": r.get("nodes"), "actions_per_s": r["actions_per_s"],
                     "redis_busiest_shard": max(masters, default=None),
                     "redis_all_masters": round(sum(masters), 4) if masters else None,
                     "node_cpu_ms_per_action": _per(r["cpu"]["nodes_s"] * 1000, r["actions"], 3),
                     "p50_ms": r["p50_ms"], "p99_ms": r["p99_ms"], "redis_per_shard": masters,
                     "redis_replicas": round(sum(x for x in replicas if x is not None), 4) if replicas else None,
                     "others_cpu_s": r["cpu"].get("others_s"), "wait_calls": r.get("redis_wait_calls"), "where": where(r)})
    for row in rows:
        base = next((b for b in rows if b["round"] == row["round"] and b["store"] == "redis"), None)
        row["ratio"] = None if base is None else {k: _per(row[k], base[k], 2) for k in FIGURES}
    return rows


def medians(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per store, over the rounds of ``rows`` (:func:`comparison`): the median of
    each of the :data:`FIGURES`, ``redis_replicas`` and ``others_cpu_s``, and of each ratio (the
    lower median of an even count: a measured figure).

    >>> rows = [{"store": "redis-cluster", "actions_per_s": v, "ratio": {"actions_per_s": v / 100}} for v in (90, 120, 100)]
    >>> m = medians(rows)["redis-cluster"]
    >>> m["rounds"], m["actions_per_s"], m["ratio"]["actions_per_s"], m["p50_ms"]
    (3, 100, 1.0, None)
    """
    def median(values: list[Any]) -> Any:
        ordered = sorted(v for v in values if v is not None)
        return ordered[(len(ordered) - 1) // 2] if ordered else None

    out = {}
    for store in dict.fromkeys(r["store"] for r in rows):
        mine = [r for r in rows if r["store"] == store]
        out[store] = {"rounds": len(mine), **{k: median([r.get(k) for r in mine]) for k in [*FIGURES, "redis_replicas", "others_cpu_s"]},
                      "ratio": {k: median([(r["ratio"] or {}).get(k) for r in mine]) for k in FIGURES}}
    return out


def compare(args: Any, size: int, workdir: Path, open_session: Callable[..., AbstractContextManager[Session]],
            measure: Callable[[Session], dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The ``--redis-cluster`` runs (module docstring) of ``size`` nodes:
    ``open_session(store, size, node_args=...)`` starts the nodes and the load,
    ``measure(session)`` measures a window. Returns the runs (each with its
    ``store``, ``round`` and ``redis_shards``) and the comparison's summary; a
    store whose session fails is noted in ``failed`` and left out."""
    masters, replicas = args.redis_cluster, args.redis_cluster_replicas
    if masters < 3 or args.rounds < 1:
        raise SystemExit(f"bench cluster: --redis-cluster wants 3 masters or more (got {masters}) and --rounds 1 or more")
    if args.faults or not (args.skip_failover and args.skip_handover):
        print("bench cluster: --redis-cluster: no failover, handover or fault round (the comparison only)", file=sys.stderr)
    summary: dict[str, Any] = {"masters": masters, "replicas_per_master": replicas, "nodes": size,
                               "rounds": args.rounds, "failed": [], "skipped": []}
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        raise SystemExit("bench: redis-server and redis-cli are needed (apt-get install redis-server)")
    runs: list[dict[str, Any]] = []
    single = Redis(workdir)
    cluster: RedisCluster | None = None
    try:
        cluster = RedisCluster(masters, replicas, workdir=workdir, node_timeout=NODE_TIMEOUT_MS).start(UP_WITHIN)
        summary["cluster_up_s"] = round(cluster.start_seconds, 2)
        followers = cluster.replicas()
        summary["layout"] = {name: {"port": m.port, "slots": _slots(m),
                                    "replica_ports": sorted(r.port for r in followers if r.master_port == m.port)}
                             for name, m in cluster.named_masters().items()}
        stores: list[tuple[str, Any, tuple[str, ...]]] = [("redis", single, ()), ("redis-cluster", cluster, ())]
        if replicas and serve_has(WAIT_ARGS[0]):
            stores.append(("redis-cluster-wait", cluster, WAIT_ARGS))
        elif replicas:
            summary["skipped"].append(f"redis-cluster-wait: cardhall serve has no {WAIT_ARGS[0]}")
        for n in range(1, args.rounds + 1):
            for name, store, node_args in stores:
                print(f"bench cluster: round {n}: {size} node(s) on {name}", file=sys.stderr)
                try:
                    waits = calls(store, "wait") if isinstance(store, RedisCluster) else None
                    with open_session(store, size, node_args=node_args) as s:
                        run = measure(s)
                        tables = list(s.tables)
                    if waits is not None:  # the masters' WAIT calls in the session (0 without --redis-wait-replicas)
                        run["redis_wait_calls"] = calls(store, "wait") - waits
                except RuntimeError as exc:
                    summary["failed"].append({"round": n, "store": name, "error": str(exc)[-3000:]})
                    print(f"bench cluster: round {n} on {name} failed: {exc}", file=sys.stderr)
                    continue
                run.update(store=name, round=n, node_args=list(node_args), redis_shards=shards(run, store, tables))
                runs.append(run)
    finally:
        single.close()
        if cluster is not None:
            cluster.close()
    summary["comparison"] = comparison(runs)
    summary["medians"] = medians(summary["comparison"])
    return runs, summary


STORE_NAMES = {"redis": "one Redis", "redis-cluster": "Redis Cluster", "redis-cluster-wait": "Cluster + WAIT 1"}


def _x(value: Any, ratio: float | None) -> str:
    return f"{value} ({'-' if ratio is None else f'{ratio:.2f}'})"


def _cpus(shares: dict[int, float]) -> str:
    return " ".join(f"CPU{cpu} {share:.0%}" for cpu, share in shares.items()) or "not seen"


def _row(first: str, store: str, row: dict[str, Any]) -> str:
    ratio = row["ratio"] or {}
    figures = " ".join(f"{_x(row[k], ratio.get(k)):>{max(15, len(head))}}" for k, head in FIGURES.items())
    return (f"  {first:<6} {STORE_NAMES.get(store, store):<17} {figures} {row.get('redis_replicas') or '-'!s:>8} "
            f"{row['others_cpu_s']!s:>8}")


def report_lines(summary: dict[str, Any] | None) -> list[str]:
    """The comparison of :func:`compare` as text (nothing without ``--redis-cluster``)."""
    if summary is None:
        return []
    rep = f", 1 replica each (WAIT: {WAIT_ARGS[0]} 1)" if summary["replicas_per_master"] else ", no replica"
    heads = " ".join(f"{head:>{max(15, len(head))}}" for head in FIGURES.values())
    lines = [f"-- one Redis against a Redis Cluster of {summary['masters']} masters{rep}: {summary['nodes']} node(s), the "
             f"same load; (ratio to one Redis in the same round); others: CPU-s of other processes in the window",
             "  layout: " + ", ".join(f"{k} slots {v['slots']}" + (f" replica :{v['replica_ports'][0]}"
                                                                     if v["replica_ports"] else "")
                                      for k, v in summary.get("layout", {}).items()),
             f"  {'round':<6} {'store':<17} {heads} {'replicas':>8} {'others':>8}"]
    lines += [_row(str(row["round"]), row["store"], row) for row in summary["comparison"]]
    if summary["rounds"] > 1:
        lines += [_row("median", store, m) for store, m in summary["medians"].items()]
    lines.append("  per shard (Redis CPU-s per 1,000 actions) and where the processes ran (share of samples):")
    for row in summary["comparison"]:
        w = row["where"]
        lines.append(f"  {row['round']:<6} {STORE_NAMES.get(row['store'], row['store']):<17} shards "
                     f"{' / '.join(str(x) for x in row['redis_per_shard'])}; nodes on "
                     f"{_cpus(w['nodes'])}; Redis on {_cpus(w['redis'])}; load on {_cpus(w['load'])}"
                     + ("" if row.get("wait_calls") is None else f"; WAIT run {row['wait_calls']} times"))
    lines += [f"  skipped: {s}" for s in summary["skipped"]]
    lines += [f"  FAILED: round {f['round']} on {f['store']}: {f['error'].splitlines()[0] if f['error'] else ''}"
              for f in summary["failed"]]
    return lines
