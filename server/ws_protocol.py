"""uvicorn's ``websockets-sansio`` websocket protocol, plus two ASGI extensions.

Why this implementation: measured in ``deploy/README.md`` ("Choosing the
websocket layer"); it was the fastest of uvicorn's three on this workload and
keeps ~24 KB per idle connection.

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
  costs a header and one ``transport.write`` (docs/LOAD.md).

Servers without the extensions still work: drops only unsubscribe the client,
and every message goes through ASGI ``send``.
"""

from __future__ import annotations

import struct
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State

ABORT = "cardhall.abort"
SEND_NOW = "cardhall.send_now"

_OPEN = State.OPEN
_SHORT = struct.Struct("!BB")
_MEDIUM = struct.Struct("!BBH")
_LONG = struct.Struct("!BBQ")


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
    """``WebSocketsSansIOProtocol`` exposing ``transport.abort`` and a
    synchronous send to the app (see the module docstring)."""

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None:
            scope["extensions"][ABORT] = self.transport.abort
            scope["extensions"][SEND_NOW] = self.send_now

    async def send(self, message: Any) -> None:
        await super().send(message)
        if self.handshake_complete and self.response is not None:
            # the handshake's request and response are not needed once it is done (~3 KB a connection)
            self.request = self.response = None

    def send_now(self, payload: bytes | str) -> bool:
        """Write ``payload`` as one websocket message now; False if it cannot be
        written without waiting (not open yet or any more, writing paused).
        Per-message deflate is off on this server (``uvicorn_config``), so a
        message is its payload behind a frame header."""
        if (not self.handshake_complete or self.close_sent or self.disconnected or self.conn.extensions
                or self.conn.state is not _OPEN or not self.writable.is_set()):
            return False
        if isinstance(payload, str):
            data = payload.encode()
            self.transport.write(frame_header(len(data), 1) + data)
        else:
            self.transport.write(frame_header(len(payload), 2) + payload)
        return True
