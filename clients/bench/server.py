"""``cardhall bench server``: the live service under load (a benchmark, not a test).

The server runs in its own process (``cardhall serve``) with ``--tables``
tables of server-side bots (pacing off, ``auto_rematch`` so tables never
stop); another process opens ``--spectators`` websocket spectators per table
(the load generator of ``cardhall loadtest``, :mod:`cardhall.clients.load`, with no
players of its own: msgpack, ``batch`` frames) and measures, after a
warm-up, for ``--duration`` seconds:

* ``actions_per_s``: actions the server applied (its ``cardhall_actions_total``);
* ``events_per_s``: events delivered to all spectators (an event in a ``batch``
  frame counts once per spectator);
* ``p50_ms``/``p95_ms``/``p99_ms``: action-to-event latency: the time a
  spectator receives an event minus the event's ``ts`` (when the action that
  caused it was taken: a bot's move firing after its think time), same host clock;
* ``seq_gaps`` (must be 0), ``errors`` (code -> count: error frames and lost
  connections), ``server_rss_bytes`` (the server's resident memory at the end).

Modes: ``--think 0.2`` (default) is the offered load (500 tables
x ~5 actions/s, 2 spectators each; target p99 <= 50 ms); ``--think 0`` is the
maximum. ``--baseline`` then runs a bare Starlette broadcast
(``cardhall.clients.bench.baseline``) to the same number of connections with the same
number of frames of the same mean size and prints its frames/s and our ratio
(:func:`baseline_definition` gives the definition, printed with it).
``--idle N`` adds N connections that said ``hello`` and joined no table.
``--json`` prints one JSON object.

``--issue-table`` measures the fan-out issue's figures in one run and prints
its table (:mod:`cardhall.clients.bench.issue_table`).

``--redis URL`` runs the same measurement twice, with the in-memory
store and with Redis (``serve --redis URL`` under a fresh key prefix, deleted
afterwards), prints both and ``redis_ratio`` (Redis actions/s over memory
actions/s; target >= 0.85), then the recovery: ``--recover-tables`` (1,000)
bot tables (bots thinking 0.05 s, so that most are some input log steps past
their last whole state) play for 3 s on Redis, the server is killed with
SIGKILL and started again under the same node id (it takes its tables back
at once), and the figure is the server's own recovery time (reading every
table and its input log, replaying the log, restarting the table; target
< 1 s) with the log steps it replayed, next to the time from the new
process's start to its first answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import subprocess
import sys
import time
from typing import Any

from cardhall.clients.load.interrupts import ignore_sigint, sigint_ignored
from cardhall.clients.load.probe import free_port as _free_port
from cardhall.clients.load.probe import wait_port as _wait_port

#: the game measured when none is named (then the registered games in catalogue order)
PREFERRED_GAME = "no_limit_holdem"


def register(subparsers: Any) -> None:
    """Add ``bench server``."""
    p = subparsers.add_parser("server", help="the live service under load: actions/s, events/s, latency, memory")
    p.add_argument("--tables", type=int, default=500, help="bot tables (default 500)")
    p.add_argument("--spectators", type=int, default=2, help="websocket spectators per table (default 2)")
    p.add_argument("--seats", type=int, default=6, help="seats per table, all bots (default 6)")
    p.add_argument("--game", default=None, help="game (default: no_limit_holdem, else the first available)")
    p.add_argument("--bot", default="random", help="bot strategy (default random: measure the server, not bots)")
    p.add_argument("--think", type=float, default=0.2, help="bot think time, seconds (0: maximum load)")
    p.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring")
    p.add_argument("--duration", type=float, default=10.0, help="seconds measured")
    p.add_argument("--codec", choices=["msgpack", "json"], default="msgpack")
    p.add_argument("--baseline", action="store_true", help="also run a bare Starlette broadcast and print the ratio")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    p.add_argument("--redis", metavar="URL", default=None,
                   help="also measure with this Redis as the store, print the ratio and the recovery time")
    p.add_argument("--recover-tables", type=int, default=1000,
                   help="with --redis: tables checkpointed, killed and recovered (default 1000; 0: skip)")
    p.add_argument("--idle", type=int, default=0,
                   help="also open this many idle connections (said hello, joined no table; default 0)")
    p.add_argument("--issue-table", action="store_true",
                   help="the fan-out issue's table in one run, ignoring --tables/--think/--spectators/--redis/"
                        "--baseline: a private redis-server (AOF everysec) on a free port; --rounds interleaved "
                        "rounds of the maximum (200 tables, think 0) in memory, on that Redis and the bare "
                        "broadcast (median and min-max of each figure and ratio); the offered load (500 tables, "
                        "think 0.2, in memory) for p99; the maximum and broadcast again at 2,000 connections of "
                        "which 1,000 idle; prints | figure | this run | target |, the baseline's definition and "
                        "where each process ran (--json: one object)")
    p.add_argument("--rounds", type=int, default=3, help="with --issue-table: interleaved rounds (default 3)")
    p.set_defaults(func=main)


def pick_game(game: str | None) -> str:
    """``game`` (SystemExit naming the registered games when it is not one), or
    :data:`PREFERRED_GAME`."""
    from cardhall.engine.registry import GAMES

    if game is None:
        return PREFERRED_GAME
    if game not in GAMES:
        raise SystemExit(f"game {game} is not available; games: {', '.join(GAMES)}")
    return game


# -- the bare broadcast --------------------------------------------------------
def _baseline_process(conn: Any, port: int, connections: int, frames: int, size: int) -> None:
    ignore_sigint()  # a Ctrl-C is the parent's to report
    try:
        import uvloop
    except ImportError:  # uvloop is not built for every platform
        result = asyncio.run(_baseline(port, connections, frames, size))
    else:
        result = uvloop.run(_baseline(port, connections, frames, size))
    conn.send(result)
    conn.close()


async def _baseline(port: int, connections: int, frames: int, size: int) -> dict[str, Any]:
    import httpx
    from websockets.asyncio.client import connect

    received = 0
    done = asyncio.Event()
    total = frames * connections
    first = 0.0

    async def reader(ws: Any) -> None:
        nonlocal received, first
        async for _ in ws:
            if not first:
                first = time.monotonic()
            received += 1
            if received >= total:
                done.set()

    sockets = []
    for i in range(0, connections, 50):
        batch = await asyncio.gather(*(connect(f"ws://127.0.0.1:{port}/ws", subprotocols=["cardhall.v1.msgpack"],
                                               compression=None) for _ in range(min(50, connections - i))))
        sockets.extend(batch)
    tasks = [asyncio.create_task(reader(ws)) for ws in sockets]
    async with httpx.AsyncClient() as http:
        started = time.monotonic()
        await http.post(f"http://127.0.0.1:{port}/go", params={"frames": frames, "size": size})
    try:
        await asyncio.wait_for(done.wait(), 300)
    except TimeoutError:
        pass
    elapsed = time.monotonic() - started
    for t in tasks:
        t.cancel()
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    return {"frames": received, "elapsed": elapsed, "frames_per_s": received / elapsed if elapsed else 0.0}


# -- the benchmark -----------------------------------------------------------
#: what the benchmark's own server lifts: every spectator connects from 127.0.0.1 (1,000 by default),
#: its 500 tables are created from there too, and their bots play faster than a public server's floor
LIFTED = ["--max-connections-per-ip", "0", "--max-tables-per-address", "0", "--new-players-per-address", "0",
          "--bot-think-floor", "0"]


def _serve(port: int, store_args: list[str]) -> subprocess.Popen[bytes]:
    """``cardhall serve`` on ``port`` for the benchmark, with :data:`LIFTED` (said on stderr)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("CARDHALL_REDIS_URL", None)
    print(f"bench server: its server runs with {' '.join(LIFTED)} (no per-address limits on connections, "
          f"tables and new players, no bot think floor: the load comes from one address)", file=sys.stderr)
    return subprocess.Popen([sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(port),
                             "--log-level", "warning", "--send-queue", "100000", *LIFTED, *store_args], env=env)


