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
from typing import Any


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """Start processes in this block: they never see a Ctrl-C, and this
    process sees one that comes meanwhile as the block ends.

    SIGINT is blocked for the block, and processes started inside it inherit
    the blocked signal through ``exec`` (POSIX keeps the signal mask), so a
    Ctrl-C cannot reach them before :func:`ignore_sigint` (their first step)
    ignores it. Nor is it lost for this process (it was when the block
    ignored SIGINT: ``cardhall bench server`` interrupted while it started its
    load process ran on for its whole ``--duration``): kept pending, or noted
    when another thread took it, it reaches this process's own handler (a
    ``KeyboardInterrupt``) when the block ends, even if the block raised.
    multiprocessing's resource tracker, started by the first process that
    ``spawn`` starts, unblocks SIGINT as it starts: it is started before the
    block. In a thread other than the main one, where signal handlers cannot
    be changed, the block runs unchanged."""
    import multiprocessing.resource_tracker

    came: list[int] = []

    def note(signum: int, frame: Any) -> None:
        came.append(signum)

    try:
        previous = signal.signal(signal.SIGINT, note)
    except ValueError:  # not the main thread
        yield
        return
    mask = None
    try:
        multiprocessing.resource_tracker.ensure_running()
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        yield
    finally:
        signal.signal(signal.SIGINT, previous)  # while still blocked: a pending SIGINT goes to `previous`
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if came:
            signal.raise_signal(signal.SIGINT)


def ignore_sigint() -> None:
    """Ignore SIGINT from now on (a worker process's first step): a Ctrl-C
    kept pending while it started (:func:`sigint_ignored`) is dropped, and
    the signal is unblocked for the processes it starts."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
