"""Orchestrating a load test: tables, worker processes, the window, the figures.

:func:`run` creates ``tables`` tables over HTTP (``POST /api/tables``: ``bots``
server bots in the last seats, the first ``players`` seats left for the load
generator's players), spreads the tables over ``workers`` processes
(:mod:`cardhall.clients.load.worker`), waits until every connection is open, measures
for ``duration`` seconds after ``warmup``, scraping the server's ``/metrics``
at both ends of the window, and returns the figures (:func:`combine`). It
closes its tables at the end, through the operator endpoint with
``operator_key``, else by their owners' ``close`` (:mod:`cardhall.clients.load.tables`):
a load test leaves no table of its own in the lobby.

Within a public server's limits (deploy/README.md, "Limits"): its connections
say ``hello`` as ``players + 1`` players in all (:func:`player_tokens`: seat
``k`` of every table is one player, every spectator and idle connection
another), and a table's bots think at least the server's floor (the figures
give the ``bot_think`` the server chose). With ``operator_key`` the tables
are created with it, which lifts the per-address table limit and the floor;
without it they are owned by the load's watcher (more owners past the
server's per-player table limit).
"""

from __future__ import annotations

import multiprocessing
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from cardhall.clients.client import http_base
from cardhall.clients.load.histogram import LatencyHistogram
from cardhall.clients.load.interrupts import sigint_ignored
from cardhall.clients.load.probe import histogram_quantile, labelled, metric
from cardhall.clients.load.tables import close_own_tables, close_tables, create_tables, new_players
from cardhall.clients.load.worker import TablePlan, WorkerPlan, process_main

#: the keys every ``--json`` output has (docs/LOAD.md); others may be added
KEYS = ("connections", "actions_per_s", "events_per_s", "p50_ms", "p95_ms", "p99_ms", "errors", "seq_gaps",
        "server_rss_bytes")


@dataclass
class LoadSpec:
    """What to run (``cardhall loadtest --help`` explains each)."""

    url: str
    tables: int = 10
    seats: int = 6
    players: int = 2
    spectators: int = 2
    idle: int = 0
    game: str = "no_limit_holdem"
    strategy: str = "random"
    bot: str = "random"
    think: float = 0.5
    warmup: float = 3.0
    duration: float = 10.0
    workers: int = 1
    codec: str = "msgpack"
    addresses: int = 1
    operator_key: str | None = None
    table_options: dict[str, Any] = field(default_factory=dict)
    server_pid: int | None = None


def source_addresses(count: int) -> list[str]:
    """``count`` loopback addresses to bind connections to (127.0.0.0/8, all
    routed to the loopback interface on Linux; 1: none, the system's choice).

    >>> source_addresses(3)
    ['127.0.0.2', '127.0.0.3', '127.0.0.4']
    >>> source_addresses(300)[-1]
    '127.0.1.47'
    >>> source_addresses(1)
    []
    """
    if count <= 1:
        return []
    out: list[str] = []
    n = 2
    while len(out) < count:
        if 0 < n % 256 < 255:
            out.append(f"127.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}")
        n += 1
    return out


#: connections the load puts on one source address when it picks the addresses itself: under the
#: default per-address limit of ``cardhall serve`` (64, ``--max-connections-per-ip``), leaving room
#: for the test's own HTTP connections (creating tables, scraping ``/metrics``)
PER_ADDRESS = 48


def connections_of(spec: LoadSpec) -> int:
    """The websocket connections ``spec`` opens (players and spectators of each table, idle ones)."""
    return spec.tables * (spec.players + spec.spectators) + spec.idle


