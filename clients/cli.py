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
    """Call ``register(subparsers)`` of each module in ``names`` that exists
    (a module not written yet is left out; any other import error is raised)."""
    for name in names:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # not written yet
                continue
            raise
        module.register(subparsers)


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the subcommand; returns its exit status."""
    args = build_parser().parse_args(argv)
    status = args.func(args)
    return int(status or 0)


if __name__ == "__main__":
    sys.exit(main())
