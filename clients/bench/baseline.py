"""The bare Starlette broadcast that ``cardhall bench server --baseline`` compares against.

A websocket endpoint that keeps its connections, and ``POST /go?frames=N&size=B``
that sends N frames of B bytes to every connection, one ``send_bytes`` per
frame per connection (the plain way to broadcast with Starlette). Served by
the same uvicorn websocket implementation as the service.

Run: ``python -m cardhall.clients.bench.baseline PORT``.
"""

from __future__ import annotations

import asyncio
import sys

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

CONNECTIONS: set[WebSocket] = set()


async def endpoint(ws: WebSocket) -> None:
    await ws.accept(subprotocol="cardhall.v1.msgpack" if "cardhall.v1.msgpack" in ws.scope["subprotocols"] else None)
    CONNECTIONS.add(ws)
    try:
        while True:
            await ws.receive_bytes()
    except (WebSocketDisconnect, RuntimeError, KeyError):
        pass
    finally:
        CONNECTIONS.discard(ws)


async def go(request: Request) -> PlainTextResponse:
    frames = int(request.query_params["frames"])
    size = int(request.query_params["size"])

    async def broadcast() -> None:
        for i in range(frames):
            payload = i.to_bytes(4, "big") + b"x" * max(0, size - 4)
            for ws in list(CONNECTIONS):
                try:
                    await ws.send_bytes(payload)
                except Exception:
                    CONNECTIONS.discard(ws)

    asyncio.get_running_loop().create_task(broadcast())
    return PlainTextResponse(str(len(CONNECTIONS)))


app = Starlette(routes=[Route("/go", go, methods=["POST"]), WebSocketRoute("/ws", endpoint)])


def main(port: int, ws: str = "cardhall") -> None:
    """Serve on ``port`` with uvicorn's websocket implementation ``ws``
    (``websockets-sansio``, ``websockets``, ``wsproto``) or ``cardhall`` (ours:
    websockets-sansio plus the abort extension)."""
    import uvicorn

    from cardhall.server.ws_protocol import CardhallWebSocketProtocol

    impl: object = CardhallWebSocketProtocol if ws == "cardhall" else ws
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", ws=impl,  # type: ignore[arg-type]
                ws_per_message_deflate=False, loop="auto", access_log=False)


if __name__ == "__main__":
    main(int(sys.argv[1]), *(sys.argv[2:3]))
