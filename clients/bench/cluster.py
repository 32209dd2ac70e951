"""``cardhall bench cluster``: a cluster of ``cardhall serve --redis`` nodes under load (a benchmark, not a test).

For each size of ``--nodes`` (default 1, 2, 3) the benchmark starts that many
nodes ``b1..bN`` (``--placement least_loaded``, a fresh key prefix) on one
private ``redis-server`` it starts itself (a free port, nothing persisted,
shut down at the end; :mod:`.cluster_procs`), creates ``--tables`` tables of
6 server bots (think ``--think`` s: a fixed offered load of ~5 actions/s per
table, the same for every N), and a load process (:mod:`.cluster_load`) opens
``--spectators`` spectators per table, spread over the nodes round-robin (with
N > 1 most of them watch a table owned by another node, whose events cross
Redis: the "cross-node hop"). After ``--warmup`` s it measures ``--duration`` s:

* ``actions_per_s`` (the nodes' ``cardhall_actions_total``), ``events_per_s``
  (delivered to the spectators), ``p50_ms``/``p95_ms``/``p99_ms`` action-to-event
  latency (arrival minus the event's ``ts``, same host clock), ``seq_gaps`` (must
  be 0), ``errors`` (code -> count);
* ``hop``: the same latency for spectators connected to the table's owner and
  for those connected to another node (owners from ``/api/cluster``), and the
  difference (ms);
* ``cpu``: CPU seconds (user + system, ``/proc/<pid>/stat``) of the nodes, of
  Redis and of the load over the window, ``actions_per_node_cpu_s`` and its
  ``ratio`` to N=1 (work per CPU-second: the machine has few cores, so at a fixed
  offered load throughput cannot scale, but the cost of each action can be
  compared; target: N=2 keeps >= 0.8);
* ``processes``: pid, the CPUs each process was seen on (samples of field 39
  every 0.1 s) and its affinity; ``machine``: the core count; ``cpu.others_s``:
  CPU seconds the rest of the machine used meanwhile (other jobs: noise);
* ``server_p99_le_ms``: each node's own ``cardhall_action_latency_seconds`` and
  ``cardhall_commit_seconds`` p99 (bucket bounds);
* ``planned_connections`` (``--tables`` x ``--spectators``), ``connected`` (those
  that joined their table), ``connections`` (those still held when the window
  ended), ``connect_failures`` and ``connect_failure_kinds`` (error code ->
  count, e.g. ``rate_limited``).

Every spectator connects from 127.0.0.1 and says ``hello`` without a token, so
the nodes run with their per-address limits off (``--max-connections-per-ip 0
--new-players-per-address 0 --max-tables-per-address 0``) and ``--bot-think-floor
0`` (:data:`.cluster_procs.LOAD_LIMITS`): with the defaults a node refuses all
but 20 new players per address a minute. Should fewer spectators connect than
planned all the same, the benchmark says so at once on stderr, ends its report
with a WARNING (``shortfalls`` in ``--json``, ``all_connected`` false) and exits
with status 1.

Tables are created one per node in turn, every node's view of the others'
table counts refreshed before each round (:meth:`.cluster_procs.Cluster.create_tables`):
``least_loaded`` reads heartbeats up to two ``lease_renew`` old and would put a
burst of new tables on one node.

Then, on the largest N (N >= 2), ``failover``: the node owning the most tables
is killed with SIGKILL; per table, the time from the kill to the first event
after it (``ts`` later than the kill) reaching a spectator on a surviving node
(p50/max, seconds; the lease TTL is ``--lease-ttl``: a lease expires between
TTL - lease_renew and TTL after the kill, the survivors scan every lease_renew/2
or so, each claiming its share per scan). And ``handover``, on a
fresh cluster of that size: the node owning the most tables gets SIGTERM; the
receiving nodes' ``cardhall_handover_seconds`` (count, mean, p99 as a bucket
bound; target p99 < 500 ms) and the clients' view: per handed-over table the
longest wait between two consecutive events (next to the same for the other
tables). With ``--faults``, on one more fresh cluster of that size (off by
default: it adds about a minute), a node and then Redis are stopped with
SIGSTOP for a lease TTL + 2 s each, under load with players at tables other
nodes own: the silence after each fault and the time until a player is shown
connected again (:mod:`.cluster_faults`). Last, ``rebalance``, on one more
fresh cluster of that size (``--skip-rebalance`` leaves it out; about two
minutes at the defaults): a rolling restart of every node under load (SIGTERM,
started again with its id, ready), then how long until every node holds
within 10 % of an even share of the tables again, the rebalancing moves and
their pause, the connections closed and resumed, and whether an action the
server acknowledged to a player of the bench is missing from its table's
stored history (:mod:`.cluster_rebalance`; ``--rebalance-rate``,
``--rebalance-hold``: the nodes' options there). ``--only ROUND[,ROUND]``
(``handover``, ``rebalance``, ``faults``) runs only those rounds, each on a
fresh cluster of the largest size of ``--nodes``, without the measuring
windows and failover: ``cardhall bench cluster --nodes 3 --only rebalance``
is the rebalance round alone. ``--json`` prints one JSON object;
``--logs DIR`` keeps the nodes' logs.

``cardhall bench cluster --redis-cluster 3`` measures instead the same load
(the largest size of ``--nodes``, no failover, handover or faults) on one
private Redis and on a private Redis Cluster of 3 masters (``--redis-cluster-replicas
1``: one replica each, and one more run with every node started with
``--redis-wait-replicas 1``), ``--rounds`` times in turn (default once: about a
minute and a half at the defaults); per run ``store``, ``round`` and ``redis_shards``
(each master's slots, tables and CPU seconds), and a comparison (``redis_cluster``
in ``--json``): actions/s, Redis CPU-seconds per 1,000 actions per shard,
node CPU-ms per action, latency p50/p99, each with its ratio to one Redis of
the same round, and where the processes ran (:mod:`.redis_cluster`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from cardhall.clients.bench import cluster_faults, cluster_rebalance, rebalance_figures, redis_cluster
from cardhall.clients.bench.cluster_procs import Placement, Redis, Session, affinity, cpu_seconds, machine_busy_seconds, session
from cardhall.clients.bench.cluster_report import report
from cardhall.clients.bench.server import pick_game
from cardhall.clients.load.histogram import LatencyHistogram
from cardhall.clients.load.probe import histogram_quantile, labelled, metric

SEATS = 6  # bots per table, as ``bench server``
#: the rounds ``--only`` may name (each on a fresh cluster of its own)
ROUNDS = ("handover", "rebalance", "faults")


def register(subparsers: Any) -> None:
    """Add ``bench cluster``."""
    p = subparsers.add_parser("cluster", help="a cluster of nodes on one Redis: throughput, cross-node hop, "
                                             "work per CPU-second, failover, handover, rebalancing after a rolling "
                                             "restart; or one Redis against a "
                                             "Redis Cluster (--redis-cluster N)")
    p.add_argument("--nodes", default="1,2,3", help="cluster sizes measured, comma-separated (default 1,2,3)")
    p.add_argument("--tables", type=int, default=200, help="bot tables (default 200)")
    p.add_argument("--spectators", type=int, default=2, help="websocket spectators per table (default 2)")
    p.add_argument("--think", type=float, default=0.2, help="bots' think time, seconds (default 0.2: ~5 actions/s per table)")
    p.add_argument("--game", default=None, help="game (default no_limit_holdem)")
    p.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring (default 3)")
    p.add_argument("--duration", type=float, default=10.0, help="seconds measured per cluster size (default 10)")
    p.add_argument("--lease-ttl", type=float, default=3.0, help="the nodes' --lease-ttl, seconds (default 3)")
    p.add_argument("--skip-failover", action="store_true", help="do not kill a node")
    p.add_argument("--skip-handover", action="store_true", help="do not SIGTERM a node")
    p.add_argument("--faults", action="store_true", help="also the fault round on a fresh cluster of the largest size "
                   "(>= 2): SIGSTOP of a node, then of Redis, lease TTL + 2 s each (adds about a minute)")
    p.add_argument("--fault-players", type=int, default=12, help="tables with a seat played by the bench, for --faults "
                   "(default 12)")
    cluster_rebalance.register_args(p)
    p.add_argument("--only", default=None, metavar="ROUND[,ROUND]", help="run only these rounds, each on a fresh cluster "
                   f"of the largest size of --nodes (no measuring windows, no failover): {', '.join(ROUNDS)}")
    p.add_argument("--redis-cluster", type=int, default=0, metavar="N", help="compare one Redis with a Redis Cluster "
                   "of N masters (3 or more) it starts, at the largest size of --nodes (no failover, handover, faults or "
                   "rebalance)")
    p.add_argument("--redis-cluster-replicas", type=int, default=0, choices=(0, 1), help="with --redis-cluster: one "
                   "replica per master, and a run more with nodes started with --redis-wait-replicas 1 (default 0)")
    p.add_argument("--rounds", type=int, default=1, help="with --redis-cluster: runs on each store, in turn (default 1)")
    p.add_argument("--logs", metavar="DIR", default=None, help="keep the node and Redis logs in DIR (default: removed)")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    p.set_defaults(func=main)


def parse_sizes(text: str) -> list[int]:
    """``"1,2,3"`` -> ``[1, 2, 3]`` (SystemExit on anything else).

    >>> parse_sizes("3, 1")
    [3, 1]
    """
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise SystemExit(f"bench cluster: --nodes wants sizes such as 1,2,3 (got {text!r})")
    return sizes


def parse_only(text: str | None) -> set[str]:
    """``--only``'s rounds (empty: every round as the other options say; SystemExit on an unknown one).

    >>> sorted(parse_only("rebalance, handover")), parse_only(None)
    (['handover', 'rebalance'], set())
    """
    rounds = {part.strip() for part in (text or "").split(",") if part.strip()}
    if text is not None and (not rounds or rounds - set(ROUNDS)):
        raise SystemExit(f"bench cluster: --only names rounds among {', '.join(ROUNDS)} (got {text!r})")
    return rounds


def quantile(values: list[float], q: float) -> float | None:
    """The nearest-rank quantile ``q`` of ``values`` (None when empty).

    >>> quantile([3.0, 1.0, 2.0], 0.5), quantile([], 0.5)
    (2.0, None)
    """
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 2)


def table_body(args: argparse.Namespace) -> dict[str, Any]:
    """The ``POST /api/tables`` body of this run's bot tables."""
    options = {"pause": 0, "bot_think": args.think, "close_after": 3600, "auto_rematch": True}
    return {"game": pick_game(args.game), "seats": SEATS, "bots": ["random"] * SEATS, "options": options}


