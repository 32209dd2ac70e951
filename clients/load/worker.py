"""One load process: its share of the tables' players and spectators, and idle connections.

A worker opens its connections (``concurrency`` at a time; each says ``hello``;
players join their seats and play, spectators join and read), tells the
parent it is ready, waits for the measuring window (two wall-clock times:
every worker measures the same window), then closes everything and returns
what its :class:`~cardhall.clients.load.tracked.Recorder` counted. All the connections
of a table are in one worker, so the player who acts and the spectators who
see the result share one clock for the latency.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from cardhall.clients.load.interrupts import ignore_sigint
from cardhall.clients.load.player import LoadPlayer
from cardhall.clients.load.tracked import Recorder, TrackedClient

log = logging.getLogger("cardhall.load")


@dataclass
class TablePlan:
    """A table's connections in one worker: players at ``seats``, ``spectators`` watchers."""

    table: str
    seats: list[int] = field(default_factory=list)
    spectators: int = 0


@dataclass
class WorkerPlan:
    """Everything a worker does. ``addresses``: local addresses its connections
    bind to, in turn (empty: the system's choice); ``idle``: connections that
    only say ``hello``; ``strategy``: the players' bot strategy;
    ``concurrency``: connections opened at once; ``attempts``: tries per
    connection (a saturated server may let handshakes time out); ``tokens``:
    the players the connections say ``hello`` as (seat ``k`` at every table
    is ``tokens[k - 1]``, spectators and idle connections ``tokens[-1]``;
    empty: each connection a new player), so a load test creates a handful of
    players, not one per connection (the server limits new players per address)."""

    url: str
    tables: list[TablePlan] = field(default_factory=list)
    idle: int = 0
    codec: str = "msgpack"
    think: float = 0.0
    strategy: str = "random"
    addresses: list[str] = field(default_factory=list)
    concurrency: int = 50
    attempts: int = 5
    index: int = 0
    tokens: list[str] = field(default_factory=list)


@dataclass
class Control:
    """How a worker talks to its parent: ``ready(info)`` once connected, then
    ``go()`` returns the window ``(start, end)`` in wall-clock seconds."""

    ready: Callable[[dict[str, Any]], Awaitable[None]]
    go: Callable[[], Awaitable[tuple[float, float]]]


