"""The Python client library of protocol v1 (``protocol/SPEC.md``), asyncio.

One :class:`Client` is one websocket connection (either subprotocol) with:

* requests matched to replies by ``id``/``re``: :meth:`Client.hello`,
  :meth:`~Client.create_table`, :meth:`~Client.join`, :meth:`~Client.act`,
  :meth:`~Client.leave`, :meth:`~Client.chat`, :meth:`~Client.rename`,
  :meth:`~Client.ping`, and the owner's controls of a table (1.5):
  :meth:`~Client.approve`, :meth:`~Client.deny`, :meth:`~Client.kick`,
  :meth:`~Client.ban`, :meth:`~Client.transfer`, :meth:`~Client.close_table`
  (an ``error`` reply raises
  :class:`ServerError` with its ``code``); and over HTTP the game catalogue,
  :meth:`~Client.games` (the games, seats, options and bots ``create_table``
  accepts);
* the frames that are not replies (events, snapshots sent on their own) in
  :attr:`Client.inbox`, read with :meth:`~Client.events` (an async iterator),
  :meth:`~Client.next_event` or :meth:`~Client.next_frame`; ``batch`` frames
  are unpacked, and with ``group=True`` (protocol 1.7) each ``events`` frame
  is expanded into the ``event`` frames it stands for (:func:`expand_events`),
  so whoever reads the client sees ``event`` frames either way;
* ``seq`` tracking per table (:attr:`~Client.seqs`; :attr:`~Client.gaps`
  counts any ``seq`` that is not the previous one plus one);
* with ``reconnect=True``, automatic reconnection when the connection drops
  or the server closes it: ``hello`` with the token, then ``join`` of every
  table with ``since`` = the last ``seq`` held, so the event stream goes on
  without a gap (the server replays the missed events, or sends a fresh
  ``snapshot`` when they are no longer buffered; both arrive in the inbox like
  any event). Whatever the close code: 1001 (the server or its node is going
  away) and 4012 (a node of the service lost track of a table the connection
  watches, protocol 1.2) ask for exactly this, and a code the client does not
  know means the same (SPEC "Closing codes", "Versioning"); it resumes after
  4008 (flooding) and a dropped connection (4009 aborts it) too. Never after
  :meth:`Client.close`, nor after it closed the connection itself over a
  schema violation;
* optional checking of every frame against the JSON Schemas
  (:class:`cardhall.protocol.schemas.FrameValidator`): per client (``validator=``) or
  for every client (:func:`set_default_validator`; the test suite turns it on).
  Checking is opt-in: this module never imports the schemas module (nor its
  library, ``jsonschema``, a test dependency) unless a validator is in use, so a
  plain ``pip install cardhall`` runs every client.

Typed shapes of the frames: :mod:`cardhall.protocol.frames`.

Example: play a seat of a no-limit table against a bot, checking whenever that
is free and folding otherwise, until the match ends (small stacks and a quick
bot: a few seconds)::

    import asyncio
    from cardhall.clients.client import Client

    async def main(url="ws://127.0.0.1:8000/ws"):
        async with Client(url, codec="json", reconnect=True) as c:
            await c.hello("ann")
            table = await c.create_table("no_limit_holdem", seats=2, bots=1,
                                         options={"starting_stacks": 200, "bot_think": 0.1})
            me = (await c.join(table, role="player"))["you"]    # our seat
            async for frame in c.events(table):
                if frame["type"] == "event" and frame["event"]["type"] == "match_ended":
                    return frame["event"]["result"]
                turn = frame.get("turn")
                if turn is None or turn["seat"] != me:
                    continue                                    # not our turn
                if turn.get("continue"):    # solo play: the table waits for us between streets and hands
                    await c.act(table, {"type": "continue"}, turn=turn["id"])
                else:                       # our decision: the legal actions came with it
                    types = {a["type"] for a in frame["legal"]}
                    action = {"type": "check"} if "check" in types else {"type": "fold"}
                    await c.act(table, action, turn=turn["id"])

    print(asyncio.run(main()))              # the result: {'ranking': ..., 'winners': [...], ...}

(One person with bots is solo play: the table waits for that person's
``{"type": "continue"}`` between streets and hands, a turn with ``continue:
true`` and no ``legal``, G-4. ``clients/bots.py`` shows a complete player;
``tests/test_docs_examples.py`` runs this example against a live server.)
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import urllib.request
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from cardhall.protocol import compact
from cardhall.protocol.codec import CODECS, JSON, MSGPACK
from cardhall.protocol.errors import ProtocolError
from cardhall.protocol.frames import expand_events

if TYPE_CHECKING:
    from cardhall.protocol.frames import Catalogue
    from cardhall.protocol.schemas import FrameValidator

log = logging.getLogger("cardhall.client")

Frame = dict[str, Any]

#: the validator every client uses unless given its own (None: no checking)
DEFAULT_VALIDATOR: FrameValidator | None = None

#: the events about a player that change how this client rejoins a table (1.5, SPEC "Private tables")
_ABOUT_ME = frozenset({"seat_approved", "seat_denied", "seat_request_lapsed", "kicked", "banned"})
#: how many requests given up on (timed out) are remembered, so that their late replies are dropped
_ABANDONED_KEPT = 256

#: put in the inbox when the connection is gone for good (readers stop on it)
_END: Frame = {"type": "_end"}


def http_base(ws_url: str) -> str:
    """``http://host:port`` of a ``ws://host:port/ws`` URL (``wss`` gives ``https``):
    where the server's HTTP API (``GET /api/games``, ``/api/tables`` ...) is.

    >>> http_base("ws://127.0.0.1:8000/ws")
    'http://127.0.0.1:8000'
    """
    parts = urlsplit(ws_url)
    scheme = "https" if parts.scheme == "wss" else "http"
    return f"{scheme}://{parts.netloc}"


def fetch_json(url: str, timeout: float = 10.0) -> Any:
    """``GET url`` and its JSON body (blocking: run it in a thread from
    asyncio). Raises ``urllib.error.URLError`` / ``HTTPError`` on failure."""
    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (the server's own http(s) URL)
        return json.loads(r.read())


def set_default_validator(validator: FrameValidator | None) -> FrameValidator | None:
    """Check every frame of every :class:`Client` created or used from now on
    with ``validator`` (None: stop checking); returns the previous one.

    >>> from cardhall.protocol.schemas import FrameValidator
    >>> previous = set_default_validator(FrameValidator())
    >>> set_default_validator(previous) is not None
    True
    """
    global DEFAULT_VALIDATOR
    previous, DEFAULT_VALIDATOR = DEFAULT_VALIDATOR, validator
    return previous


class ServerError(Exception):
    """An ``error`` frame answering a request: ``code`` (SPEC "Errors"), ``message``, ``frame``."""

    def __init__(self, frame: Frame) -> None:
        self.frame = frame
        self.code: str = frame.get("code", "")
        self.message: str = frame.get("message", "")
        super().__init__(f"{self.code}: {self.message}")


class Client:
    """One connection to a cardhall server.

    ``url``: ``ws://host:port/ws``. ``codec``: ``"msgpack"`` (binary frames) or
    ``"json"`` (text frames). ``batch``: accept ``batch`` frames (several
    frames in one websocket message). ``group``: say ``hello`` with ``group:
    true`` (protocol 1.7): the server sends each step's events of a table as one
    ``events`` frame, which this client expands into its ``event`` frames
    (:func:`expand_events`) before anything else sees them, so the inbox,
    ``on_frame``, :meth:`dispatch`, :attr:`frames` and :attr:`seqs` hold
    ``event`` frames as without it. ``compact``: say ``hello`` with ``compact:
    true`` (protocol 1.8): each step's events come as a compact array, which
    this client expands (:func:`cardhall.protocol.compact.expand`, under the
    ``welcome``'s ``layouts``) into the same ``event`` frames. ``on_frame``: if given, called with every
    frame that is not a reply instead of queueing it in :attr:`inbox`.
    ``record``: keep every frame received in :attr:`frames`, every message
    sent in :attr:`sent`, and both in order in :attr:`transcript`.
    ``origin``: the ``Origin`` header (as a browser would send). ``reconnect``: reconnect by itself and
    resume every table with ``since`` when the connection drops or the server closes it, whatever the
    close code (1001, 4012, a code it does not know, 4008 too; not after :meth:`close`, nor after a
    schema violation), for up to ``reconnect_for`` seconds of trying.
    ``local_addr``: ``(host, port)`` to bind the client's socket to (a load
    generator spreads its connections over 127.0.0.0/8 this way, to stay under a
    server's per-address connection limit).
    ``validator``: check frames against the schemas (default: the module's
    :data:`DEFAULT_VALIDATOR`); a server frame that does not match raises
    :class:`cardhall.protocol.schemas.SchemaViolation` from the pending request or the
    next read, and a client message that does not match must be refused by
    the server (an ``error`` reply), else the same is raised.

    Cancellation: a task cancelled while it waits in a method here (a Ctrl-C
    cancels a command's main task) gets CancelledError, whatever else happens
    in the same step of the loop. Every bounded wait is ``asyncio.timeout``
    around a plain ``await``, never ``asyncio.wait_for``: Python 3.11's
    ``wait_for`` returns the awaited result when it completes in the step that
    delivers the caller's cancellation (a reply arriving with the Ctrl-C), and
    the cancellation is lost (``cardhall bot`` would play on).
    """

    def __init__(self, url: str, *, codec: str = "msgpack", batch: bool = True, group: bool = False,
                 compact: bool = False, record: bool = False,
                 on_frame: Callable[[Frame], None] | None = None, origin: str | None = None,
                 reconnect: bool = False, reconnect_for: float = 30.0,
                 validator: FrameValidator | None = None, local_addr: tuple[str, int] | None = None) -> None:
        if codec not in ("msgpack", "json"):
            raise ValueError("codec is 'msgpack' or 'json'")
        self.url = url
        self.subprotocol = MSGPACK if codec == "msgpack" else JSON
        self.codec = CODECS[self.subprotocol]
        self.batch = batch
        self.group = group
        self.compact = compact
        #: the layouts of compact arrays, from the last ``welcome`` (1.8)
        self.layouts: list[Any] = []
        self.record = record
        self.on_frame = on_frame
        self.origin = origin
        self.reconnect = reconnect
        self.reconnect_for = reconnect_for
        self.validator = validator
        self.local_addr = local_addr
        self.ws: ClientConnection | None = None
        self.player: str | None = None
        self.token: str | None = None
        self.name: str | None = None
        self.inbox: asyncio.Queue[Frame] = asyncio.Queue()
        self.frames: list[Frame] = []
        self.sent: list[Frame] = []
        #: with ``record``: every message in order, ``{"send": message}`` or ``{"recv": frame}``
        self.transcript: list[dict[str, Frame]] = []
        self.seqs: dict[str, int] = {}
        #: table -> role (``player``/``spectator``) of every table joined, rejoined after a reconnect
        self.joined: dict[str, str] = {}
        #: tables where this player's request for a seat waits for the owner (1.5): a reconnect asks again
        self.asking: set[str] = set()
        self.gaps = 0
        self.reconnects = 0
        #: the close code of every websocket this client had, in order (None: dropped without a close frame)
        self.close_codes: list[int | None] = []
        self.error: BaseException | None = None
        self.closed: asyncio.Future[tuple[int | None, str]] | None = None
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future[Frame]] = {}
        #: ids of the latest requests given up on (their ``timeout`` passed): a late reply to one is dropped,
        #: not passed on as a frame nobody asked for (in order, at most :data:`_ABANDONED_KEPT`)
        self._abandoned: dict[Any, None] = {}
        self._must_refuse: dict[Any, list[str]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._closing = False
        self._ended = False

    @property
    def checker(self) -> FrameValidator | None:
        """The validator in use (this client's, else the module default)."""
        return self.validator if self.validator is not None else DEFAULT_VALIDATOR

    # -- connection ---------------------------------------------------------
    async def connect(self) -> Client:
        """Open the websocket and start reading; raises the websocket library's
        errors when the handshake fails (``InvalidStatus`` for a 403), and
        ConnectionRefusedError naming the URL when nothing listens there."""
        try:
            await self._open()
        except ConnectionRefusedError as exc:  # asyncio's message names a socket address, not the URL
            raise ConnectionRefusedError(exc.errno, f"{self.url}: connection refused") from exc
        return self

    async def _open(self, ready: bool = True) -> None:
        kwargs: dict[str, Any] = {"subprotocols": [self.subprotocol], "max_size": 2**24, "compression": None}
        if self.origin is not None:
            kwargs["origin"] = self.origin
        if self.local_addr is not None:
            kwargs["local_addr"] = self.local_addr
        ws = await connect(self.url, **kwargs)
        self.ws = ws
        loop = asyncio.get_running_loop()
        self.closed = loop.create_future()
        self.closed.add_done_callback(self._closed)
        self._reader = loop.create_task(self._read(ws, self.closed))
        if ready:  # a reconnect is ready only once it has resumed its tables
            self._ready.set()

    def _closed(self, fut: asyncio.Future[tuple[int | None, str]]) -> None:
        if not fut.cancelled() and fut.exception() is None:
            self.close_codes.append(fut.result()[0])

    @property
    def resuming(self) -> bool:
        """A reconnect is under way (its tables are not resumed yet)."""
        return self._reconnecting is not None and not self._reconnecting.done()

    async def __aenter__(self) -> Client:
        return await self.connect()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection (no reconnect); readers of :meth:`events` stop.
        The reader gets 5 s after the closing handshake to take the last frames.
        Cancelled meanwhile (Ctrl-C), it stops the reader and the readers of
        :meth:`events` all the same, and raises CancelledError: the caller's
        cancellation is never swallowed here (see :class:`Client`, "Cancellation")."""
        self._closing = True
        if self._reconnecting is not None:
            self._reconnecting.cancel()
        try:
            if self.ws is not None:
                await self.ws.close()
            if self._reader is not None:
                await asyncio.wait({self._reader}, timeout=5)  # neither raises the reader's end nor hides ours
        finally:
            if self._reader is not None and not self._reader.done():
                self._reader.cancel()
            self._end()

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            if self.on_frame is None:
                self.inbox.put_nowait(_END)

    async def _read(self, ws: ClientConnection, closed: asyncio.Future[tuple[int | None, str]]) -> None:
        load = self.codec.load
        try:
            async for payload in ws:
                frame = load(payload, 1 << 30)
                if not isinstance(frame, (dict, list)):
                    raise ProtocolError("malformed", "a frame is a map or a compact array")
                violation = self._violation(frame)
                if violation is not None:
                    self.error = violation
                    log.error("schema violation: %s", violation)
                    await ws.close(1002, "schema violation")
                    break
                for inner in frame["frames"] if isinstance(frame, dict) and frame.get("type") == "batch" else (frame,):
                    if isinstance(inner, list):  # 1.8: a compact events frame
                        inner = compact.expand(inner, self.layouts)
                    if inner.get("type") == "events":  # 1.7: the event frames it stands for, in order
                        for event in expand_events(inner):
                            self.dispatch(event)
                    else:
                        if inner.get("type") == "welcome":  # 1.8: what compact arrays are written under
                            self.layouts = inner.get("layouts") or []
                        self.dispatch(inner)
        except Exception:  # the connection went away
            pass
        finally:
            rcvd = ws.protocol.close_rcvd
            if not closed.done():
                closed.set_result((rcvd.code if rcvd else None, rcvd.reason if rcvd else ""))
            failure: BaseException = self.error if self.error is not None else ConnectionError("connection closed")
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(failure)
            self._pending.clear()
            self._must_refuse.clear()
            if ws is self.ws:
                self._ready.clear()
                if self._reconnecting is not None and not self._reconnecting.done():
                    pass  # a reconnect under way retries by itself
                elif self.reconnect and not self._closing and self.error is None:
                    # whatever the close code: 1001 and 4012 ask for this, a code this client does not
                    # know means the same (SPEC "Versioning"); None: dropped without a close frame
                    log.info("connection to %s closed (code %s): reconnecting", self.url,
                             rcvd.code if rcvd else None)
                    self._reconnecting = asyncio.get_running_loop().create_task(self._reconnect())
                else:
                    self._end()

    def _violation(self, frame: Frame) -> Exception | None:
        """The :class:`~cardhall.protocol.schemas.SchemaViolation` of a server
        frame (a ``batch`` with the frames in it), None when it matches or no
        validator is in use: the frame does not match the schemas, or answers a
        message the schemas refuse without an ``error``. The schemas module is
        imported only here, behind a validator (checking is opt-in)."""
        checker = self.checker
        if checker is None and not self._must_refuse:
            return None
        from cardhall.protocol.schemas import SchemaViolation

        if checker is not None:
            try:
                checker.check_server(frame)
            except SchemaViolation as exc:
                return exc
        for inner in frame["frames"] if isinstance(frame, dict) and frame.get("type") == "batch" else (frame,):
            if not isinstance(inner, dict):  # a compact events array answers nothing
                continue
            re = inner.get("re")
            problems = self._must_refuse.pop(re, None) if isinstance(re, (int, str)) else None
            if problems is not None and inner.get("type") != "error":
                message = f"the server accepted a message the schemas refuse ({problems[0]})"
                if checker is not None:
                    checker.failures.append(message)
                return SchemaViolation(message)
        return None

    def dispatch(self, frame: Frame) -> None:
        """Handle one received frame (a ``batch`` arrives here frame by frame, an
        ``events`` frame event frame by event frame, after the validator in use,
        :attr:`checker`, passed it): track ``seq``, complete the pending
        request it answers (``re``), else hand it to ``on_frame`` or
        :attr:`inbox`. Subclasses extend it to observe every frame (replies
        included), calling ``super().dispatch(frame)``."""
        if self.record:
            self.frames.append(frame)
            self.transcript.append({"recv": frame})
        kind = frame.get("type")
        if kind == "event":
            table, seq = frame["table"], frame["seq"]
            last = self.seqs.get(table)
            if last is not None and seq != last + 1:
                self.gaps += 1
            self.seqs[table] = seq
            event = frame.get("event") or {}
            if event.get("type") in _ABOUT_ME and event.get("player") == self.player:
                self._about_me(table, event["type"])
        elif kind == "snapshot":
            self.seqs[frame["table"]] = frame["seq"]
        re = frame.get("re")
        if re is not None:
            fut = self._pending.pop(re, None)
            if fut is not None and not fut.done():
                fut.set_result(frame)
                return
            if re in self._abandoned:  # the one reply of a request given up on, too late
                del self._abandoned[re]
                log.debug("a late reply to request %r, given up on: %s", re, kind)
                return
        if self.on_frame is not None:
            self.on_frame(frame)
        else:
            self.inbox.put_nowait(frame)

    def _about_me(self, table: str, kind: str) -> None:
        """Follow what the owner did to this player at ``table`` (1.5), so that a
        reconnect joins it again as what it now is: a request answered or lapsed
        asks no more, a kicked player watches, a banned one is gone."""
        self.asking.discard(table)
        if kind in ("seat_denied", "seat_request_lapsed", "kicked") and table in self.joined:
            self.joined[table] = "spectator"
        elif kind == "banned":
            self.joined.pop(table, None)

    async def _reconnect(self) -> None:
        """Reconnect with backoff (0.05 s doubling to 2 s) for up to
        :attr:`reconnect_for` seconds: ``hello`` with the token, then ``join``
        every table with ``since`` (retried while it is ``unavailable``, within
        the same :attr:`reconnect_for`). A table that is gone, or still
        unavailable then, is dropped from :attr:`joined` (its error, e.g.
        ``unknown_table``, goes to the inbox)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.reconnect_for
        delay = 0.05
        while not self._closing:
            try:
                await self._open(ready=False)  # only the resume requests until it is done
                if self.token is not None:  # retried while unavailable (the node cannot read players yet)
                    await self._resume(self._hello_message(self.name or "player", token=self.token), deadline)
                async with asyncio.TaskGroup() as group:  # at once: one table still unavailable holds back no other
                    for table, role in list(self.joined.items()):
                        group.create_task(self._rejoin(table, role, deadline))
                self.reconnects += 1
                self._ready.set()
                log.info("reconnected to %s (%d tables resumed)", self.url, len(self.joined))
                return
            except ServerError as exc:  # the token is unknown: nothing to resume
                log.warning("reconnect refused: %s", exc)
                self.error = exc
                break
            except Exception as exc:  # refused, unreachable, dropped again
                if loop.time() + delay > deadline:
                    log.warning("giving up reconnecting to %s: %s", self.url, exc)
                    break
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
        self._end()

    async def _rejoin(self, table: str, role: str, deadline: float) -> None:
        """``join`` ``table`` again as ``role`` with ``since`` (:meth:`_resume`); a table refused
        (gone, or still unavailable at ``deadline``) is dropped from :attr:`joined`, its error put in
        the inbox; a snapshot in reply (the missed events are gone) goes to the inbox too."""
        msg: Frame = {"type": "join", "table": table, "role": role}
        if table in self.seqs:
            msg["since"] = self.seqs[table]
        if table in self.asking:
            msg["ask"] = True
        try:
            reply = await self._resume(msg, deadline)
        except ServerError as exc:
            self.joined.pop(table, None)
            self.inbox.put_nowait(exc.frame)
            return
        if reply.get("type") == "snapshot":
            self.inbox.put_nowait(reply)

    async def _resume(self, request: Frame, deadline: float) -> Frame:
        """Send a resuming ``hello`` or ``join``; ``unavailable`` (the table is
        moving between the service's nodes, or its store cannot be written or
        read: a failover may take many seconds) is retried every 0.25 s,
        doubling to 2 s, until the loop's time ``deadline`` (SPEC "Errors"),
        then raised as any other :class:`ServerError`."""
        loop = asyncio.get_running_loop()
        delay = 0.25
        while True:
            try:
                return await self._request(request)
            except ServerError as exc:
                if exc.code != "unavailable" or loop.time() + delay > deadline:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)

    # -- requests -----------------------------------------------------------
    async def send(self, message: Frame) -> None:
        """Send one message as is (no reply awaited); ConnectionError if the
        connection is closed."""
        assert self.ws is not None
        checker = self.checker
        if checker is not None:
            problems = checker.client_errors(message)
            rid = message.get("id")
            if problems and isinstance(rid, (int, str)) and not isinstance(rid, bool):
                self._must_refuse[rid] = problems
        if self.record:
            self.sent.append(message)
            self.transcript.append({"send": message})
        ws = self.ws
        try:
            await ws.send(self.codec.encode(message))
        except ConnectionClosed as exc:
            if ws is self.ws and self.reconnect and not self._closing:
                # the reader has not noticed yet: callers of wait_ready wait for the reconnect
                self._ready.clear()
            raise ConnectionError(f"connection closed: {exc}") from None

    async def send_raw(self, payload: bytes | str) -> None:
        """Send a payload as is (tests of malformed input)."""
        assert self.ws is not None
        await self.ws.send(payload)

    async def request(self, message: Frame, timeout: float = 10.0) -> Frame:
        """Send ``message`` with a fresh ``id`` and return the reply; raises
        :class:`ServerError` when the reply is an ``error``, ConnectionError
        when the connection drops first, TimeoutError when no reply came
        within ``timeout`` seconds (a reply arriving later is dropped, not
        put in :attr:`inbox`, as for a request its caller cancelled). While a reconnect is under way the request
        waits for it (within ``timeout``)."""
        if not self._ready.is_set():
            if self._ended:
                raise ConnectionError("connection closed")
            async with asyncio.timeout(timeout):
                await self._ready.wait()
        return await self._request(message, timeout)

    async def wait_ready(self, timeout: float | None = 30.0) -> None:
        """Wait until the connection is up (a reconnect under way has finished);
        ConnectionError if the client is closed or gave up."""
        if not self._ready.is_set():
            if self._ended:
                raise ConnectionError("connection closed")
            async with asyncio.timeout(timeout):
                await self._ready.wait()
        if self._ended:
            raise ConnectionError("connection closed")

    async def _request(self, message: Frame, timeout: float = 10.0) -> Frame:
        if self.error is not None:
            raise self.error
        rid = next(self._ids)
        fut: asyncio.Future[Frame] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        try:
            await self.send({**message, "id": rid})
            async with asyncio.timeout(timeout):
                reply = await fut
        finally:
            self._pending.pop(rid, None)
            if fut.cancelled():  # given up on (its timeout, or the caller's own): a reply may still come
                abandoned = self._abandoned
                abandoned[rid] = None
                if len(abandoned) > _ABANDONED_KEPT:
                    del abandoned[next(iter(abandoned))]
        if reply.get("type") == "error":
            raise ServerError(reply)
        return reply

    async def hello(self, name: str = "player", token: str | None = None, auth: str | None = None) -> Frame:
        """``hello`` → ``welcome``; remembers the player id and token (a later
        reconnect resumes this player with the token).

        ``token``: resume a player known to the server (G-5); default: the token
        this client already holds, if any. ``auth``: a JWT from the server's
        operator (SPEC "Identity"): this client is that account's player (sent
        instead of a token). Raises ServerError ``bad_auth``, ``auth_required``,
        ``unknown_token`` and the others of ``hello``."""
        token = token if token is not None else self.token
        reply = await self.request(self._hello_message(name, token=token, auth=auth))
        self.player, self.token, self.name = reply["player"], reply["token"], reply["name"]
        return reply

    def _hello_message(self, name: str, token: str | None = None, auth: str | None = None) -> Frame:
        """The ``hello`` this client says: ``batch`` always, ``group`` when
        true (1.7; an older server ignores it and sends ``event`` frames, which
        this client reads all the same), ``compact`` when true (1.8; likewise), ``auth`` or ``token`` when given."""
        msg: Frame = {"type": "hello", "name": name, "batch": self.batch}
        if self.group:
            msg["group"] = True
        if self.compact:
            msg["compact"] = True
        if auth is not None:
            msg["auth"] = auth
        elif token is not None:
            msg["token"] = token
        return msg

    async def create_table(self, game: str, seats: int | None = None, options: Frame | None = None,
                           bots: int | list[str | None] | None = None) -> str:
        """``create_table`` → the new table's id. ``options``: table and game
        options (SPEC "Games"); ``bots``: a count or bot names (None: the
        game's default bot), seated in the last seats."""
        msg: Frame = {"type": "create_table", "game": game}
        if seats is not None:
            msg["seats"] = seats
        if options is not None:
            msg["options"] = options
        if bots is not None:
            msg["bots"] = bots
        return (await self.request(msg))["table"]

    async def join(self, table: str, role: str = "player", seat: int | None = None, seed: str | None = None,
                   since: int | None = None, *, invite: str | None = None, password: str | None = None,
                   ask: bool = False) -> Frame:
        """``join`` → the ``snapshot``, or, with ``since``, ``ok`` after the missed
        events (which arrive in the inbox first). Joining again returns a fresh
        snapshot (the state now). ``seed``: a client seed for the next match (G-2).

        A private table (1.5, SPEC "Private tables"): ``invite``, the secret of
        its invite link (required for an unlisted table); ``password``, its
        password; ``ask``: ask the owner for a seat at a table with
        ``approve_seats`` (the answer is a snapshot as a spectator with
        ``pending: true``; the owner's answer comes as a ``seat_approved``,
        ``seat_denied`` or ``seat_request_lapsed`` event). Each is sent only
        when given (``ask`` only when true). A table lets a player in once: a
        later join, and a reconnect's, needs neither the invite nor the
        password; a reconnect while the request waits asks again.

        Raises :class:`ServerError`: ``unknown_table`` (no such table, or an
        unlisted one without its invite), ``bad_password``,
        ``approval_required`` (join with ``ask=True``), ``seat_denied`` (the
        owner refused this player a seat until the next rematch), ``banned``,
        ``kicked`` (as a player, until the match it was kicked from ends),
        ``table_full``, ``seat_taken``, ``match_running``, ``already_seated``,
        ``rate_limited`` (too many passwords tried), ``bad_request``."""
        given = {"seat": seat, "seed": seed, "since": since, "invite": invite, "password": password,
                 "ask": True if ask else None}
        msg: Frame = {"type": "join", "table": table, "role": role,
                      **{key: value for key, value in given.items() if value is not None}}
        reply = await self.request(msg)
        self.joined[table] = role
        if reply.get("pending"):
            self.asking.add(table)
        else:
            self.asking.discard(table)
        return reply

    async def act(self, table: str, action: Frame, turn: int | None = None, timeout: float = 10.0) -> Frame:
        """``act`` → ``ok``. ``action``: a game action (``{"type": "raise",
        "amount": 60}``) or a table control (``{"type": "continue"}``);
        ``turn``: the turn id the action is for (a passed turn: ``stale_turn``);
        ``timeout``: seconds to wait for the answer (:meth:`request`)."""
        msg: Frame = {"type": "act", "table": table, "action": action}
        if turn is not None:
            msg["turn"] = turn
        return await self.request(msg, timeout)

    # -- the host's controls (1.5, SPEC "Private tables", "The host's controls") ------------------
    # Each is a table control sent with act: ok, or ServerError not_owner (the sender does not own the
    # table), not_joined (the owner has not joined it), unknown_table, table_closed, and bad_request
    # (``player`` missing, not a public id of 1 to 64 characters, or the owner's own).

    async def approve(self, table: str, player: str) -> Frame:
        """Seat ``player`` (a public id), whose request for a seat waits, in the
        seat it asked for if still free, else the lowest free one (events
        ``seat_approved`` then ``seated``). Raises :class:`ServerError`
        ``not_owner``, ``bad_request`` (``player`` is not asking), ``table_full``
        (no free seat: the request stays), ``match_running``."""
        return await self.act(table, {"type": "approve", "player": player})

    async def deny(self, table: str, player: str) -> Frame:
        """Refuse ``player`` the seat it asked for (event ``seat_denied``; its
        joins as player get ``seat_denied`` until the table's next rematch).
        Raises :class:`ServerError` ``not_owner``, ``bad_request`` (``player``
        is not asking)."""
        return await self.act(table, {"type": "deny", "player": player})

    async def close_table(self, table: str) -> Frame:
        """Close ``table`` for everyone (its last event: ``closed`` with reason
        ``owner``; later requests get ``unknown_table``). Raises
        :class:`ServerError` ``not_owner``, ``not_joined``."""
        return await self.act(table, {"type": "close"})

    async def kick(self, table: str, player: str) -> Frame:
        """Take ``player``'s seat (by the ``leave`` rule: sat out until the match
        ends, freed between matches); its connections watch as spectators and it
        sits again only after the match ends (event ``kicked``). Raises
        :class:`ServerError` ``not_owner``, ``bad_request``, ``bad_state``
        (``player`` neither seated nor watching here)."""
        return await self.act(table, {"type": "kick", "player": player})

    async def ban(self, table: str, player: str) -> Frame:
        """Remove ``player`` from the table for as long as it is open: its seat
        as for :meth:`kick`, its connections stop watching, its joins get
        ``banned`` (event ``banned``; ``player`` need not be at the table).
        Raises :class:`ServerError` ``not_owner``, ``bad_request``,
        ``bad_state`` (banned already)."""
        return await self.act(table, {"type": "ban", "player": player})

    async def transfer(self, table: str, player: str) -> Frame:
        """Hand the table over: ``player``, who holds a seat of its own here,
        owns it from now on (event ``owner_changed`` with reason ``transfer``);
        this player is then one like any other. Raises :class:`ServerError`
        ``not_owner``, ``bad_request``, ``bad_state`` (``player`` holds no seat
        here: a spectator, a bot, a seat it was kicked from)."""
        return await self.act(table, {"type": "transfer", "player": player})

    async def chat(self, table: str, text: str) -> Frame:
        """``chat`` → ``ok`` (1.1, SPEC "Chat"): a message to ``table``, which
        every viewer then receives as a ``chat`` event."""
        return await self.request({"type": "chat", "table": table, "text": text})

    async def rename(self, name: str) -> str:
        """``rename`` → ``ok`` (1.4, SPEC "Names"): this player's name from now
        on, at every table where it sits or watches (each gets a ``renamed``
        event; seats and owned tables stay its own). Returns the name as the
        server keeps it (normalised), also remembered for a reconnect.
        Raises :class:`ServerError` (``bad_request``: a name the server
        refuses; ``rate_limited``; ``unavailable``)."""
        reply = await self.request({"type": "rename", "name": name})
        self.name = str(reply["name"])
        return self.name

    async def leave(self, table: str) -> Frame:
        """``leave`` → ``ok``: stop following ``table`` (a seat is freed between
        matches, sat out during one, G-5)."""
        reply = await self.request({"type": "leave", "table": table})
        self.joined.pop(table, None)
        self.asking.discard(table)
        return reply

    async def ping(self) -> Frame:
        """``ping`` → ``pong``."""
        return await self.request({"type": "ping"})

    async def games(self, timeout: float = 10.0) -> Catalogue:
        """``GET /api/games`` on this client's server (no websocket needed):
        ``{"games": [...], "table_options": [...]}``, each game with ``name``
        (for :meth:`create_table`), ``title``, ``seats`` (``min``, ``max``,
        ``default``), ``options`` (``name``, ``type``, ``default``,
        ``nullable``, ``meaning``, and ``min``/``max``/``choices``/``rule``
        where they apply), ``bots`` and ``default_bot`` (SPEC "HTTP").
        Checked against the schemas when a validator is in use. Raises
        ``urllib.error.URLError`` when the server cannot be reached."""
        body = await asyncio.to_thread(fetch_json, http_base(self.url) + "/api/games", timeout)
        checker = self.checker
        if checker is not None:
            checker.check_catalogue(body)
        return body  # type: ignore[no-any-return]

    # -- reading ------------------------------------------------------------
    async def next_frame(self, timeout: float = 10.0) -> Frame:
        """The next frame from :attr:`inbox`; ConnectionError once the
        connection is gone for good (after the frames already received)."""
        async with asyncio.timeout(timeout):
            frame = await self.inbox.get()
        if frame is _END:
            self.inbox.put_nowait(_END)  # every later read ends too
            if self.error is not None:
                raise self.error
            raise ConnectionError("connection closed")
        return frame

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

    async def events(self, table: str | None = None) -> AsyncIterator[Frame]:
        """Every ``event`` frame (of ``table``) in ``seq`` order, and any
        ``snapshot`` the server sends on its own (after a reconnect whose
        missed events were no longer buffered: the state starts afresh there).
        Other frames (errors without a request) are skipped. Ends when the
        client is closed or gives up reconnecting."""
        while True:
            try:
                frame = await self.next_frame(timeout=None)  # type: ignore[arg-type]
            except ConnectionError:
                return
            if frame.get("type") in ("event", "snapshot") and (table is None or frame.get("table") == table):
                yield frame
