"""uvicorn's ``websockets-sansio`` websocket protocol, plus three ASGI extensions.

Why this implementation: measured in ``deploy/README.md`` ("Choosing the
websocket layer"); it was the fastest of uvicorn's three on this workload and
keeps ~24 KB per idle connection. The uvicorn internals this module relies on
(the base class, the methods it overrides or depends on, the attributes it
reads and writes) are pinned by ``tests/server/test_uvicorn_internals.py`` and
by the uvicorn bound in pyproject.toml.

The extensions (callables in ``scope["extensions"]``):

* ``cardhall.abort`` aborts the transport at once. ASGI's ``websocket.close``
  waits until the socket is writable, so without it a client that stopped
  reading could never be dropped (a slow consumer is dropped; the table
  never waits for it).
* ``cardhall.send_now(payload) -> bool`` writes one websocket message (bytes:
  a binary frame, str: a text frame) to the transport at once, without an
  ASGI ``send`` coroutine, and returns True; it returns False (nothing
  written) when the connection is not open or the transport has paused
  writing, and the caller goes through ASGI ``send``, which waits. A table's
  events then leave in the loop iteration that produced them, and a message
  costs a header and one ``transport.write`` (docs/LOAD.md); on a connection
  that negotiated ``permessage-deflate`` (RFC 7692, ``Settings.ws_deflate``)
  it is compressed by websockets' sans-I/O protocol first (:data:`DEFLATE`).

* ``cardhall.receiver(handler)`` gives the protocol a synchronous
  ``handler(payload: bytes | str) -> bool`` for the connection's messages
  (bytes: a binary message, str: a text one, decoded from UTF-8). A message
  read while nothing of the connection waits in uvicorn's ASGI queue is
  offered to it first, inside the read: True means handled (nothing is
  queued), False queues it for ASGI ``receive`` as without a handler, and
  every later message follows it into the queue until the app has taken
  them all, so the app sees each connection's messages in order. A handled
  message costs no ASGI message, no task switch and no pause and resumption
  of reading (uvicorn pauses reading for every message it queues until the
  app receives it); the app bounds what it handles (its rate limit).

* ``cardhall.bucket``: the connection's frame-rate token bucket
  (:class:`~cardhall.server.ratelimit.TokenBucket`, ``Settings.rate`` and
  ``burst``), shared by the app's frames and the control frames below.

Servers without the extensions still work: drops only unsubscribe the client,
every message goes through ASGI ``send`` and every client message through
ASGI ``receive``.

Control frames: a client's ping and pong frames take a token from the
connection's bucket like every frame (SPEC "Limits"). A ping past the rate
gets no pong (RFC 6455 5.5.3 lets an endpoint answer only the latest ping),
nor does one while the client is not reading (the transport paused writing),
so pongs never pile up in memory; past ``Settings.rate_strikes`` control
frames over the rate the connection is closed with 4008, as for data frames.
The connection leaves the :class:`~cardhall.server.gate.Gate`'s counts when
it closes (the HTTP protocol counted it when it was accepted).
"""

from __future__ import annotations

import struct
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.extensions.permessage_deflate import PerMessageDeflate, ServerPerMessageDeflateFactory
from websockets.protocol import State

from cardhall.server.connection import CLOSE_RATE_LIMITED
from cardhall.server.gate import Gate, GatedConfig
from cardhall.server.ratelimit import TokenBucket

ABORT = "cardhall.abort"
SEND_NOW = "cardhall.send_now"
BUCKET = "cardhall.bucket"
RECEIVER = "cardhall.receiver"

#: the first byte of a pong frame as websockets writes it (FIN, opcode 0xA, unmasked)
_PONG = b"\x8a"

_OPEN = State.OPEN

_SHORT = struct.Struct("!BB")
_MEDIUM = struct.Struct("!BBH")
_LONG = struct.Struct("!BBQ")

