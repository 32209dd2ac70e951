"""``cardhall bench server --issue-table``: the fan-out issue's figures in one run.

What it runs (no-limit Hold'em unless ``--game``, ``--seats`` random bots per
table, msgpack spectators taking ``batch`` frames, ``--warmup`` then
``--duration`` seconds measured each time):

1. a private ``redis-server`` on a free port in a temporary directory, with an
   append-only file synced every second and no snapshots
   (``--appendonly yes --appendfsync everysec --save ''``), stopped at the end;
2. ``--rounds`` interleaved rounds of: the maximum (:data:`MAXIMUM`: 200
   tables, think 0, 2 spectators each) in memory, the same on that Redis (a
   key prefix per round), the bare broadcast matched to the in-memory run
   (:func:`~cardhall.clients.bench.server.baseline_definition`, the fixed
   definition of ``--baseline``);
3. ``--rounds`` runs of the offered load (:data:`OFFERED`: 500 tables, think
   0.2 s, in memory) for its p99 action-to-event latency;
4. the recovery of ``--recover-tables`` (1,000) tables from that Redis, killed
   mid-match and restarted (:func:`~cardhall.clients.bench.server.measure_recovery`:
   the input log replayed; target under 1 s), when ``--recover-tables`` is not 0;
5. ``--rounds`` interleaved rounds of the maximum with 2,000 connections of
   which 1,000 are idle (:data:`WITH_IDLE`: 5 spectators at each of the 200
   tables, 1,000 connections that said ``hello`` and joined nothing, as
   ``cardhall loadtest --idle`` opens them) and its matched broadcast.

Each figure is the median of its rounds with their min-max; a ratio is the
median of the rounds' ratios (each round's two runs ran back to back). It
prints ``| figure | this run | target |`` (:data:`TARGETS`), the baseline's
definition, each round's figures and where the server, the load and Redis
ran (processes, cores used, CPUs: :class:`~cardhall.clients.bench.where.Where`).
``--json`` prints the same as one object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from cardhall.clients.bench.cluster_procs import Redis
from cardhall.clients.bench.server import BASELINE_FRAME_BYTES, measure, measure_recovery, pick_game, run_baseline
from cardhall.clients.bench.where import Where, describe

#: the maximum: every bot acts at once, the server's one core is the limit
MAXIMUM = {"tables": 200, "think": 0.0, "spectators": 2, "idle": 0}
#: the offered load: ~5 actions/s per table
OFFERED = {"tables": 500, "think": 0.2, "spectators": 2, "idle": 0}
#: the maximum at 2,000 connections, 1,000 of them idle (hello, no table)
WITH_IDLE = {"tables": 200, "think": 0.0, "spectators": 5, "idle": 1000}

#: figure -> (what the table calls it, target, "min" when the figure must reach it, "max" when it must stay under)
TARGETS: dict[str, tuple[str, float, str]] = {
    "redis_ratio": ("Redis's cost at the maximum (actions/s on Redis / in memory)", 0.85, "min"),
    "baseline_ratio": ("server events delivered/s / bare Starlette broadcast (as `bench server --baseline` "
                       "defines it)", 1.0, "min"),
    "offered_p99_ms": ("offered load (500 tables, think 0.2 s, in memory): p99 action to event", 20.0, "max"),
    "idle_baseline_ratio": ("the same at 2,000 connections, 1,000 of them idle: events delivered/s / "
                            "bare broadcast", 1.0, "min"),
}

#: the Redis the issue measures on
REDIS_PERSISTENCE = "--appendonly yes --appendfsync everysec --save ''"


def variant(args: argparse.Namespace, load: dict[str, Any]) -> argparse.Namespace:
    """``args`` with the tables, think time, spectators and idle connections of
    ``load`` (one of :data:`MAXIMUM`, :data:`OFFERED`, :data:`WITH_IDLE`), no
    ``--baseline`` and no ``--redis`` (this module runs those itself)."""
    return argparse.Namespace(**{**vars(args), **load, "baseline": False, "redis": None})


def spread(values: list[float]) -> dict[str, Any]:
    """``{"median", "min", "max", "values"}`` of ``values`` (None when empty).

    >>> spread([3.0, 1.0, 2.0])
    {'median': 2.0, 'min': 1.0, 'max': 3.0, 'values': [3.0, 1.0, 2.0]}
    """
    if not values:
        return {"median": None, "min": None, "max": None, "values": []}
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "values": values}


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 3) if b else None


def _watched(args: argparse.Namespace, load: dict[str, Any], store: list[str], redis: Redis | None) -> dict[str, Any]:
    """One :func:`measure` of ``load`` with ``store`` args, and where its processes ran."""
    roles = {redis.pid: "redis-server"} if redis is not None else {}
    with Where(roles) as where:
        out = measure(variant(args, load), store, where)
    out["where"] = where.report()
    return out


def _broadcast(out: dict[str, Any]) -> dict[str, Any]:
    """The bare broadcast matched to ``out``, and where its processes ran."""
    with Where() as where:
        got = run_baseline(out)
    got["where"] = where.report()
    return got


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement of the module docstring; returns the figures
    (``figures``: figure -> :func:`spread`, ``rounds``: each run's output)."""
    rounds = max(1, args.rounds)
    out: dict[str, Any] = {"game": pick_game(args.game), "seats": args.seats, "bot": args.bot, "codec": args.codec,
                           "warmup_s": args.warmup, "duration_s": args.duration, "rounds": rounds,
                           "redis": REDIS_PERSISTENCE, "loads": {"maximum": MAXIMUM, "offered": OFFERED,
                                                                 "with_idle": WITH_IDLE}}
    maximum: list[dict[str, Any]] = []
    offered: list[dict[str, Any]] = []
    idle: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="cardhall-issue-table-") as tmp:
        redis = Redis(Path(tmp), aof=True)
        try:
            out["redis_version"] = _redis_version()
            for i in range(rounds):
                memory = _watched(args, MAXIMUM, [], None)
                on_redis = _watched(args, MAXIMUM, ["--redis", redis.url, "--redis-prefix", f"issue-{i}"], redis)
                maximum.append({"memory": memory, "redis": on_redis, "baseline": _broadcast(memory)})
            if args.recover_tables > 0:
                on = argparse.Namespace(**{**vars(args), "redis": redis.url})
                out["recovery"] = measure_recovery(on, "issue-recover")
        finally:
            redis.close()
    for _ in range(rounds):
        offered.append(_watched(args, OFFERED, [], None))
    for _ in range(rounds):
        memory = _watched(args, WITH_IDLE, [], None)
        idle.append({"memory": memory, "baseline": _broadcast(memory)})
    out["maximum"], out["offered"], out["with_idle"] = maximum, offered, idle
    out["figures"] = figures(maximum, offered, idle)
    return out