async def run_worker(plan: WorkerPlan, control: Control) -> dict[str, Any]:
    """Run ``plan``; returns the worker's figures (see :func:`cardhall.clients.load.run.combine`)."""
    rec = Recorder()
    clients: list[TrackedClient] = []
    players: list[asyncio.Task[Any]] = []
    counter = iter(range(10**9))
    addresses = plan.addresses

    def new_client(**kw: Any) -> TrackedClient:
        i = next(counter)
        local = (addresses[(plan.index + i) % len(addresses)], 0) if addresses else None
        return TrackedClient(plan.url, rec, codec=plan.codec, batch=True, local_addr=local, **kw)

    def ignore(frame: dict[str, Any]) -> None:
        pass

    def token(seat: int | None) -> str | None:
        if not plan.tokens:
            return None
        return plan.tokens[seat - 1] if seat is not None and seat <= len(plan.tokens) - 1 else plan.tokens[-1]

    async def opened(client: TrackedClient, name: str, seat: int | None = None) -> TrackedClient:
        """Connect and say hello, trying again (a saturated server may let a
        handshake time out); the last failure is raised."""
        for attempt in range(plan.attempts):
            try:
                await client.connect()
                break
            except (TimeoutError, OSError):
                if attempt == plan.attempts - 1:
                    raise
                rec.retries += 1
                await asyncio.sleep(0.5 * (attempt + 1))
        clients.append(client)
        await client.hello(name, token=token(seat))
        return client

    async def open_player(table: str, seat: int) -> None:
        client = await opened(new_client(), f"load {plan.index}.{seat}", seat)
        player = LoadPlayer(client, table, plan.strategy, seat=seat, think=plan.think, bot_seed=os.urandom(16),
                            asks_rematch=seat == 1)
        players.append(asyncio.get_running_loop().create_task(player.play()))

    async def open_spectator(table: str | None) -> None:
        client = await opened(new_client(on_frame=ignore), "spectator" if table else "idle")
        if table is not None:
            await client.join(table, role="spectator")

    jobs: list[Callable[[], Awaitable[None]]] = []
    for tp in plan.tables:
        jobs += [lambda t=tp.table, s=seat: open_player(t, s) for seat in tp.seats]
        jobs += [lambda t=tp.table: open_spectator(t) for _ in range(tp.spectators)]
    jobs += [lambda: open_spectator(None) for _ in range(plan.idle)]
    failures: list[str] = []
    for i in range(0, len(jobs), plan.concurrency):
        results = await asyncio.gather(*(job() for job in jobs[i:i + plan.concurrency]), return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                rec.errors["connect_failed"] += 1
                failures.append(repr(r)[:200])
    await control.ready({"connections": len(clients), "failed": len(failures), "failures": failures[:5]})
    start, end = await control.go()
    loop = asyncio.get_running_loop()
    cpu: dict[str, float] = {}

    def begin() -> None:
        rec.measuring = True
        cpu["start"] = time.process_time()

    def finish() -> None:
        rec.measuring = False
        cpu["end"] = time.process_time()

    loop.call_later(max(0.0, start - time.time()), begin)
    loop.call_later(max(0.0, end - time.time()), finish)
    await asyncio.sleep(max(0.0, end - time.time()) + 0.05)
    lost = sum(1 for c in clients if c.closed is None or c.closed.done())
    rec.errors["connection_lost"] += lost
    if not rec.errors["connection_lost"]:
        del rec.errors["connection_lost"]
    for task in players:
        if task.done() and not task.cancelled() and task.exception() is not None:
            rec.errors["player_failed"] += 1
            log.warning("a load player failed: %r", task.exception())
    loop.set_exception_handler(_quiet_when_closing)
    # close the connections first: each player's event stream then ends by itself
    # (a cancel may be lost in asyncio.wait_for when a reply arrives at that moment, Python 3.11)
    await _close_all(clients)
    for task in players:
        task.cancel()
    if players:
        await asyncio.wait(players, timeout=5)
    return {
        "connections": len(clients), "held": len(clients) - lost, "events": rec.events,
        "latency": rec.latency, "errors": dict(rec.errors), "gaps": rec.gaps, "reorders": rec.reorders,
        "acts": rec.acts, "connect_retries": rec.retries, "cpu_s": cpu.get("end", 0.0) - cpu.get("start", 0.0), "window_s": end - start,
        "failures": failures[:5],
    }


def _quiet_when_closing(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """While closing, requests in flight fail with ConnectionError: expected, not logged."""
    if isinstance(context.get("exception"), ConnectionError):
        return
    loop.default_exception_handler(context)


async def _close_all(clients: list[TrackedClient], timeout: float = 10.0) -> None:
    """Close every connection, a bounded time for the closing handshakes, then abort the rest."""
    async def close(c: TrackedClient) -> None:
        try:
            await c.close()
        except Exception:
            pass

    for i in range(0, len(clients), 200):
        part = clients[i:i + 200]
        try:
            await asyncio.wait_for(asyncio.gather(*(close(c) for c in part)), timeout)
        except TimeoutError:
            for c in part:
                if c.ws is not None:
                    c.ws.transport.abort()


def process_main(plan: WorkerPlan, pipe: Any) -> None:
    """Entry point of a worker process (``multiprocessing``, spawn): the parent
    receives ``("ready", info)``, sends ``(start, end)``, receives ``("result", figures)``.
    SIGINT is ignored: a Ctrl-C is the parent's to report (it ends the workers)."""
    ignore_sigint()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    async def ready(info: dict[str, Any]) -> None:
        pipe.send(("ready", info))

    async def go() -> tuple[float, float]:
        return await asyncio.get_running_loop().run_in_executor(None, pipe.recv)

    try:
        import uvloop

        result = uvloop.run(run_worker(plan, Control(ready, go)))
    except ImportError:
        result = asyncio.run(run_worker(plan, Control(ready, go)))
    pipe.send(("result", result))
    pipe.close()
