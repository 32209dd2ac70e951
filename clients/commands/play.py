"""``cardhall play``: the terminal client (``clients/tui/app.py``).

    cardhall play [--server ws://127.0.0.1:8000/ws] [--name NAME] [--json]
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``play`` subcommand."""
    p = subparsers.add_parser("play", help="play or watch in the terminal (lobby, tables, keyboard actions)",
                              description="The terminal client: lobby, create/join/watch tables, play by keys.")
    p.add_argument("--server", default="ws://127.0.0.1:8000/ws", help="websocket URL (default ws://127.0.0.1:8000/ws)")
    p.add_argument("--name", default="player", help="your name at the tables")
    p.add_argument("--json", action="store_true", help="use the JSON subprotocol (default msgpack)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Run the terminal client; its exit status (2: the server refused the name, 1: unreachable)."""
    from cardhall.clients.tui.app import CardhallApp

    app = CardhallApp(args.server, args.name, "json" if args.json else "msgpack")
    app.run()
    return app.return_code or 0
