"""The ``/ws`` endpoint: handshake checks, the reading loop, request dispatch.

A raw ASGI app (no per-message wrapper objects). Per frame: decode (at most
``max_frame`` bytes), rate limit (a refused frame is answered with its ``re``),
check ``type`` and ``id``, then either answer at once (``ping``, ``hello``,
``create_table``, ``rename``) or post the request to the table's mailbox as a typed input
(:class:`~cardhall.server.table.inputs.Join`, ``Act``, ``Leave``: the raw
fields, checked by the table in its step), whose actor answers after its
checkpoint. Every frame is built with :mod:`cardhall.protocol.frames`.

Where the websocket layer offers ``cardhall.receiver`` (server/ws_protocol.py),
the frames nothing in which waits (an ``act`` or ``leave`` for a table this node
serves, a ``ping``) are handled inside the read that brought them, with no ASGI
message and no task switch; every other frame, and every frame read while the
connection's task still handles one, goes through the task, so a connection's
frames are handled in the order it sent them.
"""

from __future__ import annotations

import itertools
import logging
import secrets
import time
from typing import Any

from cardhall.protocol import frames
from cardhall.protocol.codec import CODECS, choose_subprotocol
from cardhall.protocol.errors import ProtocolError
from cardhall.server import layouts as event_layouts
from cardhall.server.auth import Gate
from cardhall.server.chat import checked_text
from cardhall.server.connection import CLOSE_RATE_LIMITED, Connection
from cardhall.server.hall import Hall
from cardhall.server.names import DEFAULT_NAME, checked_name
from cardhall.server.players import Player
from cardhall.server.private_access import private_access
from cardhall.server.ratelimit import TokenBucket
from cardhall.server.renaming import rename
from cardhall.server.table.inputs import Act, Chat, Join, Leave, Request
from cardhall.server.ws_protocol import ABORT, BUCKET, RECEIVER, SEND_NOW

log = logging.getLogger("cardhall.session")

#: connection ids: subscriber keys here, and "<node>/<id>" on other nodes of a cluster. They start
#: at a random point, so a node restarted with its id never reuses an id an owner still remembers.
_ids = itertools.count(secrets.randbits(40))

#: the client message types of protocol v1 (``chat``: 1.1, ``rename``: 1.4)
CLIENT_TYPES = {"hello", "create_table", "join", "act", "leave", "ping", "chat", "rename"}


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _own_origin(scope: dict[str, Any]) -> str | None:
    """The origin of the page this server serves itself at ``/`` as a browser
    names it: ``http://`` or ``https://`` (``wss`` scope) and the request's own
    ``Host`` header, lowercase; None without a Host. A page loaded from this
    server is always allowed to connect, whatever ``allowed_origins`` lists
    (deploy/README.md). Behind a TLS proxy the scheme is right only when the
    proxy is a ``--trusted-proxy`` (its ``X-Forwarded-Proto`` is then believed)."""
    host = _header(scope, b"host")
    if not host:
        return None
    scheme = "https" if scope.get("scheme") == "wss" else "http"
    return f"{scheme}://{host}".lower()


