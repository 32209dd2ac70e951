"""``cardhall bench bots``: a person's latency on a node crowded with bot tables (a benchmark, not a test).

The server runs in its own process (``cardhall serve`` on the in-memory
store, with its defaults: per-address limits, the bots' think floor, one bot
worker process unless ``--bot-workers`` says otherwise, trusting
``X-Forwarded-For`` from 127.0.0.1). This process then measures, for
``--duration`` seconds each time:

1. **idle**: a person's ``ping`` round trip over a websocket (one every
   50 ms) and ``GET /healthz`` (one every 200 ms) on the empty server;
2. creates ``--tables`` bot-only ``--seats``-seat no-limit Hold'em tables
   over HTTP, ``tables / addresses`` from each of ``--addresses`` client
   addresses (``X-Forwarded-For: 10.0.x.y``; 20 each by default, the
   per-address limit), each with the game's default (equity) bots, waits
   until the server has counted its first action (the tables play; at most
   120 s), then ``--warmup`` seconds;
3. **loaded**: the same probes while every table plays, with the server's
   actions per second (``cardhall_actions_total``), its actions in all
   (``actions_total``) and the bot turns waiting for a slot at the end
   (``cardhall_bot_turns_waiting``).

It prints p50/p99/max of both probes in each phase (ms), the loaded p99's
ratio to the idle one, and where the processes ran (the server, its bot
worker processes and this load process share the machine's cores, unpinned:
their CPU seconds per wall second in the loaded phase are printed). A probe
that gets no answer within 30 s counts as 30 s.

``--pythonpath DIR`` runs the server with ``PYTHONPATH=DIR`` first (a
directory holding an older checkout as ``cardhall``: the figure before a
change, from the same run of this command on the same machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import httpx

from cardhall.clients.bench.cluster_procs import cpu_seconds
from cardhall.clients.client import Client
from cardhall.clients.load.probe import free_port, metric, wait_port

#: the longest a probe waits for its answer, seconds (a probe past it counts as this long)
PROBE_TIMEOUT = 30.0


def register(subparsers: Any) -> None:
    """Add ``bench bots``."""
    p = subparsers.add_parser("bots", help="a person's ping and /healthz on a node crowded with bot tables")
    p.add_argument("--tables", type=int, default=2000, help="bot-only tables to create (default 2000)")
    p.add_argument("--addresses", type=int, default=100, help="client addresses creating them (default 100)")
    p.add_argument("--seats", type=int, default=9, help="seats (all bots) per table (default 9)")
    p.add_argument("--duration", type=float, default=20.0, help="seconds each phase is measured (default 20)")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds between creating the tables and measuring")
    p.add_argument("--bot-workers", type=int, default=None, help="the server's --bot-workers (default: its own)")
    p.add_argument("--pythonpath", default=None, metavar="DIR",
                   help="run the server with PYTHONPATH=DIR first (an older checkout: the figure before a change)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Run the benchmark (see the module docstring); 0 once printed, 1 (with the reason on
    stderr) when the tables never played."""
    port = free_port()
    cmd = [sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(port), "--log-level", "warning",
           "--trusted-proxy", "127.0.0.1"]
    if args.bot_workers is not None:
        cmd += ["--bot-workers", str(args.bot_workers)]
    env = dict(os.environ)
    if args.pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (args.pythonpath, env.get("PYTHONPATH")) if p)
    server = subprocess.Popen(cmd, env=env)
    try:
        wait_port(port, server)
        out = asyncio.run(_run(args, port, server.pid))
    except RuntimeError as exc:
        print(f"cardhall bench bots: {exc}", file=sys.stderr)
        return 1
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    if args.json:
        print(json.dumps(out))
    else:
        _print(out)
    return 0


def summary(samples: list[float]) -> dict[str, float]:
    """p50, p99 and max of ``samples`` (seconds), in milliseconds.

    >>> summary([0.001] * 99 + [0.5])
    {'p50_ms': 1.0, 'p99_ms': 1.0, 'max_ms': 500.0, 'n': 100}
    """
    if not samples:
        return {"p50_ms": float("nan"), "p99_ms": float("nan"), "max_ms": float("nan"), "n": 0}
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)) - 1)] if len(ordered) > 1 else ordered[0]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 2), "p99_ms": round(p99 * 1000, 2),
            "max_ms": round(ordered[-1] * 1000, 2), "n": len(ordered)}


