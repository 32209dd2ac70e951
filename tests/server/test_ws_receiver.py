"""The ``cardhall.receiver`` extension of ``server/ws_protocol.py`` on a real
uvicorn server and a real websocket client over loopback.

The app under test is a small ASGI app: its receiver handles messages that
start with ``q`` at once (answering ``inline:<message>``) unless its task is
handling a message, and declines the others, which its task answers
(``queued:<message>``); an ``s`` message is slow: its task holds it until the
receiver has declined a message read behind it. The first test covers the
app's side of the order (a message read while the task handles one is left
to the task), the second the protocol's (a message read while one waits in
the queue is queued without being offered). The session's own use of the
extension (acts handled inside the read) is covered by every server test
that plays a table; this module pins the order the extension promises, and
that a frame the session's read leaves to its task is decoded once.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn
from websockets.asyncio.client import connect
from websockets.typing import Subprotocol

from cardhall.protocol.codec import JSON, MAX_FRAME, JsonCodec
from cardhall.server.ws_protocol import RECEIVER, CardhallWebSocketProtocol
from tests.conftest import until


class EchoApp:
    """An ASGI app answering each websocket message with how it was handled."""

    def __init__(self) -> None:
        self.declined: list[str] = []  # the messages the receiver left to the task, in order
        self.busy = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        answers: list[str] = []
        made = asyncio.Event()

        def handler(message: bytes | str) -> bool:
            text = message if isinstance(message, str) else message.decode()
            if self.busy or not text.startswith("q"):
                self.declined.append(text)
                return False
            answers.append(f"inline:{text}")
            made.set()
            return True

        scope["extensions"][RECEIVER](handler)
        flusher = asyncio.create_task(self.flush(answers, made, send))
        try:
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    break
                text = message.get("text") or message["bytes"].decode()
                self.busy = True
                if text.startswith("s"):  # slow: held until a message was read behind it
                    await until(lambda held=text: self.declined[-1] != held, 30, "a message read behind the slow one")
                self.busy = False
                answers.append(f"queued:{text}")
                made.set()
        finally:
            flusher.cancel()

    async def flush(self, answers: list[str], made: asyncio.Event, send: Any) -> None:
        """Send the answers in the order they were made (the handler cannot await a send)."""
        while True:
            await made.wait()
            made.clear()
            while answers:
                await send({"type": "websocket.send", "text": answers.pop(0)})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def served() -> AsyncIterator[tuple[str, EchoApp]]:
    app = EchoApp()
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, ws=CardhallWebSocketProtocol,
                                           log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve())
    await until(lambda: server.started, 30, "uvicorn started")
    try:
        yield f"ws://127.0.0.1:{port}/", app
    finally:
        server.should_exit = True
        await task


async def _answers(ws: Any, count: int) -> list[str]:
    return [str(await asyncio.wait_for(ws.recv(), 30)) for _ in range(count)]


async def test_messages_read_behind_a_queued_one_queue_behind_it_in_order(served: tuple[str, EchoApp]) -> None:
    url, app = served
    async with connect(url) as ws:
        await ws.send("q0")  # nothing queued: handled inside the read
        assert await _answers(ws, 1) == ["inline:q0"]
        await ws.send("s1")  # declined: the task takes it and holds it
        await until(lambda: app.busy, 30, "the task handling s1")
        await ws.send("q2")  # read while s1 is handled: queued behind it, though the receiver could take it
        assert await _answers(ws, 2) == ["queued:s1", "queued:q2"]
        assert app.declined == ["s1", "q2"]
        await ws.send(b"q3")  # the queue is empty again: a binary message is handled at once too
        assert await _answers(ws, 1) == ["inline:q3"]


async def test_a_message_read_while_one_waits_in_the_queue_is_not_offered(served: tuple[str, EchoApp]) -> None:
    url, app = served
    async with connect(url) as ws:
        # two messages in one write: the server reads both in one read, before the app's task runs
        ws.protocol.send_text(b"d1")
        ws.protocol.send_text(b"q2")
        ws.transport.write(b"".join(ws.protocol.data_to_send()))
        assert await _answers(ws, 2) == ["queued:d1", "queued:q2"]
        assert app.declined == ["d1"]  # q2 went to the queue behind d1 without reaching the receiver


async def test_a_frame_the_read_leaves_to_the_task_is_decoded_once(live: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The session (server/session.py) decodes a frame in the read to see whether it can handle it there;
    a ``hello`` it cannot (its answer waits on the players' store), and the task handles it with what
    the read decoded rather than decoding it again."""
    decoded: list[Any] = []
    original = JsonCodec.decode

    def counting(self: JsonCodec, payload: bytes | str, limit: int = MAX_FRAME) -> dict[str, Any]:
        decoded.append(payload)
        return original(self, payload, limit)

    monkeypatch.setattr(JsonCodec, "decode", counting)
    async with connect(live.url, subprotocols=[Subprotocol(JSON)]) as ws:
        await ws.send(json.dumps({"type": "hello", "id": 1, "name": "ann"}))
        welcome = json.loads(await asyncio.wait_for(ws.recv(), 30))
        assert welcome["type"] == "welcome" and welcome["re"] == 1
        await ws.send(json.dumps({"type": "ping", "id": 2}))  # handled in the read: decoded there, once
        assert json.loads(await asyncio.wait_for(ws.recv(), 30)) == {"type": "pong", "re": 2}
    assert len(decoded) == 2, decoded
