"""``cardhall serve --workers N``: N nodes on one machine sharing one port.

One process uses one core (every table of a node shares its event loop), so
to use a machine's cores ``--workers N`` runs N nodes there, the way
uvicorn's and gunicorn's ``--workers`` do: this process, the supervisor,
binds and listens on ``host:port`` (port 0: a free one, logged) with one
socket per child, all of them ``SO_REUSEPORT`` on the same port, then
starts N children, each a complete node (its own event loop, hall, Redis
connections and node id) accepting connections on its inherited socket; the
kernel spreads new connections over the sockets (by a hash of the client's
address and port), so every node gets its share. (With one shared socket,
the child that happens to be awake takes nearly every connection.) Where
``SO_REUSEPORT`` is missing, the children share one socket.
The nodes share their tables through Redis (they form one cluster with any
other node on the same Redis and key prefix), which is why N > 1 needs
``--redis``.

Children. Each is ``python -m cardhall.server.workers --listen-fd L
--control-fd C --node-id ID`` running :func:`cardhall.server.app.run` on the
socket ``L``; its settings come pickled on its stdin (never on its command
line, where ``ps`` would show the operator key). Node ``i`` (1..N) is named
``<node_id or the machine's host name>-w<i>``, the same across restarts, so a
restarted node takes its own tables back at once. ``C`` is one end of a
socket pair per child: the child writes one byte on it once it serves (the
supervisor logs it ready; a child that dies before that failed to start),
and reads end-of-file on it when the supervisor is gone (killed with
SIGKILL, say): it then stops gracefully rather than serve orphaned.

Restarts. A child that exits while the supervisor is not stopping (a crash,
the OOM killer, an operator's ``kill``) is logged with its status and started
again after a backoff: 0.5 s, doubling with each further death of that node
within 30 s of its start, up to 10 s. When one node fails to start
(:data:`MAX_START_FAILURES` deaths in a row before it served) the
supervisor stops the others and exits with status 1: the settings, the
environment or the code are broken, and restarting would not mend them.

Stopping. On SIGTERM or SIGINT the supervisor sends SIGTERM to every child
(each stops as one node does: no new connections, tables commit, websockets
closed with 1001) and waits for them up to ``2 * shutdown_grace + 10``
seconds, then kills the rest with SIGKILL; a second SIGTERM or SIGINT kills
them at once. Children get SIGTERM even on SIGINT: a Ctrl-C in a terminal
has already sent them SIGINT, and a second SIGINT would make uvicorn skip its
graceful shutdown. Exit status: 0 when every child stopped by itself, 1 when
one had to be killed, failed to start, or the socket could not be bound.

Why not ``uvicorn.supervisors.Multiprocess``: it starts every child from one
``uvicorn.Config`` (no node id per child) with uvicorn's ``Server`` (not
:class:`cardhall.server.app.CardhallServer`, whose shutdown closes websockets
with 1001 first), restarts a dead child at once with no backoff, waits for
children without a limit when stopping, and starts them through
multiprocessing's ``spawn`` (which runs the ``__main__`` module again in each
child and adds a resource-tracker process).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from cardhall.server.config import Settings

log = logging.getLogger("cardhall.workers")

#: deaths in a row of one node before it served, after which the supervisor gives up
MAX_START_FAILURES = 3
#: backoff before restarting a dead node: the first delay and the largest, seconds
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 10.0
#: a node that lived this long (seconds) before dying is restarted after the first delay again
STABLE_AFTER = 30.0
#: the listening socket's backlog (uvicorn's default): connections wait there while no child accepts
BACKLOG = 2048
#: the byte a child writes on its control socket once it serves
READY = b"R"


def node_ids(settings: Settings, workers: int) -> list[str]:
    """The node ids of ``workers`` children: ``<settings.node_id or host name>-w1`` .. ``-wN``."""
    base = settings.node_id or socket.gethostname()
    return [f"{base}-w{i}" for i in range(1, workers + 1)]


def listen(host: str, port: int, count: int = 1) -> list[socket.socket]:
    """``count`` TCP sockets bound to ``host:port`` (port 0: a free one, the
    same for all) and listening, with ``SO_REUSEPORT`` when there are several
    (one socket shared by all where the platform lacks it); IPv6 when ``host``
    has a colon (IPv6 only, as uvicorn binds it). Raises ``OSError`` when they
    cannot be bound."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    reuse = count > 1 and hasattr(socket, "SO_REUSEPORT")
    first = socket.create_server((host, port), family=family, backlog=BACKLOG, reuse_port=reuse)
    if not reuse:
        return [first] * count
    port = first.getsockname()[1]
    return [first] + [socket.create_server((host, port), family=family, backlog=BACKLOG, reuse_port=True)
                      for _ in range(count - 1)]


def describe(status: int) -> str:
    """A child's exit status in words: ``exited with status 1``, ``was killed by SIGKILL``."""
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"was killed by {name}"
    return f"exited with status {status}"


