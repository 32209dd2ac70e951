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

For the fault round (:mod:`.cluster_faults`) the plan also has ``players``:
a seat at each of those tables played by the load (a
:class:`~cardhall.clients.load.player.LoadPlayer` answering its turns at
once, on a connection of its own, also a :class:`Watcher`), and with
``reconnect`` every connection reconnects and resumes (``join`` with
``since``) when the server closes it (4012, 1001, ...). Between ``fault`` and
``fault_end`` every connection notes each event's arrival and ``ts``
(:func:`silence` reads them).

The parent's requests, each answered by one reply (times are wall-clock seconds):
``("window", start, end)`` -> the figures counted in that window;
``("track",)`` -> starts the arrival tracking afresh; ``("after", t)``;
``("probe",)`` -> ``{table: {node: [first arrival after t or None, longest wait]}}``;
``("fault",)`` -> arrivals are noted from now on, and each connection's closes counted from here;
``("fault_probe", t)`` -> ``{"unheard": open connections without an event since t, "players":
[[table, node, seat, stayed open], ...]}``; ``("fault_end", t, end)`` -> the fault figures
(:func:`fault_figures`) from the fault's end ``t`` to ``end``;
``("stop",)`` -> closes every connection, returns the totals of the whole run.
Its first message, ``("ready", ...)``, once every connection was tried, says
how many of the plan's spectators joined their table (``connections`` of
``planned``) and why the others did not (``failure_kinds``: the server's error
code, e.g. ``rate_limited`` from a per-address limit, or the exception's type).
"""

from __future__ import annotations

import asyncio
import bisect
import multiprocessing
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from cardhall.clients.client import ServerError
from cardhall.clients.load.interrupts import ignore_sigint, sigint_ignored
from cardhall.clients.load.player import LoadPlayer
from cardhall.clients.load.tracked import Recorder, TrackedClient
from cardhall.clients.load.worker import _quiet_when_closing


@dataclass
class Plan:
    """``urls``: each node's ``ws://`` URL; ``spectators``: ``(table, node index,
    connected to its owner)`` per connection; ``concurrency``: handshakes at once;
    ``players``: ``(table, node index)`` per seat played by the load; ``reconnect``:
    connections reconnect and resume when the server closes them."""

    urls: list[str]
    spectators: list[tuple[str, int, bool]] = field(default_factory=list)
    codec: str = "msgpack"
    concurrency: int = 50
    players: list[tuple[str, int]] = field(default_factory=list)
    reconnect: bool = False


class Tracking:
    """What every :class:`Watcher` of the process looks for: arrivals are
    tracked once ``on``; ``after``: the instant a "first event after" counts from."""

    def __init__(self) -> None:
        self.on = False
        self.after: float | None = None
        self.recording = False  # every event's (arrival, ts) noted (the fault round)


class Watcher(TrackedClient):
    """A spectator of ``table`` on node ``node`` (an index of :attr:`Plan.urls`);
    with ``inbox``, a player's connection (its frames queued for the player)."""

    def __init__(self, url: str, recorder: Recorder, table: str, node: int, tracking: Tracking, codec: str,
                 reconnect: bool = False, inbox: bool = False) -> None:
        super().__init__(url, recorder, codec=codec, batch=True, on_frame=None if inbox else _ignore,
                         reconnect=reconnect)
        self.table = table
        self.node = node
        self.tracking = tracking
        self.last = 0.0  # wall time the last event arrived
        self.gap = 0.0  # longest wait between two events since tracking began
        self.first: float | None = None  # arrival of the first event whose ts is after tracking.after
        self.watching = False  # connected, said hello and joined its table (:func:`_open` succeeded)
        self.arrivals: list[tuple[float, float]] = []  # (arrival, ts) while tracking.recording
        self.mark = (0, 0)  # closes and reconnects when the fault began
        self.seat: int | None = None  # a player's seat

    def dispatch(self, frame: dict[str, Any]) -> None:
        if frame.get("type") == "event":
            now = time.time()
            tracking = self.tracking
            if tracking.on:
                if self.last and now - self.last > self.gap:
                    self.gap = now - self.last
                if self.first is None and tracking.after is not None and frame["ts"] > tracking.after:
                    self.first = now
            if tracking.recording:
                self.arrivals.append((now, frame["ts"]))
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

    @property
    def stayed_open(self) -> bool:
        """Its connection is the one it had when the fault began (no close since)."""
        return self.held and len(self.close_codes) == self.mark[0]


