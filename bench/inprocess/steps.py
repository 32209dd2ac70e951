"""cardhall's Python cost per action, in one process, without sockets (a benchmark, not a test).

    .venv/bin/python bench/inprocess/steps.py [--tables 100] [--warmup 2] [--duration 6] [--codec json|msgpack]
                                             [--compact 1|0] [--redis URL] [--actions N] [--think S]

The workload of ``bench/colyseus`` (no-limit Hold'em, 6 client players and 2
spectators a table, ``pause`` 0, the players' policy of ``policy.js``, think 0
unless ``--think`` says otherwise: then each seat waits uniformly 0.5 to 1.5
times that many seconds before acting, as ``policy.js``'s ``thinkTime``)
driven through the service's own layers: the ``/ws`` endpoint (hello, create,
join, and each ``act`` read through the ``cardhall.receiver`` handler as the
websocket layer offers it), the hall, the table actors, the machine, the
fan-out and each connection's ``send_now``; in memory, or with ``--redis`` on
that Redis as a cluster node (its commits, the Redis server's own CPU
not counted). What it leaves out is the
websocket protocol's parsing and framing and the kernel (the socket writes,
about a quarter of the server's CPU under that benchmark): what is left is the
Python work per action, which the websocket layer and the kernel do not
change. A client answers its seat's turn from the table's state (the seat to
act, its legal actions) instead of decoding its frames, so nearly all the
process's CPU is the server's.

Prints the actions completed in the measured window, the process's CPU
seconds over it (``time.process_time``) and CPU microseconds per action. CPU
time on a shared machine moves by 5 to 10 % from run to run; for a change of
a few per cent count instructions instead, which move by about 0.7 %:
``--actions N`` stops once N actions have been applied (the players start
once every table is set up) and prints that count, so two runs under
``valgrind --tool=callgrind`` with different N give the instructions per
action as the difference of their totals over the difference of their
counts (docs/LOAD.md, "Counting instructions").
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import sys
import time
from typing import Any

import msgpack

from cardhall.server.app import create_app
from cardhall.server.config import Settings
from cardhall.server.ws_protocol import RECEIVER, SEND_NOW

SEATS = 6
#: seconds a set-up request (hello, create_table, join) waits for its answer at most
ANSWER_WITHIN = 60.0
SPECTATORS = 2


def decide(legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """``bench/colyseus/policy.js``: all-in 2 %, fold 8 % (when facing a bet, or
    always where folding is offered), the minimum bet or raise 15 %, else check, else call."""
    by = {a["type"]: a for a in legal}
    r = rng.random()
    if "all_in" in by and r < 0.02:
        return {"type": "all_in"}
    if "fold" in by and r < 0.10:
        return {"type": "fold"}
    raise_ = by.get("bet") or by.get("raise")
    if raise_ and r < 0.25:
        return {"type": raise_["type"], "amount": raise_["min"]}
    for kind in ("check", "call"):
        if kind in by:
            return {"type": kind}
    return {"type": legal[0]["type"]}


class Client:
    """One websocket of the workload, in process: the endpoint's ASGI
    ``receive``/``send`` and the websocket layer's extensions (``send_now``,
    ``cardhall.receiver``)."""

    def __init__(self, endpoint: Any, codec: str, rng: random.Random, think: float = 0.0) -> None:
        self.endpoint = endpoint
        self.think = think
        self.codec = codec
        self.rng = rng
        self.loop = asyncio.get_running_loop()
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.handler: Any = None
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.ids = 0
        self.table = ""
        self.machine: Any = None
        self.seat: int | None = None
        self.answered: Any = None
        self.playing = False
        self.frames = 0
        self.bytes = 0

    # -- the websocket, seen from the server ---------------------------------------------------
    async def receive(self) -> dict[str, Any]:
        return await self.inbox.get()

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "websocket.send":
            payload = message.get("text")
            self.received(payload if payload is not None else message["bytes"])

    def send_now(self, payload: bytes | str) -> bool:
        self.received(payload)
        return True

    def receiver(self, handler: Any) -> None:
        self.handler = handler

    def start(self) -> None:
        scope = {"type": "websocket", "path": "/ws", "headers": [], "subprotocols": [f"cardhall.v1.{self.codec}"],
                 "client": ("127.0.0.1", 1), "extensions": {SEND_NOW: self.send_now, RECEIVER: self.receiver}}
        self.inbox.put_nowait({"type": "websocket.connect"})
        self.loop.create_task(self.endpoint(scope, self.receive, self.send))

    # -- the client ----------------------------------------------------------------------------
    def write(self, message: dict[str, Any]) -> None:
        """Send ``message`` as the websocket layer would hand it over: to the read's handler first."""
        payload: bytes | str = json.dumps(message) if self.codec == "json" else msgpack.packb(message)
        if self.handler is not None and self.handler(payload):
            return
        key = "text" if isinstance(payload, str) else "bytes"
        self.inbox.put_nowait({"type": "websocket.receive", key: payload})

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """``message`` with a new ``id``; its answer (the frame whose ``re`` is that id). Raises
        SystemExit naming the request when none comes within :data:`ANSWER_WITHIN` seconds (a set-up
        that hangs says what it waited for)."""
        self.ids += 1
        message["id"] = self.ids
        answer: asyncio.Future[Any] = self.loop.create_future()
        self.waiting[self.ids] = answer
        self.write(message)
        try:
            return await asyncio.wait_for(answer, ANSWER_WITHIN)
        except TimeoutError:
            raise SystemExit(f"steps.py: no answer to {message!r} within {ANSWER_WITHIN:.0f} s") from None

    def received(self, payload: bytes | str) -> None:
        self.frames += 1
        self.bytes += len(payload)
        if self.waiting:  # set-up: the answers to this client's requests
            frame = json.loads(payload) if isinstance(payload, str) else msgpack.unpackb(payload)
            batch = frame["frames"] if isinstance(frame, dict) and frame.get("type") == "batch" else [frame]
            for one in batch:
                if isinstance(one, dict) and one.get("re") in self.waiting:
                    self.waiting.pop(one["re"]).set_result(one)
        if self.playing:
            self.maybe_act()

    def maybe_act(self) -> None:
        """Answer this seat's open turn once (seat 1 also asks for the rematch when a match ends)."""
        machine = self.machine
        if self.seat is not None and machine.turn_seat == self.seat and machine.turn_legal:
            if self.answered != machine.turn_id:
                self.answered = machine.turn_id
                if self.think:
                    self.loop.call_later(self.think * (0.5 + self.rng.random()), self.act, machine.turn_id,
                                         machine.turn_legal)
                else:
                    self.loop.call_soon(self.act, machine.turn_id, machine.turn_legal)
        elif self.seat == 1 and machine.status == "finished" and self.answered != ("rematch", machine.match):
            self.answered = ("rematch", machine.match)
            self.loop.call_soon(self.write, {"type": "act", "table": self.table, "action": {"type": "rematch"}})

    def act(self, turn: int, legal: list[dict[str, Any]]) -> None:
        self.write({"type": "act", "table": self.table, "turn": turn, "action": decide(legal, self.rng)})