#: the ``permessage-deflate`` this server agrees to when ``Settings.ws_deflate`` is on (uvicorn's
#: ``ws_per_message_deflate``), in place of uvicorn's own offer (the same 12-bit windows and memLevel 5,
#: but with context takeover both ways). Without context takeover each message is compressed on its
#: own: (1) a connection keeps no zlib stream between messages, where with takeover each holds a
#: compressor and a decompressor for its whole life (62.9 KiB per idle connection instead of 20.8);
#: (2) the same message gives the same bytes on every connection with the same window, so a message
#: shared by a table's viewers is compressed once (:meth:`CardhallWebSocketProtocol.send_deflated`),
#: not once per connection (the benchmark's tables: ~1,590 actions per CPU-second against ~1,210 with
#: takeover). The cost: a message cannot refer back to earlier ones, so JSON frames keep ~53 % of their
#: bytes where takeover would keep ~16 % (deploy/README.md, "Compression").
DEFLATE = ServerPerMessageDeflateFactory(
    server_no_context_takeover=True, client_no_context_takeover=True, server_max_window_bits=12,
    client_max_window_bits=12, compress_settings={"memLevel": 5})


class _Last:
    """The last payload written and its websocket frame, for every connection
    (a module-level object: assigning a class attribute on every send would
    invalidate the interpreter's attribute caches of the protocol class).

    A table's step sends the same payload object to every connection that
    sees the same thing, one after the other, so such a message is framed
    (and a text one encoded to UTF-8) once, not once per connection;
    ``deflated`` is the same for ``permessage-deflate`` without context
    takeover (the payload, the window bits it was compressed with, since a
    client may ask for fewer than :data:`DEFLATE`'s, and the frame)."""

    __slots__ = ("deflated", "plain")

    def __init__(self) -> None:
        self.plain: tuple[object, bytes] = (None, b"")
        self.deflated: tuple[object, int, bytes] = (None, 0, b"")


_LAST = _Last()


def frame_header(length: int, opcode: int) -> bytes:
    """The header of an unmasked, final websocket frame (RFC 6455 5.2) of
    ``length`` payload bytes with ``opcode`` (1 text, 2 binary).

    >>> frame_header(5, 2).hex(), frame_header(300, 1).hex(), frame_header(70000, 2).hex()
    ('8205', '817e012c', '827f0000000000011170')
    """
    if length < 126:
        return _SHORT.pack(0x80 | opcode, length)
    if length < 65536:
        return _MEDIUM.pack(0x80 | opcode, 126, length)
    return _LONG.pack(0x80 | opcode, 127, length)