def _stop(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM, and SIGKILL if it has not exited after 15 s."""
    server.terminate()
    try:
        server.wait(15)
    except subprocess.TimeoutExpired:
        server.kill()


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the benchmark (twice with ``--redis``: memory, then Redis, then the
    recovery); returns the figures."""
    if not getattr(args, "redis", None):
        return measure(args, [])
    prefix = f"cardhall-bench-{os.getpid()}"
    try:
        memory = measure(args, [])
        with_redis = measure(args, ["--redis", args.redis, "--redis-prefix", prefix + "-load"])
        out: dict[str, Any] = {**memory, "redis": with_redis,
                               "redis_ratio": round(with_redis["actions_per_s"] / memory["actions_per_s"], 3)
                               if memory["actions_per_s"] else None}
        if args.recover_tables > 0:
            out["recovery"] = measure_recovery(args, prefix + "-recover")
    finally:
        _delete_prefix(args.redis, prefix)
    return out


def _delete_prefix(url: str, prefix: str) -> None:
    """Delete every key the benchmark wrote (``prefix*``)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        batch = []
        for key in client.scan_iter(match=f"{prefix}*", count=1000):
            batch.append(key)
            if len(batch) >= 1000:
                client.delete(*batch)
                batch.clear()
        if batch:
            client.delete(*batch)
    finally:
        client.close()


def measure_recovery(args: argparse.Namespace, prefix: str) -> dict[str, Any]:
    """Checkpoint ``args.recover_tables`` bot tables mid-match to Redis, SIGKILL
    the server, start it again and read how long recovering them took."""
    import httpx

    game = pick_game(args.game)
    from cardhall.engine.registry import engine_class

    cls = engine_class(game)
    seats = max(cls.min_seats, min(args.seats, cls.max_seats))
    store_args = ["--redis", args.redis, "--redis-prefix", prefix, "--node-id", f"bench-{prefix}"]
    port = _free_port()
    server = _serve(port, store_args)
    try:
        _wait_port(port, server)
        spec = {"game": game, "seats": seats, "bots": [args.bot] * seats,
                "options": {"pause": 0, "bot_think": 0.05, "auto_rematch": True, "close_after": 3600}}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            for _ in range(args.recover_tables):
                http.post("/api/tables", json=spec).raise_for_status()
        time.sleep(3.0)  # every table plays: its last whole state and the log steps after it
    finally:
        server.kill()
        server.wait(15)
    port = _free_port()
    started = time.monotonic()
    server = _serve(port, store_args)
    try:
        _wait_port(port, server, timeout=120)
        ready = time.monotonic() - started
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            health = http.get("/healthz").json()
    finally:
        _stop(server)
    recovery = health.get("recovery", {})
    return {"tables": recovery.get("tables"), "quarantined": recovery.get("quarantined"),
            "replayed": recovery.get("replayed"), "seconds": recovery.get("seconds"),
            "process_start_to_ready_s": round(ready, 3)}


def measure(args: argparse.Namespace, store_args: list[str], where: Any = None) -> dict[str, Any]:
    """One measurement against a server started with ``store_args``: the
    load generator's figures (:func:`cardhall.clients.load.run.run`, bots-only
    tables; ``args.idle`` idle connections besides). ``where``: a
    :class:`~cardhall.clients.bench.where.Where` told the server's pid."""
    from cardhall.clients.load.run import LoadSpec
    from cardhall.clients.load.run import run as load

    game = pick_game(args.game)
    from cardhall.engine.registry import engine_class

    cls = engine_class(game)
    seats = max(cls.min_seats, min(args.seats, cls.max_seats))
    port = _free_port()
    server = _serve(port, store_args)
    if where is not None:
        where.watch(server.pid, "cardhall serve")
    try:
        _wait_port(port, server)
        spec = LoadSpec(url=f"ws://127.0.0.1:{port}/ws", tables=args.tables, seats=seats, players=0,
                        spectators=args.spectators, idle=getattr(args, "idle", 0), game=game, bot=args.bot,
                        think=args.think, warmup=args.warmup, duration=args.duration, codec=args.codec,
                        server_pid=server.pid)
        out = load(spec)
    finally:
        _stop(server)
    out["server_rss_per_connection_bytes"] = out["server_rss_bytes"] // max(1, out["connections"])
    if args.baseline:
        out.update(run_baseline(out))
    return out


