"""The load generator of ``cardhall bench cluster``: websocket spectators of
bot tables, each connected to one node of the cluster, in a process of their own.

:class:`LoadProcess` starts it (``multiprocessing``, spawn) with a
:class:`Plan`: for every spectator its table, the node it connects to, and
whether that node owned the table when the load started (its events then
reach it without the cross-node hop). Spectators of "owner" and "other"
connections count into two :class:`~cardhall.clients.load.tracked.Recorder`\\ s
(events, action-to-event latency, ``seq`` gaps, errors), so the hop's cost is
their difference in one run. Each :class:`Watcher` also notes when events
arrive, for the failover and handover figures: the longest wait between two
consecutive events since ``track``, and the first event whose ``ts`` (the
server's wall time of its action) is after the instant given with ``after``
(a node's kill or SIGTERM).

The parent's requests, each answered by one reply (times are wall-clock seconds):
``("window", start, end)`` -> the figures counted in that window;
``("track",)`` -> starts the arrival tracking afresh; ``("after", t)``;
``("probe",)`` -> ``{table: {node: [first arrival after t or None, longest wait]}}``;
``("stop",)`` -> closes every connection, returns the totals of the whole run.
Its first message, ``("ready", ...)``, once every connection was tried, says
how many of the plan's spectators joined their table (``connections`` of
``planned``) and why the others did not (``failure_kinds``: the server's error
code, e.g. ``rate_limited`` from a per-address limit, or the exception's type).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from cardhall.clients.load.interrupts import ignore_sigint, sigint_ignored
from cardhall.clients.load.tracked import Recorder, TrackedClient


@dataclass
class Plan:
    """``urls``: each node's ``ws://`` URL; ``spectators``: ``(table, node index,
    connected to its owner)`` per connection; ``concurrency``: handshakes at once."""

    urls: list[str]
    spectators: list[tuple[str, int, bool]] = field(default_factory=list)
    codec: str = "msgpack"
    concurrency: int = 50


class Tracking:
    """What every :class:`Watcher` of the process looks for: arrivals are
    tracked once ``on``; ``after``: the instant a "first event after" counts from."""

    def __init__(self) -> None:
        self.on = False
        self.after: float | None = None


class Watcher(TrackedClient):
    """A spectator of ``table`` on node ``node`` (an index of :attr:`Plan.urls`)."""

    def __init__(self, url: str, recorder: Recorder, table: str, node: int, tracking: Tracking, codec: str) -> None:
        super().__init__(url, recorder, codec=codec, batch=True, on_frame=lambda frame: None)
        self.table = table
        self.node = node
        self.tracking = tracking
        self.last = 0.0  # wall time the last event arrived
        self.gap = 0.0  # longest wait between two events since tracking began
        self.first: float | None = None  # arrival of the first event whose ts is after tracking.after
        self.watching = False  # connected, said hello and joined its table (:func:`_open` succeeded)

    def dispatch(self, frame: dict[str, Any]) -> None:
        if frame.get("type") == "event":
            now = time.time()
            tracking = self.tracking
            if tracking.on:
                if self.last and now - self.last > self.gap:
                    self.gap = now - self.last
                if self.first is None and tracking.after is not None and frame["ts"] > tracking.after:
                    self.first = now
            self.last = now
        super().dispatch(frame)

    @property
    def lost(self) -> bool:
        """It had joined its table and its connection has closed since."""
        return self.watching and (self.closed is None or self.closed.done())

    @property
    def held(self) -> bool:
        """It joined its table and its connection is still open."""
        return self.watching and not self.lost


def _figures(recorders: dict[str, Recorder], watchers: list[Watcher]) -> dict[str, Any]:
    """Per recorder: events, latency histogram, gaps, reorders, errors; and the
    connections: ``planned`` (in the plan), ``connections`` (joined and still
    open), ``failed`` (never joined: refused or unreachable), ``lost`` (joined,
    closed since)."""
    out: dict[str, Any] = {}
    for name, rec in recorders.items():
        mine = [w for w in watchers if w.recorder is rec]
        out[name] = {"events": rec.events, "latency": rec.latency, "gaps": rec.gaps, "reorders": rec.reorders,
                     "errors": dict(rec.errors), "planned": len(mine), "connections": sum(1 for w in mine if w.held),
                     "failed": sum(1 for w in mine if not w.watching), "lost": sum(1 for w in mine if w.lost)}
    out["lost_by_node"] = {}
    for w in watchers:
        if w.lost:
            out["lost_by_node"][w.node] = out["lost_by_node"].get(w.node, 0) + 1
    return out


def _failure_kind(exc: BaseException) -> str:
    """A short name of why a spectator did not join: the server's error code
    (``rate_limited``: a per-address limit of the node) or the exception's type.

    >>> _failure_kind(TimeoutError())
    'TimeoutError'
    """
    code = getattr(exc, "code", None)
    return str(code) if isinstance(code, str) and code else type(exc).__name__


async def _open(w: Watcher, attempts: int = 5) -> None:
    for attempt in range(attempts):
        try:
            await w.connect()
            break
        except (TimeoutError, OSError):
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(0.5 * (attempt + 1))
    await w.hello("spectator")
    await w.join(w.table, role="spectator")
    w.watching = True


async def run_load(plan: Plan, pipe: Any) -> None:
    """Open the plan's connections, then answer the parent's requests until ``stop``."""
    recorders = {"owner": Recorder(), "other": Recorder()}
    tracking = Tracking()
    watchers = [Watcher(plan.urls[node], recorders["owner" if owned else "other"], table, node, tracking, plan.codec)
                for table, node, owned in plan.spectators]
    failures: list[str] = []
    kinds: Counter[str] = Counter()
    failed_by_node: Counter[int] = Counter()
    for i in range(0, len(watchers), plan.concurrency):
        batch = watchers[i:i + plan.concurrency]
        results = await asyncio.gather(*(_open(w) for w in batch), return_exceptions=True)
        for w, r in zip(batch, results):
            if isinstance(r, BaseException):
                failures.append(repr(r)[:200])
                kinds[_failure_kind(r)] += 1
                failed_by_node[w.node] += 1
    # a spectator that did not join holds no connection: one refused after its handshake is closed
    await asyncio.gather(*(w.close() for w in watchers if not w.watching), return_exceptions=True)
    pipe.send(("ready", {"planned": len(watchers), "connections": sum(1 for w in watchers if w.watching),
                         "failed": len(failures), "failures": failures[:5], "failure_kinds": dict(kinds),
                         "failed_by_node": dict(sorted(failed_by_node.items())), "pid": os.getpid()}))
    loop = asyncio.get_running_loop()
    while True:
        request = await loop.run_in_executor(None, pipe.recv)
        kind = request[0]
        if kind == "window":
            start, end = request[1], request[2]
            await asyncio.sleep(max(0.0, start - time.time()))
            for rec in recorders.values():
                rec.measuring = True
            cpu = time.process_time()
            await asyncio.sleep(max(0.0, end - time.time()))
            for rec in recorders.values():
                rec.measuring = False
            pipe.send(("window", {**_figures(recorders, watchers), "cpu_s": time.process_time() - cpu,
                                  "window_s": end - start}))
        elif kind == "track":
            tracking.on, tracking.after = True, None
            for w in watchers:
                w.gap, w.first = 0.0, None
            pipe.send(("track", None))
        elif kind == "after":
            tracking.after = request[1]
            pipe.send(("after", None))
        elif kind == "probe":
            now = time.time()
            seen: dict[str, dict[int, list[Any]]] = {}
            for w in watchers:
                if not w.held:
                    continue
                gap = max(w.gap, now - w.last) if w.last else None  # a wait still going on counts as it stands
                entry = seen.setdefault(w.table, {}).setdefault(w.node, [None, None])
                if w.first is not None and (entry[0] is None or w.first < entry[0]):
                    entry[0] = w.first
                if gap is not None and (entry[1] is None or gap > entry[1]):
                    entry[1] = gap
            pipe.send(("probe", seen))
        elif kind == "stop":
            totals = _figures(recorders, watchers)
            await asyncio.gather(*(w.close() for w in watchers), return_exceptions=True)
            pipe.send(("stop", totals))
            return


def _process_main(plan: Plan, pipe: Any) -> None:
    """Entry point of the load process (spawned; SIGINT is the parent's to report)."""
    ignore_sigint()
    try:
        import uvloop
    except ImportError:  # uvloop is not built for every platform
        asyncio.run(run_load(plan, pipe))
    else:
        uvloop.run(run_load(plan, pipe))
    pipe.close()


class LoadProcess:
    """The load generator's process: ``with LoadProcess(plan) as load: load.ask(...)``."""

    def __init__(self, plan: Plan) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.pipe, child = ctx.Pipe()
        # daemon: it ends with this process; started with SIGINT ignored (Ctrl-C interrupts the parent only)
        self.proc = ctx.Process(target=_process_main, args=(plan, child), daemon=True)
        with sigint_ignored():
            self.proc.start()
        try:
            self.ready = self.receive("ready", 300)
        except BaseException:
            self.proc.kill()
            raise

    @property
    def pid(self) -> int:
        assert self.proc.pid is not None
        return self.proc.pid

    def receive(self, kind: str, timeout: float) -> Any:
        """The next reply, which must be ``kind``; RuntimeError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not self.pipe.poll(0.2):
            if not self.proc.is_alive():
                raise RuntimeError(f"the load process exited ({self.proc.exitcode}) instead of answering {kind!r}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the load process did not answer {kind!r} within {timeout:.0f} s")
        got, payload = self.pipe.recv()
        if got != kind:
            raise RuntimeError(f"the load process sent {got!r} instead of {kind!r}")
        return payload

    def send(self, *request: Any) -> None:
        self.pipe.send(request)

    def ask(self, *request: Any, timeout: float = 60.0) -> Any:
        """Send ``request`` and return its reply."""
        self.send(*request)
        return self.receive(request[0], timeout)

    def close(self) -> dict[str, Any] | None:
        """``stop`` (the run's totals), then end the process; None when it did not answer."""
        totals = None
        if self.proc.is_alive():
            try:
                totals = self.ask("stop", timeout=30)
            except (RuntimeError, OSError, EOFError):
                pass
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        return totals

    def __enter__(self) -> LoadProcess:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
