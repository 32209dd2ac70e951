"""``cardhall serve``: run the live service (in-memory store by default; needs nothing else).

    cardhall serve [--host 127.0.0.1] [--port 8000] [--log-level info]
                   [--allow-origin URL ...] [--operator-key KEY]
                   [--redis redis://host:6379/0 [--redis-prefix cardhall]]

The operator key may also come from ``CARDHALL_OPERATOR_KEY``, the Redis URL
from ``CARDHALL_REDIS_URL``. With Redis, tables, their events, hand histories
and players are checkpointed there and recovered on start (server/STORAGE.md).
SIGTERM stops the service gracefully (connections closed with 1001 so clients
reconnect).
"""

from __future__ import annotations

import argparse
import os
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``serve`` subcommand."""
    p = subparsers.add_parser("serve", help="run the live service (websocket /ws, lobby /api/tables)",
                              description="Run the cardhall service under uvicorn with an in-memory store.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="accept websockets only from this browser Origin (repeatable; default: any)")
    p.add_argument("--operator-key", default=os.environ.get("CARDHALL_OPERATOR_KEY"),
                   help="secret for /api/ops/... (default: $CARDHALL_OPERATOR_KEY; unset: operator endpoints off)")
    p.add_argument("--max-connections-per-ip", type=int, default=0, help="0: no limit")
    p.add_argument("--send-queue", type=int, default=2000, help="frames queued for a client before it is dropped")
    p.add_argument("--max-tables-per-player", type=int, default=20, help="open tables one player may own (default 20)")
    p.add_argument("--max-tables-per-address", type=int, default=0,
                   help="open tables created over HTTP without a player token, per client address (0: no limit)")
    p.add_argument("--max-frame", type=int, default=16 * 1024, help="largest client frame read, bytes (default 16384)")
    p.add_argument("--rate", type=float, default=50.0, help="frames per second a connection may send (default 50)")
    p.add_argument("--burst", type=float, default=100.0, help="frames a connection may send at once (default 100)")
    p.add_argument("--redis", metavar="URL", default=os.environ.get("CARDHALL_REDIS_URL") or None,
                   help="keep tables, events, hands and players in this Redis and recover them on start "
                        "(default: $CARDHALL_REDIS_URL; unset: in memory, nothing survives a restart)")
    p.add_argument("--redis-prefix", default="cardhall", help="prefix of every Redis key (one server per prefix)")
    p.add_argument("--redis-stream-bound", type=int, default=1024, metavar="N",
                   help="events kept per table in Redis for clients resuming with since (default 1024)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from cardhall.server.app import run
    from cardhall.server.config import Settings

    settings = Settings(
        host=args.host, port=args.port, log_level=args.log_level, allowed_origins=tuple(args.allow_origin),
        operator_key=args.operator_key or None, max_connections_per_ip=args.max_connections_per_ip,
        send_queue=args.send_queue, max_tables_per_player=args.max_tables_per_player,
        max_tables_per_address=args.max_tables_per_address, max_frame=args.max_frame, rate=args.rate,
        burst=args.burst, redis_url=args.redis, redis_prefix=args.redis_prefix,
        stream_bound=args.redis_stream_bound,
    )
    run(settings)
    return 0