class CardhallWebSocketProtocol(WebSocketsSansIOProtocol):
    """``WebSocketsSansIOProtocol`` exposing ``transport.abort``, a
    synchronous send and the frame-rate bucket to the app, and rate-limiting
    control frames (see the module docstring). Without a
    :class:`~cardhall.server.gate.GatedConfig` control frames are not limited."""

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any], _loop: Any = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        gated = isinstance(config, GatedConfig)
        self.gate: Gate | None = config.gate if gated else None
        self.bucket: TokenBucket | None = None
        self.strikes_allowed = 0
        if gated:
            settings = config.settings
            self.bucket = TokenBucket(settings.rate, settings.burst, time.monotonic())
            self.strikes_allowed = settings.rate_strikes
        self.control_strikes = 0
        self.unanswered: deque[bytes] = deque()  # pongs websockets queued, each waiting for its ping's turn
        #: the app's handler of messages read while nothing waits in the ASGI queue (``cardhall.receiver``)
        self.receiver: Callable[[bytes | str], bool] | None = None
        if config.ws_per_message_deflate:  # uvicorn offered its own factory: ours instead (see DEFLATE)
            self.conn.available_extensions = [DEFLATE]

    def connection_lost(self, exc: Exception | None) -> None:
        if self.gate is not None:
            self.gate.release(self.transport)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self.handshake_initiated and self.conn.handshake_exc is not None and not self.transport.is_closing():
            # websockets could not read the upgrade request (a header line over its 8 KiB, more than 128
            # headers, a malformed line): it queued its answer (431, 414) or only an end, and no event
            # follows, so write what it queued and close instead of holding the connection open
            self.handshake_initiated = self.handshake_complete = self.close_sent = True
            self.transport.write(b"".join(self.conn.data_to_send()))
            self.transport.close()

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None:
            scope["extensions"][ABORT] = self.transport.abort
            scope["extensions"][SEND_NOW] = self.send_now
            scope["extensions"][RECEIVER] = self.receive_with
            if self.bucket is not None:
                scope["extensions"][BUCKET] = self.bucket

    def receive_with(self, handler: Callable[[bytes | str], bool]) -> None:
        """``cardhall.receiver``: offer the connection's messages to ``handler``
        from now on (see the module docstring)."""
        self.receiver = handler

    def send_receive_event_to_app(self) -> None:
        """uvicorn's hand-over of a whole message to the app: offered to the
        ``cardhall.receiver`` handler first when nothing of this connection
        waits in the ASGI queue (and the close is not sent), else queued."""
        handler = self.receiver
        if handler is None or self.close_sent or not self.queue.empty():
            super().send_receive_event_to_app()
            return
        frames = self.frames
        data = frames[0] if len(frames) == 1 else b"".join(frames)
        if self.curr_msg_data_type == "text":
            try:
                payload: bytes | str = data.decode()
            except UnicodeDecodeError:  # uvicorn's own path closes with 1007
                super().send_receive_event_to_app()
                return
        else:
            payload = data
        if handler(payload):
            self.frames = []
        else:
            super().send_receive_event_to_app()

    def handle_ping(self) -> None:
        # websockets queued one pong per ping of this read; anything else queued (a close) goes out as it is
        for data in self.conn.data_to_send():
            if data[:1] == _PONG:
                self.unanswered.append(data)
            elif data:
                self.transport.write(data)
        pong = self.unanswered.popleft() if self.unanswered else None
        if not self.control_frame_allowed():
            return
        if pong is not None and self.writable.is_set() and self.conn.close_sent is None:
            self.transport.write(pong)

    def handle_pong(self, event: Any) -> None:
        if self.control_frame_allowed():
            super().handle_pong(event)

    def control_frame_allowed(self) -> bool:
        """Take a token for a control frame; False past the rate (a strike:
        past ``rate_strikes`` of them the connection closes with 4008)."""
        if self.bucket is None or self.bucket.take(time.monotonic()):
            return True
        self.control_strikes += 1
        if self.control_strikes > self.strikes_allowed and not self.close_sent and not self.transport.is_closing():
            self.conn.fail(CLOSE_RATE_LIMITED, "rate_limited")
            self.transport.write(b"".join(self.conn.data_to_send()))
            self.close_sent = True
            self.transport.close()
        return False

    async def send(self, message: Any) -> None:
        await super().send(message)
        if self.handshake_complete and self.response is not None:
            # the handshake's request and response are not needed once it is done (~3 KB a connection);
            # uvicorn's class types them as always set (it assigns them in handle_connect) but reads
            # neither once the handshake is complete, so None is safe past this point
            self.request = self.response = None  # type: ignore[assignment]

    def send_now(self, payload: bytes | str) -> bool:
        """Write ``payload`` as one websocket message now; False if it cannot be
        written without waiting (not open yet or any more, writing paused).
        Without extensions a message is its payload behind a frame header;
        with ``permessage-deflate`` (the only extension this server offers)
        see :meth:`send_deflated`."""
        if (not self.handshake_complete or self.close_sent or self.disconnected
                or self.conn.state is not _OPEN or not self.writable.is_set()):
            return False
        if self.conn.extensions:
            self.send_deflated(payload)
            return True
        cached = _LAST.plain
        if cached[0] is payload:  # the same message as the last connection's: framed once
            self.transport.write(cached[1])
            return True
        if isinstance(payload, str):
            data = payload.encode()
            framed = frame_header(len(data), 1) + data
        else:
            framed = frame_header(len(payload), 2) + payload
        _LAST.plain = (payload, framed)
        self.transport.write(framed)
        return True

    def send_deflated(self, payload: bytes | str) -> None:
        """Write ``payload`` through websockets' sans-I/O protocol, which
        compresses it (the connection is open and its transport writable).
        Without context takeover (:data:`DEFLATE`) the frame depends only on
        the payload and the negotiated window, so the same payload object sent
        to the next connection with the same window is compressed once."""
        conn = self.conn
        deflate = conn.extensions[0]
        bits = 0  # with context takeover: a stream of this connection's own, never shared
        if isinstance(deflate, PerMessageDeflate) and deflate.local_no_context_takeover:
            bits = deflate.local_max_window_bits
        cached = _LAST.deflated
        if bits and cached[0] is payload and cached[1] == bits:
            self.transport.write(cached[2])
            return
        if isinstance(payload, str):
            conn.send_text(payload.encode())
        else:
            conn.send_binary(payload)
        writes = conn.data_to_send()
        framed = writes[-1]  # this message's frame (anything queued before it is this connection's own)
        if bits:
            _LAST.deflated = (payload, bits, framed)
        self.transport.write(framed if len(writes) == 1 else b"".join(writes))
