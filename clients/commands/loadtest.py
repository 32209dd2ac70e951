"""``cardhall loadtest``: put a running server under load and measure it.

    cardhall loadtest --server ws://127.0.0.1:8000/ws --tables 500 --players 2 --spectators 2 \\
        --think 0.2 --duration 30 --operator-key KEY [--workers 2] [--source-addresses 20] [--json]

Creates ``--tables`` tables of ``--seats`` seats (``--game``, server bots in
the seats the load's ``--players`` do not take), then, in ``--workers``
processes of its own, plays those seats through the public protocol
(:mod:`cardhall.clients.load`: the engines' strategies, at full speed or after
``--think`` seconds, which is also the server bots' think time) and watches
each table with ``--spectators`` connections; ``--idle N`` adds connections
that only say ``hello``. After ``--warmup`` it measures for ``--duration``
seconds and prints: connections held, actions/s (the server's counter),
events delivered/s, action-to-event latency p50/p95/p99, errors by code,
``seq`` gaps and reorderings (must be 0), and the server's memory (its
``/metrics``, or ``/proc`` with ``--server-pid``). ``--json`` prints one
object with ``connections``, ``actions_per_s``, ``events_per_s``, ``p50_ms``,
``p95_ms``, ``p99_ms``, ``errors``, ``seq_gaps``, ``server_rss_bytes`` and more.

Memory per idle connection: ``--tables 0 --idle 2000`` prints
``idle_bytes_per_connection`` (the server's RSS growth over the connections opened).

A server's per-address connection limit (``cardhall serve
--max-connections-per-ip``, default 64) is met by spreading the connections
over ``--source-addresses`` loopback addresses (127.0.0.2, 127.0.0.3, ...; a
server on this host only). Without the option, for a server on this host the
load picks enough addresses for at most 48 connections each (``--tables 100``
with 2 players and 2 spectators each, 400 connections: 9 addresses) and says
so on stderr; for another host it uses one and warns when that passes the
default limit. Players name the turn they answer, so however fast the
tables play their acts are never rate-limited (SPEC "Limits"); a refused
request is sent again after a short wait. When it ends the test closes every
table it created, so it leaves nothing in the lobby: with ``--operator-key``
through the operator endpoint, else each by its owner's ``close`` (SPEC "The
host's controls"; the tables are owned by the load's watcher player, and by
another one past the server's per-player table limit); ``tables_closed``
counts them.

The defaults (10 tables, 2 players and 2 spectators each, think 0.5 s) stay
within a public server's default limits (deploy/README.md, "Limits"): the
connections say ``hello`` as ``--players`` + 1 players in all, not one each.
Past 20 tables from one address, or server bots faster than the server's
floor (0.5 s) at bots-only tables (``--players 0``), needs ``--operator-key``
(the tables are then created with it, which lifts both; the test says so) or
a server started with ``--max-tables-per-address 0 --bot-think-floor 0``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``loadtest`` subcommand."""
    p = subparsers.add_parser("loadtest", help="put a running server under load: throughput, latency, errors, memory",
                              description=__doc__.split("\n\n")[2], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", required=True, metavar="URL", help="the server's websocket URL (ws://host:port/ws)")
    p.add_argument("--tables", type=int, default=10,
                   help="tables to create (default 10; past the server's per-address limit, 20, needs --operator-key)")
    p.add_argument("--seats", type=int, default=6, help="seats per table (default 6)")
    p.add_argument("--players", type=int, default=2,
                   help="seats per table played by the load generator over websockets (default 2); the rest are server bots")
    p.add_argument("--spectators", type=int, default=2, help="spectator connections per table (default 2)")
    p.add_argument("--idle", type=int, default=0, help="extra connections that only say hello (default 0)")
    p.add_argument("--game", default="no_limit_holdem", help="game (default no_limit_holdem)")
    p.add_argument("--strategy", default="random", help="the load players' strategy (default random)")
    p.add_argument("--bot", default="random", help="the server bots' strategy (default random)")
    p.add_argument("--think", type=float, default=0.5,
                   help="mean seconds players and server bots think before acting (default 0.5; 0: full speed; "
                        "server bots of bots-only tables below the server's floor need --operator-key)")
    p.add_argument("--warmup", type=float, default=3.0, help="seconds after every connection is open before measuring")
    p.add_argument("--duration", type=float, default=10.0, help="seconds measured (default 10)")
    p.add_argument("--workers", type=int, default=1, help="load processes (default 1)")
    p.add_argument("--codec", choices=["msgpack", "json"], default="msgpack", help="subprotocol (default msgpack)")
    p.add_argument("--source-addresses", type=int, default=None, metavar="N",
                   help="spread connections over N loopback source addresses (1: no binding; default: for a server "
                        "on this host, enough for at most 48 connections each, else 1)")
    p.add_argument("--operator-key", default=os.environ.get("CARDHALL_OPERATOR_KEY"),
                   help="create the tables with the operator key, lifting the per-address table limit and the bot "
                        "think floor, and close them through the operator endpoint at the end (without it their owner "
                        "closes them; default $CARDHALL_OPERATOR_KEY)")
    p.add_argument("--server-pid", type=int, default=None, help="read the server's RSS from /proc (a local server)")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from cardhall.clients.load.run import LoadSpec, choose_addresses, connections_of, run

    if not 0 <= args.players <= args.seats:
        raise SystemExit("--players must be between 0 and --seats")
    addresses = args.source_addresses
    if addresses is None:
        wanted = LoadSpec(url=args.server, tables=args.tables, players=args.players, spectators=args.spectators,
                          idle=args.idle)
        addresses, said = choose_addresses(args.server, connections_of(wanted))
        print(f"loadtest: {said}", file=sys.stderr)
    spec = LoadSpec(
        url=args.server, tables=args.tables, seats=args.seats, players=args.players, spectators=args.spectators,
        idle=args.idle, game=args.game, strategy=args.strategy, bot=args.bot, think=args.think,
        warmup=args.warmup, duration=args.duration, workers=max(1, args.workers), codec=args.codec,
        addresses=addresses, operator_key=args.operator_key, server_pid=args.server_pid,
    )
    out = run(spec, progress=None if args.json else lambda m: print(m, file=sys.stderr))
    if args.json:
        print(json.dumps(out))
    else:
        print(report(out))
    return 0


def report(out: dict[str, Any]) -> str:
    """The figures as text."""
    errors = ", ".join(f"{code} {n}" for code, n in sorted(out["errors"].items())) or "none"
    lines = [
        f"{out['tables']} tables of {out['game']} ({out['seats']} seats: {out['players_per_table']} load players, "
        f"{out['spectators_per_table']} spectators each), {out['idle']} idle, think {out['think_s']} s "
        f"(server bots {out.get('bot_think_s')} s), {out['workers']} load processes, {out['duration_s']} s measured"
        + (" [operator key: per-address table limit and bot think floor lifted]" if out.get("operator_key") else ""),
        f"  connections held   {out['connections']} of {out['connections_opened']} opened",
        f"  actions/s          {out['actions_per_s']}   (load players' acts/s {out['player_acts_per_s']})",
        f"  events delivered/s {out['events_per_s']}   ({out['frames_per_message']} frames per websocket message)",
        f"  latency ms         p50 {out['p50_ms']}  p95 {out['p95_ms']}  p99 {out['p99_ms']}  max {out['max_ms']}"
        f"   (server side, bucket bounds: p50 <= {out['server_p50_ms']}  p99 <= {out['server_p99_ms']})",
        f"  errors             {errors}",
        f"  seq gaps           {out['seq_gap_count']}  reorderings {out['seq_reorders']}",
        f"  server RSS         {out['server_rss_bytes'] / 2**20:.1f} MiB (before the test "
        f"{out['server_rss_start_bytes'] / 2**20:.1f} MiB)",
        f"  load processes' CPU {out['worker_cpu']} (fraction of a core each)",
    ]
    if "idle_bytes_per_connection" in out:
        lines.append(f"  per idle connection {out['idle_bytes_per_connection'] / 1024:.1f} KiB")
    return "\n".join(lines)