@dataclasses.dataclass
class Worker:
    """One child slot: its node id, and the process now in it (None between a death and its restart)."""

    slot: int
    node_id: str
    proc: subprocess.Popen[bytes] | None = None
    control: socket.socket | None = None
    started_at: float = 0.0
    ready: bool = False
    #: deaths in a row before serving
    start_failures: int = 0
    #: deaths in a row within STABLE_AFTER of their start (the backoff's exponent)
    quick_deaths: int = 0
    restart_at: float = 0.0


class Supervisor:
    """Runs ``workers`` children (nodes) of ``settings`` on one listening socket; see the module docstring.

    :meth:`run` blocks until a stop signal or a node that fails to start, and
    returns the exit status (0 or 1). ``settings.redis_url`` must be set when
    ``workers`` > 1 (raises ``ValueError`` otherwise, and for ``workers`` < 1);
    ``settings.host``/``port`` say where to listen. ``stop_timeout``: seconds
    the children get to stop after SIGTERM before SIGKILL (default
    ``2 * settings.shutdown_grace + 10``).
    """

    def __init__(self, settings: Settings, workers: int, *, stop_timeout: float | None = None) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        if workers > 1 and not settings.redis_url:
            raise ValueError("several nodes need redis_url: they share tables through Redis")
        self.settings = settings
        self.workers = [Worker(i, node) for i, node in enumerate(node_ids(settings, workers), 1)]
        self.stop_timeout = 2 * settings.shutdown_grace + 10 if stop_timeout is None else stop_timeout
        self.socks: list[socket.socket] = []  # one per child (its index - 1)
        self.signals: list[int] = []
        #: set when a node failed to start MAX_START_FAILURES times in a row
        self.failed = False

    # -- the loop ---------------------------------------------------------------------------------
    def run(self) -> int:
        """Listen, start the children, keep them running until a stop signal; returns the exit status."""
        handlers = self._catch_signals()
        try:
            try:
                self.socks = listen(self.settings.host, self.settings.port, len(self.workers))
            except OSError as exc:
                log.error("cannot listen on %s:%d: %s", self.settings.host, self.settings.port, exc)
                return 1
            host, port = self.socks[0].getsockname()[:2]
            self.settings = dataclasses.replace(self.settings, port=port)
            shown = f"[{host}]" if ":" in host else host
            log.info("listening on http://%s:%d with %d nodes: %s (supervisor pid %d)", shown, port,
                     len(self.workers), ", ".join(w.node_id for w in self.workers), os.getpid())
            for worker in self.workers:
                self._start(worker)
            while not self.signals and not self.failed:
                self._wait(0.1)
                now = time.monotonic()
                for worker in self.workers:
                    if worker.proc is not None and worker.proc.poll() is not None:
                        self._died(worker, now)
                    elif worker.proc is None and now >= worker.restart_at and not self.failed:
                        self._start(worker)
            if self.signals:
                log.info("received %s: stopping %d nodes", signal.Signals(self.signals[0]).name,
                         sum(1 for w in self.workers if w.proc is not None))
            clean = self._stop_all()
            return 1 if self.failed or not clean else 0
        finally:
            for worker in self.workers:
                if worker.control is not None:
                    worker.control.close()
            for sock in set(self.socks):
                sock.close()
            for sig, handler in handlers.items():
                signal.signal(sig, handler)

    def _catch_signals(self) -> dict[int, Any]:
        """Record SIGTERM and SIGINT in ``self.signals`` (main thread only, as Python allows); returns the old handlers."""
        if threading.current_thread() is not threading.main_thread():
            return {}
        return {sig: signal.signal(sig, lambda signum, frame: self.signals.append(signum))
                for sig in (signal.SIGTERM, signal.SIGINT)}

    def _wait(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for a child's control socket: ``READY``, or end-of-file once it exited."""
        controls = {w.control: w for w in self.workers if w.control is not None}
        if not controls:
            time.sleep(timeout)
            return
        readable, _, _ = select.select(list(controls), [], [], timeout)
        for control in readable:
            worker = controls[control]
            try:
                data = control.recv(64)
            except OSError:
                data = b""
            if READY in data and not worker.ready and worker.proc is not None:
                worker.ready = True
                worker.start_failures = 0
                log.info("node %s ready (pid %d)", worker.node_id, worker.proc.pid)
            if not data:
                control.close()
                worker.control = None

    # -- one child ------------------------------------------------------------------------------------
    def _start(self, worker: Worker) -> None:
        """Start the child of ``worker``'s slot (a process that cannot be created counts as a failed start)."""
        assert self.socks, "not listening"
        ours, theirs = socket.socketpair()
        listen_fd, control_fd = self.socks[worker.slot - 1].fileno(), theirs.fileno()
        argv = [sys.executable, "-m", "cardhall.server.workers", "--listen-fd", str(listen_fd),
                "--control-fd", str(control_fd), "--node-id", worker.node_id]
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, pass_fds=(listen_fd, control_fd))
        except OSError as exc:
            ours.close()
            log.error("cannot start node %s: %s", worker.node_id, exc)
            self._failed_start(worker)
            worker.restart_at = time.monotonic() + BACKOFF_MAX
            return
        finally:
            theirs.close()
        assert proc.stdin is not None
        try:
            proc.stdin.write(pickle.dumps(dataclasses.replace(self.settings, node_id=worker.node_id)))
            proc.stdin.close()
        except OSError:  # it died at once: the loop sees its status
            pass
        worker.proc, worker.control, worker.ready = proc, ours, False
        worker.started_at = time.monotonic()
        log.info("started node %s (pid %d)", worker.node_id, proc.pid)

    def _failed_start(self, worker: Worker) -> None:
        """Count one failed start of ``worker``'s node; past MAX_START_FAILURES in a row, give up (``self.failed``)."""
        worker.start_failures += 1
        if worker.start_failures >= MAX_START_FAILURES:
            log.error("node %s failed to start %d times in a row: giving up", worker.node_id, worker.start_failures)
            self.failed = True

    def _died(self, worker: Worker, now: float) -> None:
        """Note that ``worker``'s child exited and schedule its restart (with the backoff)."""
        assert worker.proc is not None
        status, pid, was_ready = worker.proc.returncode, worker.proc.pid, worker.ready
        worker.proc = None
        if worker.control is not None:
            worker.control.close()
            worker.control = None
        worker.quick_deaths = worker.quick_deaths + 1 if now - worker.started_at < STABLE_AFTER else 1
        delay = min(BACKOFF_FIRST * 2 ** (worker.quick_deaths - 1), BACKOFF_MAX)
        worker.restart_at = now + delay
        log.warning("node %s (pid %d) %s%s", worker.node_id, pid, describe(status),
                    "" if was_ready else " before it served")
        if not was_ready:
            self._failed_start(worker)
        if not self.failed:
            log.warning("restarting node %s in %.1f s", worker.node_id, delay)

    def _stop_all(self) -> bool:
        """SIGTERM to every child, SIGKILL to those still running after ``stop_timeout`` (or a second
        signal); returns whether all stopped by themselves."""
        running = [w for w in self.workers if w.proc is not None]
        handled = len(self.signals)
        for worker in running:
            assert worker.proc is not None
            if worker.proc.poll() is None:
                worker.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout
        clean = True
        while True:
            left = [w for w in running if w.proc is not None and w.proc.poll() is None]
            if not left:
                break
            if time.monotonic() >= deadline or len(self.signals) > handled:
                why = "a second signal" if len(self.signals) > handled else f"{self.stop_timeout:.0f} s"
                for worker in left:
                    assert worker.proc is not None
                    log.error("node %s (pid %d) still running after %s: killing it", worker.node_id,
                              worker.proc.pid, why)
                    worker.proc.kill()
                    worker.proc.wait()
                clean = False
                break
            time.sleep(0.05)
        for worker in running:
            assert worker.proc is not None
            status = worker.proc.returncode
            if status in (0, -signal.SIGTERM, -signal.SIGINT):
                log.info("node %s (pid %d) stopped", worker.node_id, worker.proc.pid)
            else:
                log.warning("node %s (pid %d) %s while stopping", worker.node_id, worker.proc.pid, describe(status))
            worker.proc = None
        return clean


