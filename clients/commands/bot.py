"""``cardhall bot``: play a seat at a table through the public protocol.

    cardhall bot --server ws://127.0.0.1:8000/ws --table t_0123abcd [--seat N]
                 [--strategy NAME] [--name NAME] [--seed TEXT] [--rematches N] [--json]

The example third-party client (``clients/bots.py`` is the template to copy):
it connects like any client (``--json`` for the JSON subprotocol, msgpack by
default), joins as a player, and plays the seat with one of the engines'
strategies (``random`` or the game's own: ``equity``, ``threshold``,
``heuristic``) until the match ends, reconnecting by itself if the connection
drops. Exit status 0 when the match ended, 1 on an error.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``bot`` subcommand."""
    p = subparsers.add_parser("bot", help="play a seat at a table with a bot strategy (protocol client)",
                              description="Join a table as a player and play it with one of the engines' "
                                          "strategies, through the public protocol only.")
    p.add_argument("--server", default="ws://127.0.0.1:8000/ws", help="websocket URL (default ws://127.0.0.1:8000/ws)")
    p.add_argument("--table", required=True, help="table id (see GET /api/tables)")
    p.add_argument("--seat", type=int, default=None, help="seat wanted (default: the first free one)")
    p.add_argument("--strategy", default=None, help="random, or the game's own (default: the game's default bot)")
    p.add_argument("--name", default="bot", help="name shown at the table")
    p.add_argument("--seed", default=None, help="client seed for the match (G-2, at most 64 characters)")
    p.add_argument("--rematches", type=int, default=0, help="matches to play after the first")
    p.add_argument("--json", action="store_true", help="use the JSON subprotocol (default msgpack)")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=main)


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Play as ``args`` say; returns each match's result."""
    from cardhall.clients.bots import BotPlayer
    from cardhall.clients.client import Client

    async with Client(args.server, codec="json" if args.json else "msgpack", reconnect=True) as client:
        await client.hello(args.name)
        player = BotPlayer(client, args.table, args.strategy, seat=args.seat, seed=args.seed,
                           rematches=args.rematches)
        results = await player.play()
        print(f"seat {player.seat} ({player.game}, {player.strategy}): {player.actions} actions; "
              + "; ".join(f"match {i + 1}: winners {r.get('winners')}" for i, r in enumerate(results)))
        return results


def main(args: argparse.Namespace) -> int:
    """Play as ``args`` say; the exit status (0: the matches ended; 1: the server
    refused or could not be reached, said in one line). A Ctrl-C raises
    KeyboardInterrupt whenever it lands (:func:`~cardhall.clients.load.interrupts.run_interruptible`),
    which :func:`cardhall.clients.cli.main` reports."""
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    from cardhall.clients.client import ServerError
    from cardhall.clients.load.interrupts import run_interruptible

    try:
        run_interruptible(run, args)
    except (ServerError, ConnectionError, OSError, ValueError) as exc:
        print(f"cardhall bot: {exc}", file=sys.stderr)
        return 1
    return 0
