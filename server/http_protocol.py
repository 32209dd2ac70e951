"""uvicorn's httptools HTTP protocol with the connection gate, a bound on the
request head and a deadline for each request.

* Admission (:class:`~cardhall.server.gate.Gate`): each accepted connection is
  counted at once; a refused one gets its answer (503 or 403, a plain-text
  reason) before anything is read.
* The request head (request line and headers) is bounded by
  ``Settings.max_header_bytes``: the bytes of a head still incomplete are
  counted before they reach the parser, and past the bound the connection gets
  431 and is closed. httptools itself has no bound, and it gathers a header's
  value by concatenating each piece it is fed, so one huge header cost time
  quadratic in its size.
* A request must arrive whole (head and body; for a websocket, its upgrade
  request) within ``Settings.handshake_timeout`` seconds of the connection
  being made, or of its first byte on a kept-alive connection; otherwise 408
  (or, once a response has begun, a plain close). Idle kept-alive connections
  are closed by uvicorn's ``timeout_keep_alive``.

An answer that ends a connection early is written, the sending side is shut
down and what the client still sends is read and dropped for at most
:data:`LINGER` seconds: closing with unread input would make the kernel reset
the connection, and the client could lose the answer.

The uvicorn internals this module relies on (the base class, the methods it
overrides or depends on, the attributes it reads) are pinned by
``tests/server/test_uvicorn_internals.py`` and by the uvicorn bound in
pyproject.toml.
"""

from __future__ import annotations

import asyncio
from http import HTTPStatus
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from cardhall.server.gate import Gate, GatedConfig, response

#: seconds a connection answered early is kept reading (and dropping) input before it is closed
LINGER = 2.0


class CardhallHttpProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` with the gate, the head bound and the request
    deadline of the module docstring; without a :class:`GatedConfig` it only
    bounds heads at 16 KiB and requests at 10 s."""

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        gated = isinstance(config, GatedConfig)
        self.gate: Gate | None = config.gate if gated else None
        self.head_limit: int = config.settings.max_header_bytes if gated else 16 * 1024
        self.request_timeout: float = config.settings.handshake_timeout if gated else 10.0
        self.head_size = 0
        self.head_done = False
        self.request_timer: asyncio.TimerHandle | None = None
        self.linger_timer: asyncio.TimerHandle | None = None
        self.answered_early = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()
        if self.gate is not None:
            refusal = self.gate.admit(transport, self.client[0] if self.client else None)
            if refusal is not None:
                if refusal.answer:
                    self.answer_early(refusal.status, refusal.reason)
                else:
                    transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self.linger_timer is not None:
            self.linger_timer.cancel()
            self.linger_timer = None
        if self.gate is not None:
            self.gate.release(self.transport)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.answered_early:
            return  # answered: what follows is dropped until the close
        if self.head_done:
            super().data_received(data)
            return
        room = self.head_limit - self.head_size
        if len(data) <= room:
            self.head_size += len(data)
            super().data_received(data)
            return
        # only what fits under the bound reaches the parser
        self.head_size = self.head_limit
        super().data_received(data[:room])
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            return
        if not self.head_done:
            self.answer_early(431, f"request head over {self.head_limit} bytes")
            return
        super().data_received(data[room:])

    # parser callbacks
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_headers_complete(self) -> None:
        self.head_done = True
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()
        self.head_done = False
        self.head_size = 0

    def handle_websocket_upgrade(self) -> None:
        self._disarm()  # the request is complete: the websocket protocol takes the connection (and its count)
        super().handle_websocket_upgrade()

    # deadline and early answers
    def _arm(self) -> None:
        if self.request_timer is None and self.transport is not None:
            self.request_timer = self.loop.call_later(self.request_timeout, self._request_timed_out)

    def _disarm(self) -> None:
        if self.request_timer is not None:
            self.request_timer.cancel()
            self.request_timer = None

    def _request_timed_out(self) -> None:
        self.request_timer = None
        if not self.transport.is_closing() and not self.answered_early:
            self.answer_early(408, f"request not complete within {self.request_timeout:g} s")

    def answer_early(self, status: int, reason: str) -> None:
        """Write ``status`` with ``reason`` (plain text), end the connection's
        sending side and close it once the client has closed its own (asyncio
        closes a transport whose protocol's ``eof_received`` returns nothing), or after
        :data:`LINGER` seconds; input until then is dropped. While a response
        is under way nothing more can be said on the connection: it is closed."""
        self._disarm()
        self.answered_early = True
        if self.cycle is not None and not self.cycle.response_complete:
            self.transport.close()
            return
        self.transport.write(response(status, HTTPStatus(status).phrase, reason))
        if self.transport.can_write_eof():
            self.transport.write_eof()
            self.linger_timer = self.loop.call_later(LINGER, self.transport.close)
        else:
            self.transport.close()