def open_session(args: argparse.Namespace, redis: Redis, size: int, workdir: Path,
                 **more: Any) -> contextlib.AbstractContextManager[Session]:
    """:func:`~.cluster_procs.session` of ``size`` nodes with this run's tables and spectators."""
    return session(redis, size, workdir, args.lease_ttl, args.tables, table_body(args), args.spectators, **more)


def _gaps(figures: dict[str, Any] | None) -> int:
    """``seq`` gaps plus reorderings in a load reply (both spectator groups)."""
    return sum(g["gaps"] + g["reorders"] for k, g in (figures or {}).items() if k in ("owner", "other"))


def _errors(*dicts: dict[str, int]) -> dict[str, int]:
    out: Counter[str] = Counter()
    for d in dicts:
        out.update({k: v for k, v in d.items() if v})
    return dict(out)


def measure(args: argparse.Namespace, s: Session) -> dict[str, Any]:
    """The figures of one measuring window on ``s`` (see the module docstring)."""
    c = s.cluster
    stores = c.redis.named_pids()  # one Redis: "redis"; a Redis Cluster: its masters and replicas
    pids = {**{n.id: n.pid for n in c.nodes}, **stores, "load": s.load.pid, "bench": os.getpid()}
    start = time.time() + args.warmup
    end = start + args.duration
    s.load.send("window", start, end)
    time.sleep(max(0.0, start - time.time()))
    cpu0 = {k: cpu_seconds(p) or 0.0 for k, p in pids.items()}
    busy0 = machine_busy_seconds()
    m0 = c.scrape()
    with Placement(list(pids.values())) as where:
        time.sleep(max(0.0, end - time.time()))
    cpu1 = {k: cpu_seconds(p) or 0.0 for k, p in pids.items()}
    busy = machine_busy_seconds() - busy0
    m1 = c.scrape()
    got = s.load.receive("window", 60 + args.duration)
    window = got["window_s"]
    cpu = {k: round(cpu1[k] - cpu0[k], 3) for k in pids}
    actions = sum(metric(m1[n], "cardhall_actions_total") - metric(m0[n], "cardhall_actions_total") for n in m1)
    node_s, redis_s = sum(cpu[n.id] for n in c.nodes), round(sum(cpu[k] for k in stores), 3)
    groups = {g: got[g] for g in ("owner", "other")}
    hist = LatencyHistogram()
    for g in groups.values():
        hist.merge(g["latency"])
    server_errors: dict[str, int] = {}
    for n in m1:
        e0, e1 = labelled(m0[n], "cardhall_errors_total", "code"), labelled(m1[n], "cardhall_errors_total", "code")
        server_errors = _errors(server_errors, {k: int(v - e0.get(k, 0.0)) for k, v in e1.items()})
    lost = sum(g["lost"] for g in groups.values())
    hop = {g: {"connections": v["connections"], "planned": v["planned"], "events": v["events"],
               "p50_ms": _ms(v["latency"].quantile(0.5)), "p99_ms": _ms(v["latency"].quantile(0.99))}
           if v["latency"].count else {"connections": v["connections"], "planned": v["planned"]}
           for g, v in groups.items()}
    if "p50_ms" in hop["owner"] and "p50_ms" in hop["other"]:
        hop["extra_p50_ms"] = round(hop["other"]["p50_ms"] - hop["owner"]["p50_ms"], 2)
        hop["extra_p99_ms"] = round(hop["other"]["p99_ms"] - hop["owner"]["p99_ms"], 2)
    after = c.owners()
    return {
        "nodes": len(c.nodes), "tables_per_node": dict(sorted(Counter(s.owners.values()).items())),
        "owner_changes": sum(1 for t, o in s.owners.items() if after.get(t) not in (o, None)),
        "planned_connections": s.load.ready["planned"], "connected": s.load.ready["connections"],
        "connections": sum(g["connections"] for g in groups.values()), "connect_failures": s.load.ready["failed"],
        "connect_failure_kinds": s.load.ready.get("failure_kinds", {}),
        "duration_s": round(window, 2), "actions": int(actions), "actions_per_s": round(actions / window, 1),
        "events_per_s": round(sum(g["events"] for g in groups.values()) / window, 1),
        "p50_ms": _ms(hist.quantile(0.5)), "p95_ms": _ms(hist.quantile(0.95)), "p99_ms": _ms(hist.quantile(0.99)),
        "max_ms": _ms(hist.quantile(1.0)), "seq_gaps": _gaps(got),
        "errors": _errors(*(g["errors"] for g in groups.values()), {"connection_lost": lost,
                                                                     "connect_failed": s.load.ready["failed"]}),
        "server_errors": server_errors, "hop": hop,
        "server_p99_le_ms": {n: {k: _ms(histogram_quantile(m0[n], m1[n], f"cardhall_{k}_seconds", 0.99))
                                 for k in ("action_latency", "commit")} for n in m1},
        "cpu": {"nodes_s": round(node_s, 3), "redis_s": redis_s, "load_s": cpu["load"],
                "nodes_cores": round(node_s / window, 2), "machine_busy_s": round(busy, 2),
                "others_s": round(max(0.0, busy - sum(cpu.values())), 2),  # ticks are sampled: ~0 reads as 0
                "actions_per_node_cpu_s": round(actions / node_s, 1) if node_s else None,
                "actions_per_cpu_s_with_redis": round(actions / (node_s + redis_s), 1) if node_s else None},
        "processes": [{"name": k, "pid": p, "cpu_s": cpu[k], "cpus": dict(sorted(where.seen[p].items())),
                       "affinity": affinity(p)} for k, p in pids.items()],
    }


