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
from collections.abc import Iterator
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
      stderr and 130 (128 + SIGINT, as shells report it), never a death by
      SIGINT (:func:`_ignore_further_interrupts`, :func:`_clear_unhandled_mark`).
      A Ctrl-C while the command's modules are imported and its arguments
      parsed waits until its name is known (:func:`_named_first`). An event
      loop run by :func:`cardhall.clients.load.interrupts.run_interruptible`
      (``cardhall bot``'s) ends with KeyboardInterrupt whatever its tasks do
      with the cancellation. (``serve`` handles SIGINT and SIGTERM itself: a
      graceful shutdown and 0.)
    * an error from outside (:data:`OUTSIDE_ERRORS`: a server that does not
      answer, a websocket URL that is not ``ws://``, Redis down, a port in
      use): ``cardhall COMMAND: MESSAGE`` on stderr and 1.

    Neither prints a traceback unless ``$CARDHALL_TRACEBACK`` is set; any other
    exception is a bug and keeps its traceback. Called without ``argv`` (the
    process is this command), SIGINT is ignored once the status is decided: a
    Ctrl-C as the process exits changes nothing (it would raise where the
    interpreter is exiting: a traceback, or a death by SIGINT)."""
    command = "cardhall"
    try:
        words = sys.argv[1:] if argv is None else argv
        with _named_first():
            args = build_parser(words).parse_args(argv)
            command = command_name(args)
        status = args.func(args)
    except KeyboardInterrupt:
        if _want_traceback():
            raise
        _ignore_further_interrupts()
        print(f"{command}: interrupted", file=sys.stderr)
        return 130
    except BaseException as exc:
        outside = outside_error(exc)
        if outside is None or _want_traceback():
            raise
        print(f"{command}: {describe(outside)}", file=sys.stderr)
        return 1
    finally:
        if argv is None:  # this process is the command (the console script, ``python -m``): its status is
            _ignore_further_interrupts()  # decided, and a Ctrl-C from now on would only turn it into a traceback
        _clear_unhandled_mark()
    return int(status or 0)


@contextlib.contextmanager
def _named_first() -> Iterator[None]:
    """Hold a Ctrl-C back while the block runs (the subcommand's modules imported,
    its arguments parsed: under a second on a busy machine), then raise it as
    KeyboardInterrupt when the block ends, also when the block raised (``--help``,
    a usage error): the line that reports it names the command, not just
    ``cardhall``. Unchanged where SIGINT is not at Python's default handler
    (ignored by a background start; a caller's own) or cannot be changed (not
    the main thread)."""
    came: list[int] = []

    def note(signum: int, frame: Any) -> None:
        came.append(signum)

    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    try:
        signal.signal(signal.SIGINT, note)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a Ctrl-C pending now is noted first
        if came:
            raise KeyboardInterrupt


def _ignore_further_interrupts() -> None:
    """Ignore SIGINT from now on, once a KeyboardInterrupt was caught: another
    Ctrl-C (a key held down, a second signal to the process group) raised while
    the interpreter exits would kill it by SIGINT (status -2) instead of the
    orderly 130."""
    while True:
        try:
            with contextlib.suppress(ValueError):  # main() called outside the main thread: nothing to change
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            return
        except KeyboardInterrupt:  # a second Ctrl-C, pending as the handler changed: ignored as well
            continue


def _clear_unhandled_mark() -> None:
    """Forget CPython's note of an unhandled KeyboardInterrupt when :func:`main`
    ends: it handled every KeyboardInterrupt it did not raise again.

    CPython 3.11 notes a KeyboardInterrupt as unhandled when it leaves code that
    ``exec``/``eval`` of a string runs (Python/pythonrun.c, ``run_eval_code_obj``),
    even if it is caught later; after ``python -m``, ``Py_RunMain``
    (Modules/main.c) then ends the process with ``exit_sigint()``: status -2
    whatever ``sys.exit`` said (a script file, like the installed ``cardhall``,
    exits through ``Py_Exit`` and is spared). A Ctrl-C lands in such code when
    it comes while a module that defines a dataclass or a namedtuple is
    imported (their methods are made by ``exec`` of a string), as ``cardhall
    bench engine`` does right after printing its table's header. Each string
    ``exec`` clears the note as it starts: an empty one clears it. A Python that
    notes only a KeyboardInterrupt nothing caught has nothing to clear. One that
    leaves :func:`main` is noted by ``python -m`` itself, after this."""
    exec("", {})


def _want_traceback() -> bool:
    return os.environ.get(TRACEBACK_ENV, "") not in ("", "0")


if __name__ == "__main__":
    sys.exit(main())
