"""uvicorn's ``websockets-sansio`` websocket protocol, plus one ASGI extension.

Why this implementation: measured in ``deploy/README.md`` ("Choosing the
websocket layer"); it was the fastest of uvicorn's three on this workload and
keeps ~24 KB per idle connection.

The extension ``cardhall.abort`` (a callable in ``scope["extensions"]``) aborts
the transport at once. ASGI's ``websocket.close`` waits until the socket is
writable, so without it a client that stopped reading could never be dropped
(issue 4: a slow consumer is dropped, the table never waits for it). Servers
without the extension still work; the drop then only unsubscribes the client.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

ABORT = "cardhall.abort"


class CardhallWebSocketProtocol(WebSocketsSansIOProtocol):
    """``WebSocketsSansIOProtocol`` exposing ``transport.abort`` to the app."""

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None:
            scope["extensions"][ABORT] = self.transport.abort