class WebSocketEndpoint:
    """ASGI app for ``/ws`` bound to a :class:`Hall`."""

    def __init__(self, hall: Hall) -> None:
        self.hall = hall
        #: who may say hello: the operator's key file is read here, once (KeyFileError when unusable)
        self.gate = Gate.from_settings(hall.settings)
        #: private tables' invites and passwords, checked before a join is posted (SPEC "Private tables")
        self.private = private_access(hall)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        hall = self.hall
        settings = hall.settings
        message = await receive()
        if message["type"] != "websocket.connect":
            return
        origin = _header(scope, b"origin")
        own = _own_origin(scope)
        scope["headers"] = ()  # read: not kept for the connection's whole life
        address = (scope.get("client") or ("", 0))[0]
        refuse = None
        if (settings.allowed_origins and origin is not None and origin not in settings.allowed_origins
                and origin.lower() != own):
            refuse = f"origin {origin!r} not allowed"
        elif not hall.accepting:
            refuse = "shutting down"
        subprotocol = choose_subprotocol(list(scope.get("subprotocols") or ()))
        if subprotocol is None:
            refuse = "no supported subprotocol offered"
        # websockets per client address (the forwarded one behind a trusted proxy): counted by the
        # hall's limits, across every node on one Redis (SPEC "Limits"); counted until the finally below
        if refuse is None and not await hall.limits.open_socket(address):
            refuse = "too many connections from this address"
        if refuse is not None or subprotocol is None:
            log.info("refused websocket from %s: %s", address, refuse)
            await send({"type": "websocket.close", "code": 1008, "reason": refuse})
            return
        accept: dict[str, Any] = {"type": "websocket.accept"}
        if scope.get("subprotocols"):
            accept["subprotocol"] = subprotocol
        try:
            await send(accept)
        except BaseException:
            hall.limits.close_socket(address)
            raise
        extensions = scope.get("extensions") or {}
        conn = Connection(
            next(_ids), CODECS[subprotocol], send, limit=settings.send_queue, address=address,
            abort=extensions.get(ABORT), on_sent=hall.metrics.sent, on_drop=hall.connection_dropped,
            send_now=extensions.get(SEND_NOW),
        )
        # the websocket layer's bucket, when it has one, also takes the client's ping and pong frames
        conn.bucket = extensions.get(BUCKET) or TokenBucket(settings.rate, settings.burst, time.monotonic())
        hall.connections.add(conn)
        conn.start()
        reading = _Reading(self, conn)
        receiver = extensions.get(RECEIVER)
        if receiver is not None:  # the frames nothing in which waits: handled inside the read
            receiver(reading.at_once)
        try:
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    break
                payload = message.get("bytes")
                if payload is None:
                    payload = message.get("text")
                if payload is None or conn.closed or conn.ignore_input:
                    continue
                decoded = reading.declined_as(payload)
                reading.busy = True  # the frames read meanwhile queue behind this one
                try:
                    await self.frame(conn, payload, decoded)
                finally:
                    reading.busy = False
        finally:
            hall.limits.close_socket(address)
            if not conn.closed:
                conn.closed = True
                hall.disconnect(conn)
            await conn.finish()

    def decoded(self, conn: Connection, payload: bytes | str) -> tuple[dict[str, Any] | None, ProtocolError | None]:
        """A client frame decoded (at most ``max_frame`` bytes): (the message,
        None), or (None, the ProtocolError ``malformed`` that answers it)."""
        try:
            if isinstance(payload, str) == conn.codec.binary:  # SPEC: a binary frame on JSON is malformed too
                raise ProtocolError("malformed", f"{conn.codec.name} carries {'binary' if conn.codec.binary else 'text'} frames")
            return conn.codec.decode(payload, self.hall.settings.max_frame), None
        except ProtocolError as exc:
            return None, exc

    def admitted(self, conn: Connection, msg: dict[str, Any] | None, received: float) -> bool:
        """The frame ``msg`` (None: undecodable) passes the rate limit (SPEC
        "Limits"); False: it was answered ``rate_limited``, or past
        ``rate_strikes`` such answers the connection is closing with 4008."""
        if self.answers_turn(conn, msg) or conn.bucket.take(received):
            return True
        hall = self.hall
        conn.strikes += 1
        hall.metrics.error("rate_limited")
        if conn.strikes > hall.settings.rate_strikes:
            # still reading, so close in order: queued frames first, then the close frame
            hall.metrics.dropped.labels("rate_limited").inc()
            conn.ignore_input = True
            conn.close(CLOSE_RATE_LIMITED, "rate_limited")
        else:
            conn.send(ProtocolError("rate_limited", "too many frames; slow down").frame(request_id(msg)))
        return False

    def quick(self, conn: Connection, msg: dict[str, Any], received: float) -> bool:
        """Handle the decoded frame ``msg`` (read at ``received``, monotonic
        seconds) at once when nothing in it waits: an ``act`` or a ``leave``
        for a table this node serves, or a ``ping``, from a connection that
        said hello (True). False for every other frame, with nothing of it
        counted or answered yet: :meth:`frame` handles it from the
        connection's task. Answers and errors are those :meth:`frame` gives."""
        if conn.player is None:
            return False
        kind = msg.get("type")
        table_id = msg.get("table")
        if kind == "ping":
            table_id = None
        elif kind not in ("act", "leave") or not isinstance(table_id, str) or table_id not in self.hall.tables:
            return False
        if not self.admitted(conn, msg, received):
            return True
        try:
            rid = checked(msg)
            if table_id is None:
                conn.send(frames.pong(rid))
            else:
                self.hall.post_here(conn, table_id, table_request(kind, conn.id, conn.player, msg, received))
        except ProtocolError as exc:
            self.refused(conn, msg, exc)
        except Exception:
            self.failed(conn, msg)
        return True

    async def frame(self, conn: Connection, payload: bytes | str, msg: dict[str, Any] | None = None) -> None:
        """Handle one client frame (``msg``: ``payload`` already decoded, when
        it was); every failure becomes an ``error`` frame."""
        hall = self.hall
        received = time.monotonic()
        # decoded before the rate limit (at most max_frame), so even a refusal answers its request's id
        undecoded = None
        if msg is None:
            msg, undecoded = self.decoded(conn, payload)
        if not self.admitted(conn, msg, received):
            return
        try:
            if undecoded is not None or msg is None:
                raise undecoded or ProtocolError("malformed", "not a frame")
            rid = checked(msg)
            kind = msg["type"]
            if kind == "ping":
                conn.send(frames.pong(rid))
                return
            if kind == "hello":
                await self.hello(conn, msg)
                return
            if conn.player is None:
                raise ProtocolError("hello_required", "send hello first")
            if kind == "create_table":
                conn.send(frames.table_created(rid, await hall.create(msg, conn.player.id, conn.address)))
                return
            if kind == "rename":  # every table of the player's hears of it (server/renaming.py)
                conn.send(await rename(hall, conn.player, msg))
                return
            table_id = msg.get("table")
            if not isinstance(table_id, str):
                raise ProtocolError("bad_request", f"{kind} needs table: the id of a table (a string)")
            request = table_request(kind, conn.id, conn.player, msg, received)
            if isinstance(request, Join):  # a private table's invite and password, checked here (never posted)
                request = await self.private.join(conn.id, conn.address, table_id, request, msg)
            if isinstance(request, Chat):  # its text is checked first: a refused one is not counted
                # per player and per client address, all their connections on every node (SPEC "Chat")
                await hall.limits.chat(conn.player.id, conn.address)
            await hall.post(conn, table_id, request)
        except ProtocolError as exc:
            self.refused(conn, msg, exc)
        except Exception:
            self.failed(conn, msg)

    def refused(self, conn: Connection, msg: dict[str, Any] | None, exc: ProtocolError) -> None:
        """Answer the frame ``msg`` with ``exc``'s ``error`` frame (its ``re``: the frame's ``id``)."""
        self.hall.metrics.error(exc.code)
        conn.send(exc.frame(msg.get("id") if isinstance(msg, dict) else None))

    def failed(self, conn: Connection, msg: dict[str, Any] | None) -> None:
        """Log the unexpected exception being handled and answer the frame ``msg`` with ``internal``."""
        log.exception("connection %s: unexpected error", conn.id)
        self.refused(conn, msg, ProtocolError("internal", "unexpected server error"))

    def answers_turn(self, conn: Connection, msg: dict[str, Any] | None) -> bool:
        """True for an ``act`` that is free of the rate limit: the first to name
        a new turn of a table the connection joined
        (:class:`~cardhall.server.ratelimit.TurnCredit`)."""
        if msg is None or msg.get("type") != "act":
            return False
        table = msg.get("table")
        if not isinstance(table, str) or table not in conn.tables:
            return False
        return conn.turns.take(table, msg.get("turn"), self.hall.latest_seq(table))

    async def hello(self, conn: Connection, msg: dict[str, Any]) -> None:
        """``hello``: a new player (a guest), the player of ``token`` (G-5), or
        the player of the operator-issued ``auth`` token (SPEC "Identity");
        ``welcome``. A refused ``auth`` costs the connection more of its rate
        limit than one frame (:class:`~cardhall.server.auth.Gate`)."""
        name = checked_name(msg.get("name", DEFAULT_NAME))  # bad_request for a name that is not plain text
        token = msg.get("token")
        auth = msg.get("auth")
        batch = msg.get("batch", False)
        if not isinstance(batch, bool):
            raise ProtocolError("bad_request", "batch must be true or false")
        group = msg.get("group", False)
        if not isinstance(group, bool):
            raise ProtocolError("bad_request", "group must be true or false")
        compact = msg.get("compact", False)
        if not isinstance(compact, bool):
            raise ProtocolError("bad_request", "compact must be true or false")
        if token is not None and auth is not None:
            raise ProtocolError("bad_request", "send auth or token, not both")
        if conn.player is not None and conn.tables:
            raise ProtocolError("bad_state", "leave every table before saying hello again")
        players = self.hall.players
        if auth is not None:
            identity = self.gate.identify(auth, conn.bucket)
            player, token = await players.identified(identity.player, identity.name, name)
        elif token is None:
            self.gate.admit_guest()
            player, token = await players.create(name, conn.address)
        else:
            player = await players.by_token(token)
            self.gate.admit_resumed(player.id)
        conn.player = player
        conn.batch = batch
        layouts = event_layouts.current() if compact else None
        conn.group = group or compact
        conn.compact = layouts
        conn.send(frames.welcome(msg.get("id"), player.id, player.name, token, group,
                                 layouts.entries() if layouts is not None else None))