#: the bare broadcast's frame size, bytes (``--baseline``'s definition; SPEC's event frames are ~150-250)
BASELINE_FRAME_BYTES = 200


def baseline_definition(out: dict[str, Any]) -> dict[str, int]:
    """What the bare broadcast matched to the measurement ``out`` sends
    (``--baseline``'s fixed definition): to as many connections as the
    measurement held (idle ones included), the events it delivered in its
    window as frames split evenly over those connections
    (``events_per_s * duration_s // connections`` frames each, at least 1), of
    :data:`BASELINE_FRAME_BYTES` bytes, one frame per websocket message (one
    ``send_bytes`` each)."""
    connections = out["connections"]
    events = int(out["events_per_s"] * out["duration_s"])
    return {"connections": connections, "frames_per_connection": max(1, events // max(1, connections)),
            "frame_bytes": BASELINE_FRAME_BYTES, "frames_per_message": 1}


def run_baseline(out: dict[str, Any]) -> dict[str, Any]:
    """Run the bare broadcast of :func:`baseline_definition` for ``out``;
    returns ``baseline_events_per_s`` (frames/s it delivered), ``baseline_ratio``
    (``out``'s events/s over it) and ``baseline`` (the definition)."""
    definition = baseline_definition(out)
    port = _free_port()
    proc_server = subprocess.Popen([sys.executable, "-m", "cardhall.clients.bench.baseline", str(port)])
    try:
        _wait_port(port, proc_server)
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        # daemon: ended with this process; SIGINT ignored (inherited): Ctrl-C interrupts this process only
        proc = ctx.Process(target=_baseline_process, daemon=True,
                           args=(child, port, definition["connections"], definition["frames_per_connection"],
                                 definition["frame_bytes"]))
        with sigint_ignored():
            proc.start()
        try:
            result = parent.recv()
        except BaseException:
            proc.terminate()
            raise
        proc.join(30)
    finally:
        proc_server.terminate()
        proc_server.wait(15)
    rate = result["frames_per_s"]
    return {"baseline_events_per_s": round(rate, 1), "baseline": definition,
            "baseline_ratio": round(out["events_per_s"] / rate, 2) if rate else None}


def main(args: argparse.Namespace) -> int:
    if args.issue_table:
        from cardhall.clients.bench.issue_table import main as issue_table

        return issue_table(args)
    out = run(args)
    if args.json:
        print(json.dumps(out))
        return 0
    _print(out, "in-memory store" if "redis" in out else "")
    if "redis" in out:
        _print(out["redis"], "Redis store")
        print(f"Redis/memory actions/s ratio {out['redis_ratio']} (target >= 0.85)")
    if "recovery" in out:
        r = out["recovery"]
        print(f"recovery: {r['tables']} tables in {r['seconds']} s (target < 1 s; {r['quarantined']} quarantined, "
              f"{r['replayed']} input log steps replayed), {r['process_start_to_ready_s']} s from process start "
              f"to first answer")
    return 0


def _print(out: dict[str, Any], label: str) -> None:
    if label:
        print(f"-- {label}")
    print(f"game {out['game']}: {out['tables']} tables x {out['seats']} bots, think {out['think_s']} s, "
          f"{out['connections']} spectators ({out['codec']}), {out['duration_s']} s measured")
    print(f"  actions/s          {out['actions_per_s']:>10}")
    print(f"  events delivered/s {out['events_per_s']:>10}   ({out['frames_per_message']} frames per websocket message)")
    print(f"  latency ms         p50 {out['p50_ms']}  p95 {out['p95_ms']}  p99 {out['p99_ms']}   "
          f"(server side, bucket bounds: p50 <= {out['server_p50_ms']}  p99 <= {out['server_p99_ms']})")
    print(f"  errors {out['errors'] or 'none'}  seq gaps {out['seq_gaps']}")
    print(f"  server RSS         {out['server_rss_bytes'] / 2**20:.1f} MiB "
          f"({out['server_rss_per_connection_bytes'] / 1024:.1f} KiB per connection, tables included)")
    if "baseline_events_per_s" in out:
        b = out["baseline"]
        print(f"  bare Starlette broadcast {out['baseline_events_per_s']} frames/s; ratio {out['baseline_ratio']} "
              f"({b['connections']} connections x {b['frames_per_connection']} frames of {b['frame_bytes']} bytes, "
              f"{b['frames_per_message']} frame per message)")