def _resumed(s: Session, tables: set[str], survivors: set[int], timeout: float) -> dict[str, Any]:
    """Probe the load until each of ``tables`` watched from a node of
    ``survivors`` had an event after the instant given (or ``timeout``);
    returns the last probe reduced to those nodes: table -> [first, longest wait]."""
    deadline = time.monotonic() + timeout
    while True:
        seen = s.load.ask("probe")
        mine = {t: [v for node, v in by_node.items() if node in survivors] for t, by_node in seen.items()}
        out = {t: [min((v[0] for v in vs if v[0] is not None), default=None),
                   max((v[1] for v in vs if v[1] is not None), default=None)] for t, vs in mine.items() if vs}
        if all(out[t][0] is not None for t in tables if t in out) or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


def _victim(s: Session) -> tuple[Any, set[str], set[int]]:
    """The node owning the most tables now, its tables, the other nodes' indices."""
    owners = s.cluster.owners()
    victim = s.cluster.node(Counter(owners.values()).most_common(1)[0][0])
    return (victim, {t for t, o in owners.items() if o == victim.id},
            {i for i, n in enumerate(s.cluster.nodes) if n is not victim})


def _new_owners(s: Session, tables: set[str], gone: str, timeout: float = 10.0) -> dict[str, int]:
    """node -> how many of ``tables`` it serves, once none is shown on ``gone`` (heartbeats lag)."""
    deadline = time.monotonic() + timeout
    while True:
        owners = s.cluster.owners()
        placed = Counter(owners[t] for t in tables if t in owners)
        if (not placed.get(gone) and sum(placed.values()) == len(tables)) or time.monotonic() > deadline:
            return dict(sorted(placed.items()))
        time.sleep(0.2)


