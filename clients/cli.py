"""The ``cardhall`` command.

Each subcommand lives in its own module under ``cardhall.clients.commands`` exposing
``register(subparsers)``, which adds its parser and sets ``func`` to a callable
``func(args) -> int`` (the exit status). Modules are listed in ``COMMANDS``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
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


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser with every available subcommand; given ``argv``
    whose first word names a subcommand (its module's last name, as each
    module registers it), the parser of that subcommand alone, so that a
    command imports only what it needs (``cardhall phh replay`` starts fast)."""
    parser = argparse.ArgumentParser(prog="cardhall", description="cardhall: live card games over websockets")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    names = COMMANDS
    if argv:
        chosen = [m for m in COMMANDS if m.rsplit(".", 1)[1] == argv[0]]
        names = chosen or COMMANDS
    register_modules(sub, names)
    return parser


def register_modules(subparsers: Any, names: list[str]) -> None:
    """Call ``register(subparsers)`` of each module in ``names``, in order."""
    for name in names:
        importlib.import_module(name).register(subparsers)


#: errors that say something outside the command refused (a server or Redis that does not answer,
#: a URL it cannot use, a file, a port): ``(module, class name)``, matched against the exception's
#: classes so that none of these libraries is imported here (an error of one that was never imported
#: cannot occur).
OUTSIDE_ERRORS = (
    ("builtins", "OSError"),
    ("cardhall.clients.client", "ServerError"),
    ("httpx", "TransportError"),
    ("httpx", "InvalidURL"),
    ("websockets.exceptions", "InvalidURI"),
    ("websockets.exceptions", "InvalidHandshake"),
    ("websockets.exceptions", "ConnectionClosed"),
    ("redis.exceptions", "ConnectionError"),
    ("redis.exceptions", "TimeoutError"),
    ("redis.exceptions", "AuthenticationError"),
)

#: set (to anything but empty or 0) to get the traceback of an outside error as well
TRACEBACK_ENV = "CARDHALL_TRACEBACK"


def outside_error(exc: BaseException) -> BaseException | None:
    """``exc`` itself when it is one of :data:`OUTSIDE_ERRORS`, the first such leaf
    of an exception group made only of them, else None."""
    if isinstance(exc, BaseExceptionGroup):
        leaves = [outside_error(e) for e in exc.exceptions]
        return leaves[0] if leaves and all(leaves) else None
    names = {(cls.__module__, cls.__qualname__) for cls in type(exc).__mro__}
    return exc if names & set(OUTSIDE_ERRORS) else None


def describe(exc: BaseException) -> str:
    """One line for an outside error: its message, and the URL an HTTP request went to
    (httpx's messages leave it out)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    try:
        url = exc.request.url  # type: ignore[attr-defined]  # httpx errors; raises RuntimeError when unset
    except (AttributeError, RuntimeError):
        return text
    return f"{text} ({url})"


def command_name(args: argparse.Namespace) -> str:
    """``"cardhall phh replay"``: the command and its nested subcommands (each group of
    subcommands stores the name under a ``dest`` ending in ``command``)."""
    words = [str(v) for k, v in vars(args).items() if k.endswith("command") and isinstance(v, str)]
    return " ".join(["cardhall", *words])


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the subcommand; returns its exit status.

    How a command that cannot go on ends, the same for every subcommand:

    * Ctrl-C (KeyboardInterrupt) anywhere: ``cardhall COMMAND: interrupted`` on
      stderr and 130 (128 + SIGINT, as shells report it). (``serve`` handles
      SIGINT and SIGTERM itself: a graceful shutdown and 0.)
    * an error from outside (:data:`OUTSIDE_ERRORS`: a server that does not
      answer, a websocket URL that is not ``ws://``, Redis down, a port in
      use): ``cardhall COMMAND: MESSAGE`` on stderr and 1.

    Neither prints a traceback unless ``$CARDHALL_TRACEBACK`` is set; any other
    exception is a bug and keeps its traceback."""
    command = "cardhall"
    try:
        words = sys.argv[1:] if argv is None else argv
        args = build_parser(words).parse_args(argv)
        command = command_name(args)
        status = args.func(args)
    except KeyboardInterrupt:
        if _want_traceback():
            raise
        # the command ends now: a further Ctrl-C (a key held down, a signal to the whole process
        # group) must not turn this orderly 130 into a death by SIGINT while the interpreter exits
        with contextlib.suppress(ValueError):  # main() called outside the main thread: nothing to change
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        print(f"{command}: interrupted", file=sys.stderr)
        return 130
    except BaseException as exc:
        outside = outside_error(exc)
        if outside is None or _want_traceback():
            raise
        print(f"{command}: {describe(outside)}", file=sys.stderr)
        return 1
    return int(status or 0)


def _want_traceback() -> bool:
    return os.environ.get(TRACEBACK_ENV, "") not in ("", "0")


if __name__ == "__main__":
    sys.exit(main())