async def run(args: argparse.Namespace) -> dict[str, float]:
    settings = Settings(max_connections_per_ip=0, max_tables_per_address=0, new_players_per_address=0,
                        bot_think_floor=0, send_queue=100_000, redis_url=args.redis or None,
                        **({"redis_prefix": f"steps{os.getpid()}:"} if args.redis else {}))
    app = create_app(settings)
    hall = app.state.hall
    endpoint = app.state.ws_endpoint
    await hall.start()
    rng = random.Random(1)
    clients: list[Client] = []

    async def open_client(name: str) -> Client:
        client = Client(endpoint, args.codec, rng, args.think)
        client.start()
        clients.append(client)
        await client.request({"type": "hello", "name": name, "batch": True,
                              **({"compact": True} if args.compact else {"group": True})})
        return client

    for i in range(args.tables):
        owner = await open_client(f"t{i} seat 1")
        created = await owner.request({"type": "create_table", "game": "no_limit_holdem", "seats": SEATS,
                                       "options": {"pause": 0, "action_clock": 600}})
        table, machine = created["table"], hall.get(created["table"]).machine
        for k in range(SPECTATORS):
            watcher = await open_client(f"t{i} watcher {k + 1}")
            watcher.table, watcher.machine = table, machine
            await watcher.request({"type": "join", "table": table, "role": "spectator"})
        seats = [owner] + [await open_client(f"t{i} seat {n}") for n in range(2, SEATS + 1)]
        for n, client in enumerate(seats, 1):
            client.table, client.machine, client.seat = table, machine, n
        for n, client in enumerate(seats, 1):  # the last join starts the match
            await client.request({"type": "join", "table": table, "role": "player", "seat": n})
    for client in clients:  # every table set up: the players play from now on
        client.playing = True
        if client.seat is not None:
            client.maybe_act()
    gc.freeze()  # as `cardhall serve` (server/app.py: tune_gc)
    gc.set_threshold(*settings.gc_thresholds)
    actions = hall.metrics.actions
    if args.actions:
        while actions.value < args.actions:
            await asyncio.sleep(0.005)
        return {"actions": actions.value}
    await asyncio.sleep(args.warmup)
    a0, c0, f0, b0 = actions.value, time.process_time(), sum(c.frames for c in clients), sum(c.bytes for c in clients)
    await asyncio.sleep(args.duration)
    a1, c1, f1, b1 = actions.value, time.process_time(), sum(c.frames for c in clients), sum(c.bytes for c in clients)
    done = max(1, a1 - a0)
    return {"actions": a1 - a0, "cpu_s": c1 - c0, "us_per_action": 1e6 * (c1 - c0) / done,
            "frames_per_action": (f1 - f0) / done, "bytes_per_action": (b1 - b0) / done}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--warmup", type=float, default=2.0, help="seconds before measuring")
    p.add_argument("--duration", type=float, default=6.0, help="seconds measured")
    p.add_argument("--codec", choices=("json", "msgpack"), default="json")
    p.add_argument("--compact", type=int, choices=(0, 1), default=1, help="compact events (1.8), else events frames (1.7)")
    p.add_argument("--redis", default="", metavar="URL", help="keep the tables in this Redis (default: in memory)")
    p.add_argument("--think", type=float, default=0.0,
                   help="seconds a seat thinks before acting, uniform in 0.5x..1.5x (default 0: at once)")
    p.add_argument("--actions", type=int, default=0, help="stop at this many actions applied since the start (for counting instructions)")
    args = p.parse_args(argv)
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    out = asyncio.run(run(args))
    if args.actions:
        print(f"actions {int(out['actions'])}", flush=True)
    else:
        print(f"{args.tables} tables, {args.codec}{' compact' if args.compact else ''}: {int(out['actions'])} actions, "
              f"{out['cpu_s']:.2f} CPU-s, {out['us_per_action']:.1f} CPU-us per action, "
              f"{out['frames_per_action']:.2f} frames and {out['bytes_per_action']:.0f} bytes per action", flush=True)
    os._exit(0)  # the tables' tasks are not wound down: nothing of them is kept


if __name__ == "__main__":
    sys.exit(main())