def failover(args: argparse.Namespace, s: Session) -> dict[str, Any]:
    """SIGKILL the node owning the most tables; per table, kill -> first event after it on a surviving node."""
    victim, tables, survivors = _victim(s)
    s.load.ask("track")
    killed = time.time()
    victim.kill()
    s.load.ask("after", killed)
    seen = _resumed(s, tables, survivors, args.lease_ttl + 30)
    times = [seen[t][0] - killed for t in tables if t in seen and seen[t][0] is not None]
    return {"node": victim.id, "tables": len(tables), "observed": sum(1 for t in tables if t in seen),
            "resumed": len(times), "p50_s": _round(quantile(times, 0.5)), "max_s": _round(max(times, default=None)),
            "lease_ttl_s": s.cluster.lease_ttl, "lease_renew_s": round(s.cluster.lease_renew, 3),
            "claimed_by": _new_owners(s, tables, victim.id)}


def _round(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def _histogram(text: str, name: str) -> tuple[dict[float, float], float, float]:
    """A Prometheus histogram's cumulative buckets (le -> count), count and sum."""
    buckets = {float("inf") if le == "+Inf" else float(le): float(v)
               for le, v in re.findall(rf'^{name}_bucket{{le="([^"]+)"}} ([0-9.e+-]+)$', text, re.M)}
    return buckets, metric(text, f"{name}_count"), metric(text, f"{name}_sum")


def handover(args: argparse.Namespace, redis: Redis, size: int, workdir: Path) -> dict[str, Any]:
    """A fresh cluster of ``size``; SIGTERM the node owning the most tables; the
    receivers' ``cardhall_handover_seconds`` and the clients' longest waits."""
    name = "cardhall_handover_seconds"
    with open_session(args, redis, size, workdir) as s:
        connections = {"planned": s.load.ready["planned"], "connected": s.load.ready["connections"],
                       "failure_kinds": s.load.ready.get("failure_kinds", {})}
        time.sleep(args.warmup)
        victim, tables, survivors = _victim(s)
        receivers = [n for n in s.cluster.nodes if n is not victim]
        m0 = s.cluster.scrape(receivers)
        s.load.ask("track")
        signalled = time.time()
        victim.terminate()
        s.load.ask("after", signalled)
        exited = victim.wait(30)
        exit_s = time.time() - signalled
        seen = _resumed(s, tables, survivors, 30)
        m1 = s.cluster.scrape(receivers)
        placed = _new_owners(s, tables, victim.id)
    buckets: Counter[float] = Counter()
    count = total = 0.0
    received = {}
    for n in m1:
        b1, c1, s1 = _histogram(m1[n], name)
        b0, c0, s0 = _histogram(m0.get(n, ""), name)
        buckets.update({le: v - b0.get(le, 0.0) for le, v in b1.items()})
        count, total, received[n] = count + c1 - c0, total + s1 - s0, int(c1 - c0)
    p99 = next((le for le in sorted(buckets) if buckets[le] >= 0.99 * count), None) if count else None
    handed = [seen[t][1] for t in tables if t in seen and seen[t][1] is not None]
    others = [v[1] for t, v in seen.items() if t not in tables and v[1] is not None]
    firsts = [seen[t][0] - signalled for t in tables if t in seen and seen[t][0] is not None]
    return {"node": victim.id, "tables": len(tables), "connections": connections, "exited": exited,
            "exit_s": round(exit_s, 3),
            "claimed_by": placed, "histogram": {"count": int(count), "received_by": received,
                                                "mean_ms": _ms(total / count) if count else None,
                                                "p99_le_ms": _ms(p99) if p99 != float("inf") else "+Inf"},
            "clients": {"observed": len(handed), "resumed": len(firsts),
                        "longest_wait_p50_ms": _ms(quantile(handed, 0.5)),
                        "longest_wait_p99_ms": _ms(quantile(handed, 0.99)), "longest_wait_max_ms": _ms(max(handed, default=None)),
                        "first_event_after_sigterm_p50_ms": _ms(quantile(firsts, 0.5)),
                        "first_event_after_sigterm_max_ms": _ms(max(firsts, default=None)),
                        "other_tables_longest_wait_p50_ms": _ms(quantile(others, 0.5)),
                        "other_tables_longest_wait_max_ms": _ms(max(others, default=None))},
            "seq_gaps": _gaps(s.totals)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the benchmark; returns the figures (see the module docstring)."""
    sizes = parse_sizes(args.nodes)
    workdir = Path(args.logs) if args.logs else Path(tempfile.mkdtemp(prefix="cardhall-bench-cluster-"))
    workdir.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "usable_cpus": len(os.sched_getaffinity(0)),
                    "load_average": [round(x, 2) for x in os.getloadavg()]},
        "game": pick_game(args.game), "tables": args.tables, "seats": SEATS, "think_s": args.think,
        "spectators_per_table": args.spectators, "warmup_s": args.warmup, "duration_s": args.duration,
        "lease_ttl_s": args.lease_ttl, "runs": [], "failover": None, "handover": None, "faults": None, "rebalance": None}
    if args.redis_cluster and args.only is not None:
        raise SystemExit("bench cluster: --only does not go with --redis-cluster")
    try:
        if args.redis_cluster:  # the comparison instead (module docstring)
            out["runs"], out["redis_cluster"] = redis_cluster.compare(
                args, max(sizes), workdir, lambda store, n, **more: open_session(args, store, n, workdir, **more),
                lambda s: measure(args, s))
        else:
            out["redis_pid"] = _on_one_redis(args, sizes, workdir, out)
    finally:
        if not args.logs:
            shutil.rmtree(workdir, ignore_errors=True)
    base = next((r["cpu"]["actions_per_node_cpu_s"] for r in out["runs"] if r["nodes"] == 1), None)
    for r in out["runs"]:
        per = r["cpu"]["actions_per_node_cpu_s"]
        r["cpu"]["ratio_to_1"] = round(per / base, 3) if base and per else None
    out["shortfalls"] = shortfalls(out)
    out["all_connected"] = not out["shortfalls"]
    return out


def _on_one_redis(args: argparse.Namespace, sizes: list[int], workdir: Path, out: dict[str, Any]) -> int:
    """The runs of :func:`run` on one Redis (every size, failover, handover,
    faults, rebalance; with ``--only``, only the rounds named); its pid."""
    only = parse_only(args.only)
    largest = max(sizes)
    if only and largest < 2:
        raise SystemExit(f"bench cluster: --only {args.only} needs a cluster of 2 nodes or more (--nodes)")
    redis = Redis(workdir)
    try:
        for size in sizes if not only else ():
            with open_session(args, redis, size, workdir) as s:
                figures = measure(args, s)
                if size == largest and size >= 2 and not args.skip_failover:
                    out["failover"] = failover(args, s)
            out["runs"].append(figures)
            if out["failover"] is not None and size == largest:  # the gaps counted after the window
                out["failover"]["seq_gaps"] = _gaps(s.totals) - figures["seq_gaps"]
                out["failover"]["connections_lost"] = sum((s.totals or {}).get("lost_by_node", {}).values())
        if largest >= 2 and ("handover" in only if only else not args.skip_handover):
            out["handover"] = handover(args, redis, largest, workdir)
        faults = "faults" in only if only else args.faults
        if faults and largest < 2:
            print("bench cluster: --faults needs a cluster of 2 nodes or more (--nodes); no fault round", file=sys.stderr)
        elif faults:
            out["faults"] = cluster_faults.fault_round(
                args, lambda **more: open_session(args, redis, largest, workdir, **more), redis)
        if largest >= 2 and ("rebalance" in only if only else not args.skip_rebalance):
            out["rebalance"] = cluster_rebalance.rebalance_round(
                args, lambda **more: open_session(args, redis, largest, workdir, **more), table_body(args))
    finally:
        redis.close()
    return redis.pid


def shortfalls(out: dict[str, Any]) -> list[str]:
    """One line per session of :func:`run` in which fewer spectators joined
    their table than planned, or fewer were still connected when its window
    ended (empty: every intended connection was made and held).

    >>> shortfalls({"runs": [{"nodes": 1, "planned_connections": 8, "connected": 8, "connections": 8},
    ...                      {"nodes": 2, "planned_connections": 400, "connected": 40, "connections": 40,
    ...                       "connect_failure_kinds": {"rate_limited": 360}}],
    ...             "handover": {"connections": {"planned": 8, "connected": 8}}})
    ["2 node(s): 40 of 400 spectators connected ({'rate_limited': 360}), 40 held to the end of the window"]
    """
    lines = []
    for r in out["runs"]:
        if r["connected"] < r["planned_connections"] or r["connections"] < r["connected"]:
            lines.append(f"{r['nodes']} node(s){' on ' + r['store'] if 'store' in r else ''}: {r['connected']} of {r['planned_connections']} spectators connected "
                         f"({r.get('connect_failure_kinds') or 'none refused'}), {r['connections']} held to the end "
                         f"of the window")
    h = out.get("handover")
    if h is not None and h["connections"]["connected"] < h["connections"]["planned"]:
        c = h["connections"]
        lines.append(f"handover: {c['connected']} of {c['planned']} spectators connected "
                     f"({c.get('failure_kinds') or 'none refused'})")
    return lines + cluster_faults.shortfalls(out.get("faults")) + rebalance_figures.shortfalls(out.get("rebalance"))


def main(args: argparse.Namespace) -> int:
    out = run(args)
    print(json.dumps(out) if args.json else report(out))
    if out["shortfalls"]:
        print("bench cluster: WARNING: not every intended spectator connection was made or held, so the figures "
              "cover fewer connections than asked for:\n  " + "\n  ".join(out["shortfalls"]), file=sys.stderr)
        return 1
    failed = (out.get("redis_cluster") or {}).get("failed")
    if failed:
        print(f"bench cluster: {len(failed)} run(s) of --redis-cluster failed (their errors above)", file=sys.stderr)
    return 1 if failed else 0