class _Reading:
    """A connection's reading state: ``busy`` while its task handles a frame
    (the frames read meanwhile wait in the ASGI queue behind it, in order);
    ``declined``: the last frame the read left to the task, with what it
    decoded to (so a frame for a table on another node is decoded once)."""

    __slots__ = ("endpoint", "conn", "busy", "declined")

    def __init__(self, endpoint: WebSocketEndpoint, conn: Connection) -> None:
        self.endpoint = endpoint
        self.conn = conn
        self.busy = False
        self.declined: tuple[bytes | str, dict[str, Any]] | None = None

    def at_once(self, payload: bytes | str) -> bool:
        """The ``cardhall.receiver`` handler (server/ws_protocol.py): True when
        ``payload`` was handled now (:meth:`WebSocketEndpoint.quick`). It runs
        inside the websocket layer's read, so nothing may escape it: a fault
        leaves the frame to the task, whose handling answers it."""
        if self.busy:
            return False
        conn = self.conn
        if conn.closed or conn.ignore_input:
            return True
        try:
            received = time.monotonic()
            msg, _ = self.endpoint.decoded(conn, payload)
            if msg is None:
                return False
            if self.endpoint.quick(conn, msg, received):
                return True
            self.declined = (payload, msg)
            return False
        except Exception:
            log.exception("connection %s: unexpected error reading a frame", conn.id)
            return False

    def declined_as(self, payload: bytes | str) -> dict[str, Any] | None:
        """What ``payload`` decoded to when the read left it to the task (None:
        it was not decoded there; the task decodes it)."""
        declined, self.declined = self.declined, None
        if declined is not None and declined[0] == payload:
            return declined[1]
        return None


