"""The ``cardhall`` command.

Each subcommand lives in its own module under ``cardhall.clients.commands`` exposing
``register(subparsers)``, which adds its parser and sets ``func`` to a callable
``func(args) -> int`` (the exit status). Modules are listed in ``COMMANDS``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

#: subcommand modules, in the order ``cardhall --help`` lists them.
COMMANDS = [
    "cardhall.clients.commands.phh",
    "cardhall.clients.commands.simulate",
    "cardhall.clients.commands.bench",
    "cardhall.clients.commands.serve",
    "cardhall.clients.commands.play",
    "cardhall.clients.commands.bot",
    "cardhall.clients.commands.loadtest",
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(prog="cardhall", description="cardhall: live card games over websockets")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    register_modules(sub, COMMANDS)
    return parser


def register_modules(subparsers: Any, names: list[str]) -> None:
    """Call ``register(subparsers)`` of each module in ``names``, in order."""
    for name in names:
        importlib.import_module(name).register(subparsers)


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the subcommand; returns its exit status.

    Ctrl-C (KeyboardInterrupt) anywhere prints ``cardhall COMMAND:
    interrupted`` on stderr and returns 130 (128 + SIGINT, as shells report
    it), never a traceback."""
    command = "cardhall"
    try:
        args = build_parser().parse_args(argv)
        command = f"cardhall {args.command}"
        status = args.func(args)
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return 130
    return int(status or 0)


if __name__ == "__main__":
    sys.exit(main())
