"""Ctrl-C in the ``cardhall`` commands: child processes that leave it to their
parent, and event loops that never lose it.

A terminal's Ctrl-C sends SIGINT to the whole foreground process group: the
``cardhall`` command and every process it started. The load generator's
worker processes (``multiprocessing``) would each die on a
``KeyboardInterrupt`` traceback of their own; instead they ignore SIGINT, and
the parent, which reports the interruption in one line
(:func:`cardhall.clients.cli.main`), ends them (:func:`sigint_ignored`,
:func:`ignore_sigint`). An event loop run by :func:`run_interruptible` ends
with that ``KeyboardInterrupt`` on a Ctrl-C, whatever its tasks do with the
cancellation.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

#: seconds an interrupted command's work gets to end after each cancellation before it is cancelled
#: again (its cleanup: a websocket's closing handshake; or a cancellation swallowed on the way)
RECANCEL_AFTER = 3.0


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


def run_interruptible(func: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> T:
    """``asyncio.run(func(*args))`` for a command: its result, or KeyboardInterrupt
    (:func:`cardhall.clients.cli.main` makes it the exit status 130) once a Ctrl-C
    came, whatever moment it lands and whatever the coroutine does with it.

    As in ``asyncio.run``, the first Ctrl-C cancels the work so that its
    ``finally`` blocks and ``async with`` exits run, and a second one raises
    KeyboardInterrupt at once. Unlike it:

    * a cancellation swallowed on the way does not lose the Ctrl-C. Python
      3.11's ``asyncio.wait_for`` returns the awaited result when it completes
      in the loop step that delivers the cancellation, and ``asyncio.run`` then
      returns the work's result as if nothing had happened (``cardhall bot``
      would play on, and end with 0 once its match is over). Here the work is
      cancelled again every :data:`RECANCEL_AFTER` seconds until it ends;
    * whenever a Ctrl-C came, the outcome is KeyboardInterrupt, even if the work
      returned or raised something else meanwhile (its exception is retrieved,
      so asyncio logs nothing about it).

    The signal handler only notes the Ctrl-C and wakes the loop (as
    ``asyncio.run``'s does): the cancelling is a callback of the loop. The
    coroutine is made inside the loop, once the handler is in place: a Ctrl-C
    before that is a KeyboardInterrupt raised here, with no coroutine left
    unawaited (Python would warn about it on stderr). Where this process cannot
    take SIGINT (not the main thread; SIGINT not at Python's default handler,
    e.g. ignored by a background start), this is ``asyncio.run``."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        return asyncio.run(func(*args))
    came: list[int] = []
    interrupted = asyncio.Event()
    with asyncio.Runner() as runner:
        loop = runner.get_loop()

        def on_sigint(signum: int, frame: Any) -> None:
            came.append(signum)
            if len(came) > 1:
                raise KeyboardInterrupt  # a second Ctrl-C: stop now, leaving the cleanup to asyncio's shutdown
            loop.call_soon_threadsafe(interrupted.set)

        signal.signal(signal.SIGINT, on_sigint)  # asyncio.Runner sees it is not the default: it adds none of its own
        try:
            work = runner.run(_until_done_or_interrupted(func, args, interrupted))
        finally:
            # back to Python's default handler while the loop is still open: a Ctrl-C pending now is
            # noted by on_sigint first (signal.signal runs pending handlers), one from now on raises
            # KeyboardInterrupt where it lands (asyncio's shutdown, the command's last lines)
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if came:
        if not work.cancelled():
            work.exception()  # retrieved: the Ctrl-C is the outcome
        raise KeyboardInterrupt
    return work.result()


async def _until_done_or_interrupted(func: Callable[..., Coroutine[Any, Any, T]], args: tuple[Any, ...],
                                     interrupted: asyncio.Event) -> asyncio.Task[T]:
    """Run ``func(*args)`` as a task until it ends; once ``interrupted`` is set,
    cancel it every :data:`RECANCEL_AFTER` seconds until it ends. Returns the
    ended task (its result, exception or cancellation is the caller's)."""
    work = asyncio.ensure_future(func(*args))
    ctrl_c = asyncio.ensure_future(interrupted.wait())
    try:
        await asyncio.wait({work, ctrl_c}, return_when=asyncio.FIRST_COMPLETED)
        while not work.done():
            work.cancel()
            await asyncio.wait({work}, timeout=RECANCEL_AFTER)
    finally:
        ctrl_c.cancel()
    return work
