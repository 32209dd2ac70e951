"""A small asyncio client of protocol v1 (``protocol/SPEC.md``).

Used by the tests and ``cardhall bench server``; the clients issue extends it
(typed messages, automatic reconnect). It speaks either subprotocol, unpacks
``batch`` frames, matches replies to requests by ``id``/``re``, and tracks the
last ``seq`` of every table it follows (``gaps`` counts any ``seq`` that is not
the previous one plus one).

>>> async def demo(url):                                    # doctest: +SKIP
...     async with Client(url) as c:
...         await c.hello("ann")
...         table = await c.create_table("no_limit_holdem", seats=2, bots=1)
...         snapshot = await c.join(table, role="player")
...         frame = await c.next_event(table)
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from protocol.codec import CODECS, JSON, MSGPACK

Frame = dict[str, Any]


class ServerError(Exception):
    """An ``error`` frame answering a request: ``code``, ``message``, ``frame``."""

    def __init__(self, frame: Frame) -> None:
        self.frame = frame
        self.code: str = frame.get("code", "")
        self.message: str = frame.get("message", "")
        super().__init__(f"{self.code}: {self.message}")


class Client:
    """One websocket connection to a cardhall server.

    ``url``: ``ws://host:port/ws``. ``codec``: ``"msgpack"`` or ``"json"``.
    ``batch``: ask the server for ``batch`` frames (several frames per message).
    ``on_frame``: if given, called with every frame that is not a reply
    (events, snapshots sent on their own, errors without ``re``); otherwise
    those frames go to :attr:`inbox`. ``record``: keep every frame received in
    :attr:`frames` (tests check each one).
    """

    def __init__(self, url: str, *, codec: str = "msgpack", batch: bool = True, record: bool = False,
                 on_frame: Callable[[Frame], None] | None = None, origin: str | None = None) -> None:
        self.url = url
        self.subprotocol = MSGPACK if codec == "msgpack" else JSON
        self.codec = CODECS[self.subprotocol]
        self.batch = batch
        self.record = record
        self.on_frame = on_frame
        self.origin = origin
        self.ws: ClientConnection | None = None
        self.player: str | None = None
        self.token: str | None = None
        self.name: str | None = None
        self.inbox: asyncio.Queue[Frame] = asyncio.Queue()
        self.frames: list[Frame] = []
        self.seqs: dict[str, int] = {}
        self.gaps = 0
        self.closed: asyncio.Future[tuple[int | None, str]] | None = None
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future[Frame]] = {}
        self._reader: asyncio.Task[None] | None = None

    # -- connection ---------------------------------------------------------
    async def connect(self) -> "Client":
        """Open the websocket and start reading."""
        kwargs: dict[str, Any] = {"subprotocols": [self.subprotocol], "max_size": 2**24, "compression": None}
        if self.origin is not None:
            kwargs["origin"] = self.origin
        self.ws = await connect(self.url, **kwargs)
        self.closed = asyncio.get_running_loop().create_future()
        self._reader = asyncio.get_running_loop().create_task(self._read())
        return self

    async def __aenter__(self) -> "Client":
        return await self.connect()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            try:
                await asyncio.wait_for(self._reader, 5)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self._reader.cancel()

    async def _read(self) -> None:
        assert self.ws is not None and self.closed is not None
        decode = self.codec.decode
        try:
            async for payload in self.ws:
                frame = decode(payload, 1 << 30)
                if frame.get("type") == "batch":
                    for inner in frame["frames"]:
                        self._dispatch(inner)
                else:
                    self._dispatch(frame)
        except Exception:
            pass
        finally:
            rcvd = self.ws.protocol.close_rcvd
            if not self.closed.done():
                self.closed.set_result((rcvd.code if rcvd else None, rcvd.reason if rcvd else ""))
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("connection closed"))
            self._pending.clear()

    def _dispatch(self, frame: Frame) -> None:
        if self.record:
            self.frames.append(frame)
        kind = frame.get("type")
        if kind == "event":
            table, seq = frame["table"], frame["seq"]
            last = self.seqs.get(table)
            if last is not None and seq != last + 1:
                self.gaps += 1
            self.seqs[table] = seq
        elif kind == "snapshot":
            self.seqs[frame["table"]] = frame["seq"]
        re = frame.get("re")
        if re is not None:
            fut = self._pending.pop(re, None)
            if fut is not None and not fut.done():
                fut.set_result(frame)
                return
        if self.on_frame is not None:
            self.on_frame(frame)
        else:
            self.inbox.put_nowait(frame)

    # -- requests -----------------------------------------------------------
    async def send(self, message: Frame) -> None:
        """Send one message as is (no reply awaited)."""
        assert self.ws is not None
        await self.ws.send(self.codec.encode(message))

    async def send_raw(self, payload: bytes | str) -> None:
        """Send a payload as is (tests of malformed input)."""
        assert self.ws is not None
        await self.ws.send(payload)

    async def request(self, message: Frame, timeout: float = 10.0) -> Frame:
        """Send ``message`` with a fresh ``id``; return the reply; raise
        :class:`ServerError` if the reply is an ``error``."""
        rid = next(self._ids)
        fut: asyncio.Future[Frame] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        await self.send({**message, "id": rid})
        reply = await asyncio.wait_for(fut, timeout)
        if reply.get("type") == "error":
            raise ServerError(reply)
        return reply

    async def hello(self, name: str = "player", token: str | None = None) -> Frame:
        """``hello`` → ``welcome``; remembers the player id and token."""
        msg: Frame = {"type": "hello", "name": name, "batch": self.batch}
        token = token if token is not None else self.token
        if token is not None:
            msg["token"] = token
        reply = await self.request(msg)
        self.player, self.token, self.name = reply["player"], reply["token"], reply["name"]
        return reply

    async def create_table(self, game: str, seats: int | None = None, options: Frame | None = None,
                           bots: int | list[str | None] | None = None) -> str:
        """``create_table`` → the new table's id."""
        msg: Frame = {"type": "create_table", "game": game}
        if seats is not None:
            msg["seats"] = seats
        if options is not None:
            msg["options"] = options
        if bots is not None:
            msg["bots"] = bots
        return (await self.request(msg))["table"]

    async def join(self, table: str, role: str = "player", seat: int | None = None, seed: str | None = None,
                   since: int | None = None) -> Frame:
        """``join`` → the ``snapshot`` (or ``ok`` after the missed events, with ``since``)."""
        msg: Frame = {"type": "join", "table": table, "role": role}
        if seat is not None:
            msg["seat"] = seat
        if seed is not None:
            msg["seed"] = seed
        if since is not None:
            msg["since"] = since
        return await self.request(msg)

    async def act(self, table: str, action: Frame, turn: int | None = None) -> Frame:
        """``act`` → ``ok``; ``turn`` names the turn the action is for (stale → ``stale_turn``)."""
        msg: Frame = {"type": "act", "table": table, "action": action}
        if turn is not None:
            msg["turn"] = turn
        return await self.request(msg)

    async def leave(self, table: str) -> Frame:
        return await self.request({"type": "leave", "table": table})

    async def ping(self) -> Frame:
        return await self.request({"type": "ping"})

    # -- reading ------------------------------------------------------------
    async def next_frame(self, timeout: float = 10.0) -> Frame:
        """The next frame from :attr:`inbox`."""
        return await asyncio.wait_for(self.inbox.get(), timeout)

    async def next_event(self, table: str | None = None, timeout: float = 10.0,
                         where: Callable[[Frame], bool] | None = None) -> Frame:
        """The next ``event`` frame (of ``table``, matching ``where``), skipping others."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            frame = await self.next_frame(max(0.001, deadline - loop.time()))
            if frame.get("type") != "event" or (table is not None and frame.get("table") != table):
                continue
            if where is None or where(frame):
                return frame