def _redis_version() -> str:
    try:
        text = subprocess.run(["redis-server", "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    return next((w[2:] for w in text.split() if w.startswith("v=")), "?")


def figures(maximum: list[dict[str, Any]], offered: list[dict[str, Any]],
            idle: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Figure name -> :func:`spread` over the rounds: each of :data:`TARGETS`
    and the figures they are made of."""
    def col(rows: list[dict[str, Any]], *path: str) -> list[float]:
        values = []
        for row in rows:
            v: Any = row
            for key in path:
                v = v[key]
            if v is not None:
                values.append(v)
        return values

    ratios = [_ratio(r["redis"]["actions_per_s"], r["memory"]["actions_per_s"]) for r in maximum]
    base = [_ratio(r["memory"]["events_per_s"], r["baseline"]["baseline_events_per_s"]) for r in maximum]
    idle_base = [_ratio(r["memory"]["events_per_s"], r["baseline"]["baseline_events_per_s"]) for r in idle]
    return {
        "redis_ratio": spread([r for r in ratios if r is not None]),
        "memory_actions_per_s": spread(col(maximum, "memory", "actions_per_s")),
        "redis_actions_per_s": spread(col(maximum, "redis", "actions_per_s")),
        "redis_p50_ms": spread(col(maximum, "redis", "p50_ms")),
        "redis_p99_ms": spread(col(maximum, "redis", "p99_ms")),
        "baseline_ratio": spread([r for r in base if r is not None]),
        "events_per_s": spread(col(maximum, "memory", "events_per_s")),
        "baseline_events_per_s": spread(col(maximum, "baseline", "baseline_events_per_s")),
        "frames_per_message": spread(col(maximum, "memory", "frames_per_message")),
        "memory_p99_ms": spread(col(maximum, "memory", "p99_ms")),
        "offered_p99_ms": spread(col(offered, "p99_ms")),
        "offered_p50_ms": spread(col(offered, "p50_ms")),
        "offered_actions_per_s": spread(col(offered, "actions_per_s")),
        "idle_baseline_ratio": spread([r for r in idle_base if r is not None]),
        "idle_events_per_s": spread(col(idle, "memory", "events_per_s")),
        "idle_baseline_events_per_s": spread(col(idle, "baseline", "baseline_events_per_s")),
        "idle_connections": spread(col(idle, "memory", "connections")),
    }


def _n(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "?"
    return f"{value:,.{digits}f}"


def _s(fig: dict[str, Any], digits: int = 0) -> str:
    """``median (min-max)``."""
    if fig["median"] is None:
        return "?"
    return f"{_n(fig['median'], digits)} ({_n(fig['min'], digits)}-{_n(fig['max'], digits)})"


def _met(name: str, value: float | None) -> str:
    _, target, kind = TARGETS[name]
    if value is None:
        return "?"
    return "met" if (value >= target if kind == "min" else value <= target) else "NOT met"


def table(out: dict[str, Any]) -> list[str]:
    """The issue's table, ``| figure | this run | target |``, as Markdown lines."""
    f = out["figures"]
    rows = {
        "redis_ratio": f"{_s(f['redis_actions_per_s'])} / {_s(f['memory_actions_per_s'])} actions/s: "
                       f"**{_s(f['redis_ratio'], 2)}** (Redis p50 {_s(f['redis_p50_ms'], 1)} ms)",
        "baseline_ratio": f"{_s(f['events_per_s'])} / {_s(f['baseline_events_per_s'])}: "
                          f"**{_s(f['baseline_ratio'], 2)}** ({_n(f['frames_per_message']['median'], 1)} "
                          f"events per websocket message)",
        "offered_p99_ms": f"**{_s(f['offered_p99_ms'], 1)} ms** (p50 {_s(f['offered_p50_ms'], 1)} ms, "
                          f"{_s(f['offered_actions_per_s'])} actions/s)",
        "idle_baseline_ratio": f"{_s(f['idle_events_per_s'])} / {_s(f['idle_baseline_events_per_s'])}: "
                               f"**{_s(f['idle_baseline_ratio'], 2)}**",
    }
    lines = ["| figure | this run: median (min-max) | target |", "| --- | --- | --- |"]
    for name, text in rows.items():
        label, target, kind = TARGETS[name]
        goal = f"at least {target:g}" if kind == "min" else f"at most {target:g} ms"
        lines.append(f"| {label} | {text} | {goal} ({_met(name, f[name]['median'])}) |")
    return lines


def definition_lines(out: dict[str, Any]) -> list[str]:
    """The bare broadcast's definition, and what it was in this run."""
    def defs(rows: list[dict[str, Any]]) -> str:
        got = [r["baseline"]["baseline"] for r in rows]
        return ", ".join(f"{d['connections']:,} connections x {d['frames_per_connection']:,} frames" for d in got)

    return [
        "bare broadcast (the fixed definition of `bench server --baseline`): a Starlette app on uvicorn with the "
        "service's websocket protocol (clients/bench/baseline.py) sends, to as many connections as the server's "
        "run held (idle ones included), the events that run delivered in its window split evenly over them as "
        f"frames of {BASELINE_FRAME_BYTES} bytes, one frame per websocket message (one send_bytes each); one "
        "load process reads them all",
        f"  this run, maximum: {defs(out['maximum'])}",
        f"  this run, 2,000 connections: {defs(out['with_idle'])}",
    ]


def round_lines(out: dict[str, Any]) -> list[str]:
    """Each round's figures, one line per run."""
    lines = []
    for i, r in enumerate(out["maximum"], 1):
        m, rd, b = r["memory"], r["redis"], r["baseline"]
        lines.append(f"  round {i} maximum: memory {_n(m['actions_per_s'])} actions/s, {_n(m['events_per_s'])} "
                     f"events/s, p50/p99 {m['p50_ms']}/{m['p99_ms']} ms, server {m.get('server_cores')} cores | "
                     f"Redis {_n(rd['actions_per_s'])} actions/s, p50/p99 {rd['p50_ms']}/{rd['p99_ms']} ms | "
                     f"broadcast {_n(b['baseline_events_per_s'])} frames/s | errors {m['errors'] or 0}/"
                     f"{rd['errors'] or 0}, seq gaps {m['seq_gaps']}/{rd['seq_gaps']}")
    for i, o in enumerate(out["offered"], 1):
        lines.append(f"  round {i} offered: {_n(o['actions_per_s'])} actions/s, p50/p95/p99 {o['p50_ms']}/"
                     f"{o['p95_ms']}/{o['p99_ms']} ms, server {o.get('server_cores')} cores, "
                     f"errors {o['errors'] or 0}, seq gaps {o['seq_gaps']}")
    for i, r in enumerate(out["with_idle"], 1):
        m, b = r["memory"], r["baseline"]
        lines.append(f"  round {i} 2,000 connections: {m['connections']:,} held ({m['idle']:,} idle), "
                     f"{_n(m['actions_per_s'])} actions/s, {_n(m['events_per_s'])} events/s, p99 {m['p99_ms']} ms | "
                     f"broadcast {_n(b['baseline_events_per_s'])} frames/s | errors {m['errors'] or 0}, "
                     f"seq gaps {m['seq_gaps']}")
    return lines


def where_lines(out: dict[str, Any]) -> list[str]:
    """Where the processes of the last round ran (cores used, CPUs)."""
    last = out["maximum"][-1]
    return [
        "where it ran (last round; cores = CPU seconds per second while seen, CPU = share of samples on each):",
        f"  maximum, memory: {describe(last['memory']['where'])}",
        f"  maximum, Redis:  {describe(last['redis']['where'])}",
        f"  broadcast:       {describe(last['baseline']['where'])}",
        f"  offered load:    {describe(out['offered'][-1]['where'])}",
        f"  2,000 conns:     {describe(out['with_idle'][-1]['memory']['where'])}",
        f"  its broadcast:   {describe(out['with_idle'][-1]['baseline']['where'])}",
    ]


def main(args: argparse.Namespace) -> int:
    """Run and print (``--json``: one JSON object)."""
    out = run(args)
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"bench server --issue-table: {out['game']}, {out['seats']} {out['bot']} bots per table, {out['codec']} "
          f"spectators, {out['rounds']} rounds of {out['warmup_s']} s warm-up + {out['duration_s']} s measured; "
          f"Redis {out['redis_version']} private ({out['redis']})")
    print()
    for line in table(out):
        print(line)
    print()
    recovery = out.get("recovery")
    if recovery is not None:
        print(f"recovery: {recovery['tables']} tables in {recovery['seconds']} s (target under 1 s; "
              f"{recovery['replayed']} input log steps replayed, {recovery['quarantined']} quarantined), "
              f"{recovery['process_start_to_ready_s']} s from process start to first answer")
        print()
    for line in definition_lines(out) + round_lines(out) + where_lines(out):
        print(line)
    return 0
