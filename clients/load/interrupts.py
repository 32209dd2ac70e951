"""Child processes that leave Ctrl-C to their parent.

A terminal's Ctrl-C sends SIGINT to the whole foreground process group: the
``cardhall`` command and every process it started. The load generator's
worker processes (``multiprocessing``) would each die on a
``KeyboardInterrupt`` traceback of their own; instead they ignore SIGINT, and
the parent, which reports the interruption in one line
(:func:`cardhall.clients.cli.main`), ends them.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT in this process for the block, then restore the handler.

    Processes started inside the block inherit the ignored signal through
    ``exec`` (POSIX keeps ignored dispositions, and Python leaves an ignored
    SIGINT ignored at start-up), so they are ignoring it from their first
    instruction on. A Ctrl-C that arrives while the block runs is lost (it is
    short: it only starts processes). In a thread other than the main one,
    where signal handlers cannot be changed, the block runs unchanged."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def ignore_sigint() -> None:
    """Ignore SIGINT from now on (a worker process's first step, for start
    methods or platforms where it was not inherited)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