def _ignore(frame: dict[str, Any]) -> None:
    pass


def silence(arrivals: list[float], table_ts: list[float], start: float, end: float) -> float:
    """The longest time a connection went without an event while its table's
    events went on, from ``start`` (the fault's end) to ``end``: for each wait
    between two arrivals (the first from ``start``, the last until ``end``), the
    part after the first event the table made in it (``table_ts``: the ``ts`` of
    its events, sorted, as any connection received them); a wait during which
    the table made nothing counts 0. In a steady flow this is the latency.

    >>> silence([10.5, 13.0, 13.1], [10.4, 11.0, 12.9, 13.05], 10.0, 14.0)
    2.0
    >>> silence([], [], 10.0, 14.0), silence([], [12.0], 10.0, 14.0)
    (0.0, 2.0)
    """
    worst, prev = 0.0, start
    for a in [*(t for t in arrivals if start <= t <= end), end]:
        i = bisect.bisect_right(table_ts, prev)
        if i < len(table_ts) and table_ts[i] < a:
            worst = max(worst, a - max(prev, table_ts[i]))
        prev = a
    return round(worst, 3)


def fault_figures(watchers: list[Watcher], start: float, end: float) -> dict[str, Any]:
    """What a fault did to the connections, from its end ``start`` to ``end``:
    ``silence_s`` (:func:`silence`) of each connection that stayed open,
    ``unheard`` (those without an event since ``start``), ``lag_s`` (of each of them, the
    longest delay, arrival minus ``ts``, of an event made after ``start``), ``closed`` (connections
    closed since the fault began), ``close_codes`` (code -> closes; ``none``: dropped
    without a close frame), ``reconnected`` (closed and open again, resumed) and
    their ``reconnected_silence_s``, ``table_first_event_s`` (per table, the first
    ``ts`` after ``start``, minus ``start``), ``players`` (``[table, node, seat,
    stayed open]``)."""
    by_table: dict[str, list[float]] = {}
    for w in watchers:
        by_table.setdefault(w.table, []).extend(ts for at, ts in w.arrivals if at <= end and ts > start)
    for ts in by_table.values():
        ts.sort()
    codes: Counter[str] = Counter()
    out: dict[str, Any] = {"connections": 0, "stayed_open": 0, "silence_s": [], "lag_s": [], "unheard": 0, "closed": 0,
                           "reconnected": 0, "reconnected_silence_s": [], "players": []}
    for w in watchers:
        if not w.watching:
            continue
        out["connections"] += 1
        arrived = [at for at, _ in w.arrivals]
        gone = w.close_codes[w.mark[0]:]
        codes.update("none" if c is None else str(c) for c in gone)
        if w.stayed_open:
            out["stayed_open"] += 1
            out["silence_s"].append(silence(arrived, by_table.get(w.table, []), start, end))
            out["unheard"] += not any(start <= at <= end for at in arrived)
            lags = [at - ts for at, ts in w.arrivals if at <= end and ts > start]
            if lags:
                out["lag_s"].append(round(max(lags), 3))
        elif gone:
            out["closed"] += 1
            if w.held:
                out["reconnected"] += 1
                out["reconnected_silence_s"].append(silence(arrived, by_table.get(w.table, []), start, end))
        if w.seat is not None:
            out["players"].append([w.table, w.node, w.seat, w.stayed_open])
    out["close_codes"] = dict(sorted(codes.items()))
    out["table_first_event_s"] = [round(ts[0] - start, 3) for ts in by_table.values() if ts]
    return out


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


async def _connect(w: Watcher, attempts: int = 5) -> None:
    """Connect ``w``, trying ``attempts`` times with a growing pause (raises the last failure)."""
    for attempt in range(attempts):
        try:
            await w.connect()
            return
        except (TimeoutError, OSError):
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(0.5 * (attempt + 1))