def choose_addresses(url: str, connections: int) -> tuple[int, str]:
    """How many loopback source addresses carry ``connections`` to the server
    at ``url`` when none are given, and a sentence saying so: for a server on
    this host (a loopback address or ``localhost``), enough that each carries
    at most :data:`PER_ADDRESS`; for any other server one (the system's
    choice), and the sentence warns when that passes the default limit.

    >>> choose_addresses("ws://127.0.0.1:8000/ws", 400)[0], choose_addresses("ws://127.0.0.1:8000/ws", 40)[0]
    (9, 1)
    >>> choose_addresses("ws://cards.example.org/ws", 400)[0]
    1
    """
    host = urlsplit(url).hostname or ""
    loopback = host == "localhost" or host.startswith("127.")
    if connections <= PER_ADDRESS:
        return 1, f"{connections} connections from one address"
    if not loopback:
        return 1, (f"{connections} connections from one address: more than a server with the default "
                   f"--max-connections-per-ip (64) accepts; raise it on the server for this test")
    n = -(-connections // PER_ADDRESS)
    return n, (f"{connections} connections over {n} loopback source addresses (127.0.0.2 ..), at most "
               f"{PER_ADDRESS} each: within cardhall serve's default --max-connections-per-ip 64")


def player_tokens(spec: LoadSpec) -> list[str]:
    """The tokens of ``players + 1`` new players, made over one connection
    (:class:`cardhall.clients.load.worker.WorkerPlan`'s ``tokens``): one per
    seat number, then the watcher (the spectators, the idle connections, and
    the owner of the tables when there is no operator key)."""
    return new_players(spec, [f"load {i + 1}" for i in range(spec.players)] + ["load watcher"])


def plans(spec: LoadSpec, tables: list[str], tokens: list[str] | None = None) -> list[WorkerPlan]:
    """Tables dealt round-robin to ``spec.workers`` plans (a table's connections
    stay in one worker); idle connections split evenly; ``tokens``: the
    players every plan's connections say hello as (:func:`player_tokens`)."""
    addresses = source_addresses(spec.addresses)
    out = [WorkerPlan(spec.url, codec=spec.codec, think=spec.think, strategy=spec.strategy,
                      addresses=addresses, index=i, tokens=list(tokens or ())) for i in range(spec.workers)]
    for i, table in enumerate(tables):
        out[i % spec.workers].tables.append(TablePlan(table, list(range(1, spec.players + 1)), spec.spectators))
    for i in range(spec.idle):
        out[i % spec.workers].idle += 1
    return [p for p in out if p.tables or p.idle]


def _scrape(base: str) -> str:
    import httpx

    try:
        return httpx.get(base + "/metrics", timeout=10).text
    except Exception:
        return ""


def _server_rss(spec: LoadSpec, text: str) -> int:
    if spec.server_pid:
        from cardhall.clients.load.probe import rss

        return rss(spec.server_pid)
    return int(metric(text, "process_resident_memory_bytes"))


def run(spec: LoadSpec, progress: Any = None) -> dict[str, Any]:
    """Run the load test of ``spec``; returns the figures."""
    say = progress or (lambda message: None)
    base = http_base(spec.url)
    rss_before = _server_rss(spec, _scrape(base))
    chosen: dict[str, Any] = {}
    tokens = player_tokens(spec) if spec.tables or spec.idle else []
    tables: list[str] = []
    owners: list[str] = []
    ctx = multiprocessing.get_context("spawn")
    procs, pipes = [], []
    try:
        if spec.tables:
            owners = create_tables(spec, tables, tokens[-1], chosen)
        lifted = " with the operator key (the per-address table limit and the bot think floor lifted)" \
            if spec.operator_key and tables else ""
        say(f"{len(tables)} tables created{lifted}")
        if tables and chosen.get("bot_think") != spec.think:
            say(f"the server's bots think {chosen.get('bot_think')} s, not {spec.think} s (its floor for tables "
                "of bots only, or that nobody owns)")
        with sigint_ignored():  # Ctrl-C interrupts this process only, which then ends the workers
            for plan in plans(spec, tables, tokens):
                parent, child = ctx.Pipe()
                proc = ctx.Process(target=process_main, args=(plan, child), daemon=True)
                proc.start()
                procs.append(proc)
                pipes.append(parent)
        ready = [_receive(p, "ready", 600) for p in pipes]
        opened = sum(r["connections"] for r in ready)
        say(f"{opened} connections open ({sum(r['failed'] for r in ready)} failed)")
        settle = _scrape(base)
        rss_connected = _server_rss(spec, settle)
        start = time.time() + spec.warmup
        end = start + spec.duration
        for p in pipes:
            p.send((start, end))
        time.sleep(max(0.0, start - time.time()))
        m0 = _scrape(base)
        time.sleep(max(0.0, end - time.time()))
        m1 = _scrape(base)
        results = [_receive(p, "result", 120 + spec.duration) for p in pipes]
    except BaseException:  # interrupted, or a worker failed: the others' figures are not wanted
        for proc in procs:
            proc.terminate()
        raise
    finally:
        for proc in procs:
            proc.join(30)
            if proc.is_alive():
                proc.kill()
        closed = _close(spec, tables, tokens + owners, say)
    out = combine(results, m0, m1, spec.duration)
    out["server_rss_bytes"] = _server_rss(spec, m1) or out["server_rss_bytes"]
    connections = out["connections"]
    out.update({
        "server_rss_start_bytes": rss_before, "server_rss_connected_bytes": rss_connected,
        "tables": len(tables), "players_per_table": spec.players, "spectators_per_table": spec.spectators,
        "seats": spec.seats, "game": spec.game, "think_s": spec.think, "workers": len(results),
        "bot_think_s": chosen.get("bot_think"), "operator_key": bool(spec.operator_key),
        "idle": spec.idle, "codec": spec.codec, "source_addresses": max(1, spec.addresses), "tables_closed": closed,
        "connect_failures": [f for r in ready for f in r["failures"]][:5],
    })
    if spec.idle and not tables:
        out["idle_bytes_per_connection"] = round((rss_connected - rss_before) / max(1, connections))
    return out


def _close(spec: LoadSpec, tables: list[str], tokens: list[str], say: Any) -> int:
    """Close the load's ``tables`` (the operator endpoint with the key, else
    their owners' ``close``, the owners among ``tokens``); how many were
    closed. A failure to close is said, never raised: the run's own outcome
    (its figures, or what interrupted it) is what the caller gets."""
    if not tables:
        return 0
    try:
        closed = close_tables(spec, tables) if spec.operator_key else close_own_tables(spec, tables, tokens)
    except Exception as exc:
        say(f"the tables could not be closed: {exc!r}")
        return 0
    if closed < len(tables):
        say(f"{len(tables) - closed} of the {len(tables)} tables could not be closed")
    return closed


def _receive(pipe: Any, kind: str, timeout: float) -> dict[str, Any]:
    if not pipe.poll(timeout):
        raise RuntimeError(f"a load worker did not report {kind!r} within {timeout:.0f} s")
    got, payload = pipe.recv()
    if got != kind:
        raise RuntimeError(f"a load worker sent {got!r} instead of {kind!r}")
    return payload


def combine(results: list[dict[str, Any]], m0: str, m1: str, duration: float) -> dict[str, Any]:
    """The figures of a run from the workers' results and the two scrapes of ``/metrics``.

    ``actions_per_s`` is the server's ``cardhall_actions_total`` over the window
    (players' and server bots' actions); without ``/metrics`` it is the acts
    the players sent. ``events_per_s``: events delivered to all connections.
    ``errors``: code -> count (error frames received, lost connections,
    connections that could not be opened); ``seq_gaps``: gaps plus
    reorderings (both also given apart); ``server_cores``: the server
    process's CPU seconds per second of the window (its ``/metrics``).
    """
    hist = LatencyHistogram()
    errors: dict[str, int] = {}
    for r in results:
        hist.merge(r["latency"])
        for code, n in r["errors"].items():
            errors[code] = errors.get(code, 0) + n
    window = max((r["window_s"] for r in results), default=duration) or duration
    events = sum(r["events"] for r in results)
    acts = sum(r["acts"] for r in results)
    server_actions = metric(m1, "cardhall_actions_total") - metric(m0, "cardhall_actions_total") if m1 else 0.0
    messages = metric(m1, "cardhall_ws_messages_sent_total") - metric(m0, "cardhall_ws_messages_sent_total")
    frames = metric(m1, "cardhall_frames_sent_total") - metric(m0, "cardhall_frames_sent_total")
    e0, e1 = labelled(m0, "cardhall_errors_total", "code"), labelled(m1, "cardhall_errors_total", "code")
    server_errors = {code: int(n - e0.get(code, 0.0)) for code, n in e1.items() if n - e0.get(code, 0.0) > 0}
    gaps = sum(r["gaps"] for r in results)
    reorders = sum(r["reorders"] for r in results)

    def ms(q: float) -> float:
        return round(hist.quantile(q) * 1000, 2)

    def server_ms(q: float) -> float | None:
        value = histogram_quantile(m0, m1, "cardhall_action_latency_seconds", q) if m1 else None
        return None if value is None else round(value * 1000, 2)

    return {
        "connections": sum(r["held"] for r in results),
        "connections_opened": sum(r["connections"] for r in results),
        "actions_per_s": round((server_actions if m1 else acts) / window, 1),
        "player_acts_per_s": round(acts / window, 1),
        "events_per_s": round(events / window, 1),
        "p50_ms": ms(0.50), "p95_ms": ms(0.95), "p99_ms": ms(0.99), "max_ms": ms(1.0),
        "errors": errors,
        "seq_gaps": gaps + reorders, "seq_gap_count": gaps, "seq_reorders": reorders,
        "server_rss_bytes": int(metric(m1, "process_resident_memory_bytes")),
        "server_errors": server_errors,
        "server_p50_ms": server_ms(0.50), "server_p99_ms": server_ms(0.99),
        "frames_per_message": round(frames / messages, 2) if messages else None,
        "server_cores": round((metric(m1, "process_cpu_seconds_total") - metric(m0, "process_cpu_seconds_total"))
                              / window, 2) if m1 else None,
        "duration_s": round(window, 2),
        "worker_cpu": [round(r["cpu_s"] / window, 2) for r in results],
        "latency_samples": hist.count,
        "samples_over_100ms": hist.over(0.1), "samples_over_1s": hist.over(1.0),
        "connect_retries": sum(r.get("connect_retries", 0) for r in results),
    }