async def _probe(port: int, seconds: float) -> dict[str, Any]:
    """A person's pings and ``/healthz`` calls for ``seconds``."""
    pings: list[float] = []
    health: list[float] = []
    end = time.monotonic() + seconds
    person = await Client(f"ws://127.0.0.1:{port}/ws", codec="json").connect()
    await person.hello("person")

    async def ping() -> None:
        while time.monotonic() < end:
            t = time.perf_counter()
            try:
                await asyncio.wait_for(person.ping(), PROBE_TIMEOUT)
                pings.append(time.perf_counter() - t)
            except TimeoutError:
                pings.append(PROBE_TIMEOUT)
            await asyncio.sleep(0.05)

    async def healthz() -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=PROBE_TIMEOUT) as http:
            while time.monotonic() < end:
                t = time.perf_counter()
                try:
                    await http.get("/healthz")
                    health.append(time.perf_counter() - t)
                except httpx.TimeoutException:
                    health.append(PROBE_TIMEOUT)
                await asyncio.sleep(0.2)

    try:
        await asyncio.gather(ping(), healthz())
    finally:
        await person.close()
    return {"ping": summary(pings), "healthz": summary(health)}


async def _create(port: int, tables: int, addresses: int, seats: int) -> dict[str, Any]:
    """Create the bot tables, ``tables / addresses`` per address; counts by HTTP status."""
    statuses: dict[str, int] = {}
    started = time.perf_counter()
    gate = asyncio.Semaphore(32)
    body = {"game": "no_limit_holdem", "seats": seats, "bots": seats}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120.0) as http:
        async def one(i: int) -> None:
            k = i % addresses
            async with gate:
                r = await http.post("/api/tables", json=body,
                                    headers={"X-Forwarded-For": f"10.0.{k // 250}.{k % 250 + 1}"})
            statuses[str(r.status_code)] = statuses.get(str(r.status_code), 0) + 1

        await asyncio.gather(*(one(i) for i in range(tables)))
    return {"statuses": statuses, "seconds": round(time.perf_counter() - started, 2)}


#: seconds the tables may take to play their first action before the benchmark gives up
FIRST_ACTION_WITHIN = 120.0


async def _first_action(http: httpx.AsyncClient, within: float) -> None:
    """Return once the server's ``cardhall_actions_total`` is above 0 (polled every 50 ms);
    RuntimeError after ``within`` seconds."""
    deadline = time.monotonic() + within
    while metric((await http.get("/metrics")).text, "cardhall_actions_total") <= 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the tables played no action within {within:g} s")
        await asyncio.sleep(0.05)


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(p) for p in f.read().split())
    except OSError:
        pass
    return out


def _cpu(pids: list[int]) -> dict[int, float]:
    return {p: cpu_seconds(p) or 0.0 for p in pids}


async def _run(args: argparse.Namespace, port: int, server: int) -> dict[str, Any]:
    out: dict[str, Any] = {"tables": args.tables, "addresses": args.addresses, "seats": args.seats,
                           "bot_workers": args.bot_workers, "pythonpath": args.pythonpath}
    out["idle"] = await _probe(port, args.duration)
    out["created"] = await _create(port, args.tables, args.addresses, args.seats)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60.0) as http:
        await _first_action(http, FIRST_ACTION_WITHIN)
        await asyncio.sleep(args.warmup)
        before = metric((await http.get("/metrics")).text, "cardhall_actions_total")
        pids = [server, *_children(server), os.getpid()]
        cpu0, t0 = _cpu(pids), time.monotonic()
        out["loaded"] = await _probe(port, args.duration)
        cpu1, wall = _cpu(pids), time.monotonic() - t0
        text = (await http.get("/metrics")).text
    out["actions_total"] = metric(text, "cardhall_actions_total")
    out["actions_per_s"] = round((out["actions_total"] - before) / wall, 1)
    out["bot_turns_waiting"] = metric(text, "cardhall_bot_turns_waiting")
    names = {server: "server", os.getpid(): "load"}
    out["cores"] = {names.get(p, f"server child {p}"): round((cpu1[p] - cpu0[p]) / wall, 2) for p in pids}
    out["ratio_ping_p99"] = round(out["loaded"]["ping"]["p99_ms"] / out["idle"]["ping"]["p99_ms"], 1)
    out["ratio_healthz_p99"] = round(out["loaded"]["healthz"]["p99_ms"] / out["idle"]["healthz"]["p99_ms"], 1)
    return out


def _print(out: dict[str, Any]) -> None:
    print(f"bench bots: {out['tables']} bot-only {out['seats']}-seat no-limit tables from {out['addresses']} "
          f"addresses (created {out['created']['statuses']} in {out['created']['seconds']} s)")
    for phase in ("idle", "loaded"):
        for probe in ("ping", "healthz"):
            s = out[phase][probe]
            print(f"  {phase:6} {probe:7} p50 {s['p50_ms']:8.2f} ms  p99 {s['p99_ms']:8.2f} ms  "
                  f"max {s['max_ms']:8.2f} ms  ({s['n']} probes)")
    print(f"  loaded/idle p99: ping {out['ratio_ping_p99']}x, healthz {out['ratio_healthz_p99']}x")
    print(f"  server actions/s while loaded: {out['actions_per_s']}; bot turns waiting at the end: "
          f"{out['bot_turns_waiting']:.0f}")
    print(f"  cores used while loaded (unpinned, same machine): {out['cores']}")