def checked(msg: dict[str, Any]) -> int | str | None:
    """The ``id`` of the decoded client frame ``msg`` (None without one)
    once its ``type`` is a client message type and no field is null.
    Raises ProtocolError ``bad_request`` (an ``id`` that is not an integer
    or a short string, a null field), ``unknown_type``. SPEC "Fields and types"."""
    kind = msg.get("type")
    rid = request_id(msg)
    if rid is None and msg.get("id") is not None:
        msg["id"] = None
        raise ProtocolError("bad_request", "id must be an integer or a short string")
    if not isinstance(kind, str) or kind not in CLIENT_TYPES:
        raise ProtocolError("unknown_type", f"unknown message type {kind!r}")
    nulls = [k for k, v in msg.items() if v is None and k != "id"]
    if nulls:  # SPEC "Fields and types": an optional field is omitted, never null
        raise ProtocolError("bad_request", f"{min(map(str, nulls))} is null: omit an optional field instead")
    return rid


def request_id(msg: dict[str, Any] | None) -> int | str | None:
    """The ``id`` of a decoded request ``msg`` when it is a valid one (an
    integer or a string of at most 64 characters, SPEC "Limits"), else None:
    what an error frame answering it carries as ``re``."""
    rid = msg.get("id") if msg is not None else None
    if isinstance(rid, bool) or not isinstance(rid, (int, str)) or (isinstance(rid, str) and len(rid) > 64):
        return None
    return rid


def table_request(kind: str, sub: int, player: Player, msg: dict[str, Any], received: float) -> Request:
    """The table input for a ``join``, ``act``, ``leave`` or ``chat`` frame
    ``msg`` from connection ``sub`` (its fields as sent: the table checks
    them; a chat's text is checked here, ProtocolError ``bad_request``);
    ``received``: monotonic seconds the frame was read."""
    rid = msg.get("id")
    if kind == "chat":
        return Chat(sub, player.id, player.name, rid, checked_text(msg.get("text")), received)
    if kind == "join":
        return Join(sub, player.id, player.name, rid, msg.get("role"), msg.get("seat"), msg.get("seed"),
                    msg.get("since"), received)
    if kind == "act":
        return Act(sub, player.id, rid, msg.get("action"), msg.get("turn"), received)
    return Leave(sub, player.id, rid, received)
