"""``cardhall play``: the terminal client (``clients/tui/app.py``).

    cardhall play [--server ws://127.0.0.1:8000/ws] [--name NAME] [--fresh] [--json]

It keeps who you are per server (the player's token, name and tables) in
``identity.json`` in the user's config folder (``$XDG_CONFIG_HOME/cardhall`` on
Linux, :mod:`cardhall.clients.tui.identity`): started again, it is the same
player and the lobby offers to return to its seats; ``--fresh`` starts a new player.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``play`` subcommand."""
    p = subparsers.add_parser("play", help="play or watch in the terminal (lobby, tables, keyboard actions)",
                              description="The terminal client: lobby, create/join/watch tables, play by keys. "
                                          "It remembers who you are on each server (in the user's config folder) "
                                          "and returns to your seats when started again.")
    p.add_argument("--server", default="ws://127.0.0.1:8000/ws", help="websocket URL (default ws://127.0.0.1:8000/ws)")
    p.add_argument("--name", default=None,
                   help="your name at the tables (default: the name kept for this server, else 'player')")
    p.add_argument("--fresh", action="store_true",
                   help="forget the player kept for this server and start as a new player")
    p.add_argument("--json", action="store_true", help="use the JSON subprotocol (default msgpack)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Run the terminal client; its exit status (2: the server refused the name, 1: unreachable)."""
    from cardhall.clients.tui.app import CardhallApp
    from cardhall.clients.tui.identity import IdentityStore

    app = CardhallApp(args.server, args.name, "json" if args.json else "msgpack", identity=IdentityStore(),
                      fresh=getattr(args, "fresh", False))  # a Namespace built without --fresh: keep
    app.run()
    return app.return_code or 0
