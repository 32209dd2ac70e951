"""The floor of a Python server on cardhall's stack (a benchmark, not a test).

What any server on this stack pays per player action before a game or a
protocol: uvicorn with cardhall's websocket protocol
(:class:`cardhall.server.ws_protocol.CardhallWebSocketProtocol`: the read
handed to a synchronous handler, ``send_now`` writing a frame at once) on
uvloop. Each connection joins table ``t`` as viewer ``v`` (``/ws?t=T&v=V``,
V in 0..7); a text message from it is decoded (orjson) and answered by one
message to every connection of its table: ``--bytes`` bytes to the sender
and ``--shared`` bytes, one payload object framed once, to the other seven
(cardhall's compact JSON frames, 1.8, are about those sizes: docs/LOAD.md,
"cardhall against Colyseus"). No rules, no state, no checks, no store.

    python bench/colyseus/floor_server.py --port 8765 [--bytes 260] [--shared 190]

Driven by ``loadgen.js --system floor`` (the same measurement as for the
servers: server CPU from /proc over a window after a warm-up);
``bench.js --systems floor`` starts both.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any
from urllib.parse import parse_qs

import orjson
import uvicorn
import uvloop

from cardhall.server.ws_protocol import RECEIVER, SEND_NOW, CardhallWebSocketProtocol

VIEWERS = 8
VIEWER_IDS = {str(v) for v in range(VIEWERS)}


class Floor:
    """Tables of ``VIEWERS`` connections; ``own`` and ``shared`` are the two
    payloads (str) sent per message received."""

    def __init__(self, own: int, shared: int) -> None:
        #: table -> per viewer its connection's ``(send_now, ASGI send)``, or None
        self.tables: dict[str, list[tuple[Any, Any] | None]] = {}
        self.own = '"' + "0" * (own - 2) + '"'  # JSON strings of exactly those sizes
        self.shared = '"' + "1" * (shared - 2) + '"'

    def received(self, table: str, viewer: int, payload: bytes | str) -> bool:
        try:
            message = orjson.loads(payload)
        except orjson.JSONDecodeError:
            return True  # not JSON: no answer
        if not isinstance(message, dict):
            return True
        shared = self.shared
        own = self.own
        for v, sends in enumerate(self.tables[table]):
            if sends is not None:
                out = own if v == viewer else shared
                if not sends[0](out):  # writing paused: through ASGI, which waits
                    asyncio.get_running_loop().create_task(sends[1]({"type": "websocket.send", "text": out}))
        return True

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            if scope["type"] == "http":
                await send({"type": "http.response.start", "status": 404, "headers": []})
                await send({"type": "http.response.body", "body": b""})
            return
        query = parse_qs(scope["query_string"].decode())
        table, viewer = query.get("t", [""])[0], query.get("v", [""])[0]
        await receive()  # websocket.connect
        if not table or viewer not in VIEWER_IDS:
            await send({"type": "websocket.close", "code": 1008, "reason": "t=TABLE&v=0..7"})
            return
        seat = int(viewer)
        await send({"type": "websocket.accept"})
        seats = self.tables.setdefault(table, [None] * VIEWERS)
        seats[seat] = (scope["extensions"][SEND_NOW], send)
        scope["extensions"][RECEIVER](lambda payload: self.received(table, seat, payload))
        while True:
            event = await receive()
            if event["type"] == "websocket.disconnect":
                seats[seat] = None
                return
            self.received(table, seat, event.get("text") or event.get("bytes") or b"{}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--bytes", type=int, default=260, choices=range(2, 65536), metavar="2..65535",
                        help="payload bytes to the sender")
    parser.add_argument("--shared", type=int, default=190, choices=range(2, 65536), metavar="2..65535",
                        help="payload bytes to each other viewer")
    args = parser.parse_args()
    config = uvicorn.Config(Floor(args.bytes, args.shared), host="127.0.0.1", port=args.port, ws=CardhallWebSocketProtocol,
                            http="httptools", ws_per_message_deflate=False, lifespan="off", log_level="warning", access_log=False)
    uvloop.run(uvicorn.Server(config).serve())


if __name__ == "__main__":
    main()