async def _open(w: Watcher, attempts: int = 5) -> None:
    """Connect ``w`` and join its table as a spectator. A join answered
    ``unavailable`` (the table moving between nodes, or its store down: SPEC
    "Errors", retry shortly) is sent again, ``attempts`` times in all with a
    growing pause; any other error, or the last ``unavailable``, is raised."""
    await _connect(w, attempts)
    await w.hello("spectator")
    for attempt in range(attempts):
        try:
            await w.join(w.table, role="spectator")
            break
        except ServerError as exc:
            if exc.code != "unavailable" or attempt == attempts - 1:
                raise
            await asyncio.sleep(0.5 * (attempt + 1))
    w.watching = True


async def _open_player(w: Watcher, tasks: list[asyncio.Task[Any]], attempts: int = 5) -> None:
    """Connect ``w``, start a :class:`LoadPlayer` on it (no think time) and wait until it sits."""
    await _connect(w, attempts)
    await w.hello("bench player")
    player = LoadPlayer(w, w.table, "random", seat=None, think=0.0, bot_seed=os.urandom(16))
    task = asyncio.get_running_loop().create_task(player.play())
    tasks.append(task)
    deadline = time.monotonic() + 30
    while player.seat is None and not task.done() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    if player.seat is None:
        failure = task.exception() if task.done() and not task.cancelled() else None
        raise failure or TimeoutError("the player did not sit")
    w.seat, w.watching = player.seat, True


async def run_load(plan: Plan, pipe: Any) -> None:
    """Open the plan's connections, then answer the parent's requests until ``stop``."""
    recorders = {"owner": Recorder(), "other": Recorder()}
    tracking = Tracking()
    watchers = [Watcher(plan.urls[node], recorders["owner" if owned else "other"], table, node, tracking, plan.codec,
                        plan.reconnect)
                for table, node, owned in plan.spectators]
    seated = Recorder()  # the players' own: outside the windows' figures
    players = [Watcher(plan.urls[node], seated, table, node, tracking, plan.codec, plan.reconnect, inbox=True)
               for table, node in plan.players]
    tasks: list[asyncio.Task[Any]] = []
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
    sat = await asyncio.gather(*(_open_player(w, tasks) for w in players), return_exceptions=True)
    player_failures = [repr(r)[:200] for r in sat if isinstance(r, BaseException)]
    # a spectator that did not join holds no connection: one refused after its handshake is closed
    await asyncio.gather(*(w.close() for w in watchers + players if not w.watching), return_exceptions=True)
    pipe.send(("ready", {"planned": len(watchers), "connections": sum(1 for w in watchers if w.watching),
                         "failed": len(failures), "failures": failures[:5], "failure_kinds": dict(kinds),
                         "failed_by_node": dict(sorted(failed_by_node.items())), "pid": os.getpid(),
                         "players": sum(1 for w in players if w.watching), "player_failures": player_failures[:5]}))
    everyone = watchers + players
    gaps0 = 0
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
        elif kind == "fault":
            tracking.recording = True
            for w in everyone:
                w.arrivals, w.mark = [], (len(w.close_codes), w.reconnects)
            gaps0 = sum(r.gaps + r.reorders for r in (*recorders.values(), seated))
            pipe.send(("fault", None))
        elif kind == "fault_probe":
            since = request[1]
            pipe.send(("fault_probe", {
                "unheard": sum(1 for w in everyone if w.stayed_open and not (w.arrivals and w.arrivals[-1][0] >= since)),
                "players": [[w.table, w.node, w.seat, w.stayed_open] for w in players if w.watching]}))
        elif kind == "fault_end":
            tracking.recording = False
            figures = fault_figures(everyone, request[1], request[2])
            figures["seq_gaps"] = sum(r.gaps + r.reorders for r in (*recorders.values(), seated)) - gaps0
            figures["player_errors"] = dict(seated.errors)
            figures["players_playing"] = sum(1 for t in tasks if not t.done())
            for w in everyone:
                w.arrivals = []
            pipe.send(("fault_end", figures))
        elif kind == "stop":
            totals = _figures(recorders, watchers)
            loop.set_exception_handler(_quiet_when_closing)  # the players' requests in flight fail: expected
            await asyncio.gather(*(w.close() for w in everyone), return_exceptions=True)
            for t in tasks:
                t.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=5)
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