def supervise(settings: Settings, workers: int) -> int:
    """Run ``workers`` nodes of ``settings`` on one port until SIGTERM/SIGINT (blocking); returns the
    exit status for ``cardhall serve --workers`` (0 clean, 1 otherwise). Raises ``ValueError`` as
    :class:`Supervisor` does."""
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return Supervisor(settings, workers).run()


# -- in the child ---------------------------------------------------------------------------------------
def child_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of a child (``python -m cardhall.server.workers ...``, started by :class:`Supervisor`):
    read the pickled :class:`Settings` on stdin and serve them on the inherited socket until SIGTERM.
    Returns 3 (uvicorn's start-failure status) when the node could not start; a graceful stop ends
    the process with SIGTERM's status, as ``cardhall serve`` does."""
    parser = argparse.ArgumentParser(prog="cardhall.server.workers")
    parser.add_argument("--listen-fd", type=int, required=True)
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--node-id", required=True)
    args = parser.parse_args(argv)
    settings = dataclasses.replace(pickle.load(sys.stdin.buffer), node_id=args.node_id)
    listener = socket.socket(fileno=args.listen_fd)
    control = socket.socket(fileno=args.control_fd)
    supervisor = os.getppid()
    served = False

    def started(server: Any) -> None:
        import asyncio

        nonlocal served
        served = True

        loop = asyncio.get_running_loop()

        def supervisor_gone() -> None:
            try:
                data = control.recv(64)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                loop.remove_reader(control.fileno())
                log.warning("the supervisor (pid %d) is gone: stopping", supervisor)
                server.should_exit = True

        control.setblocking(False)
        try:
            control.send(READY)
        except OSError:
            pass  # the supervisor is gone: the reader below sees end-of-file at once
        loop.add_reader(control.fileno(), supervisor_gone)

    from cardhall.server.app import run

    try:
        run(settings, sock=listener, on_started=started)
    except Exception:
        if served:
            raise
        logging.getLogger("cardhall").exception("node %s failed to start", settings.node_id)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(child_main())
