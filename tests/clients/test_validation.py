"""Schema checking in the client library is opt-in.

* Without a validator the library never imports the schemas module or
  ``jsonschema`` (a test dependency): a separate Python process plays
  against a real server and then looks at ``sys.modules``.
* With one (``validator=``), a server frame that does not match the schemas
  fails the pending request with ``SchemaViolation`` and the client closes
  with 1002, and so does a reply that accepts a message the schemas refuse.
  The peer is a small websocket server on loopback that sends those frames
  (a real server never does).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from cardhall.clients.client import Client
from cardhall.protocol.frames import welcome
from cardhall.protocol.schemas import FrameValidator, SchemaViolation
from tests.server.conftest import running_server

TOKEN = "k" * 32  # a token of a length the schemas accept

PLAYS_WITHOUT_VALIDATOR = """
import asyncio, json, sys
from cardhall.clients.bots import BotPlayer
from cardhall.clients.cli import build_parser
from cardhall.clients.client import Client

async def main(url):
    build_parser()  # every command module
    async with Client(url, codec=sys.argv[2]) as c:
        await c.hello("plain")
        table = await c.create_table("loco_poker", seats=2, bots=1,
                                     options={"pause": 0, "bot_think": 0, "points_to_win": 1})
        results = await BotPlayer(c, table).play(timeout=60)
        await c.games()
    return results

results = asyncio.run(main(sys.argv[1]))
print(json.dumps({"matches": len(results), "loaded": sorted(
    m for m in ("jsonschema", "referencing", "cardhall.protocol.schemas") if m in sys.modules)}))
"""


@pytest.mark.parametrize("codec", ["json", "msgpack"])
async def test_a_client_without_validator_never_loads_the_schemas(codec):
    async with running_server() as live:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", PLAYS_WITHOUT_VALIDATOR, live.url, codec,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 90)
    assert proc.returncode == 0, err.decode()
    assert json.loads(out) == {"matches": 1, "loaded": []}


@pytest.fixture
async def peer() -> AsyncIterator[Callable[[Callable[[dict[str, Any]], dict[str, Any]]], Any]]:
    """Start a loopback websocket server answering each JSON message with ``answer(message)``; yields its URL."""
    servers = []

    async def start(answer: Callable[[dict[str, Any]], dict[str, Any]]) -> str:
        async def handler(ws: ServerConnection) -> None:
            async for raw in ws:
                await ws.send(json.dumps(answer(json.loads(raw))))

        server = await serve(handler, "127.0.0.1", 0, subprotocols=["cardhall.v1.json"])  # type: ignore[list-item]
        servers.append(server)
        port = next(iter(server.sockets)).getsockname()[1]
        return f"ws://127.0.0.1:{port}/ws"

    yield start
    for server in servers:
        server.close()
        await server.wait_closed()


async def test_a_server_frame_that_does_not_match_fails_the_request(peer):
    url = await peer(lambda m: {**welcome(m["id"], "p_1", "ann", TOKEN), "protocol": "one"})
    validator = FrameValidator()
    c = await Client(url, codec="json", validator=validator).connect()
    with pytest.raises(SchemaViolation, match="welcome"):
        await c.hello("ann")
    assert validator.failures and "welcome" in validator.failures[0]
    assert c.closed is not None
    await asyncio.wait_for(c.closed, 5)
    assert c.ws is not None and c.ws.protocol.close_sent is not None and c.ws.protocol.close_sent.code == 1002
    await c.close()


async def test_accepting_a_message_the_schemas_refuse_is_a_violation(peer):
    url = await peer(lambda m: welcome(m["id"], "p_1", "ann", TOKEN) if m["type"] == "hello"
                     else {"type": "ok", "re": m["id"]})
    validator = FrameValidator()
    c = await Client(url, codec="json", validator=validator).connect()
    await c.hello("ann")
    with pytest.raises(SchemaViolation, match="the server accepted a message the schemas refuse"):
        await c.request({"type": "join", "table": "t_1", "role": "king"})
    assert any("refuse" in f for f in validator.failures)
    await c.close()


async def test_the_same_peer_passes_without_a_validator(peer, frame_validator):
    """The per-client validator decides: the suite's default one is set, yet a
    client given its own that accepts everything reads the same frames."""

    class Lenient(FrameValidator):
        def server_errors(self, frame: Any) -> list[str]:
            return []

        def client_errors(self, message: Any) -> list[str]:
            return []

    url = await peer(lambda m: {**welcome(m["id"], "p_1", "ann", TOKEN), "protocol": "one"})
    c = await Client(url, codec="json", validator=Lenient()).connect()
    assert (await c.hello("ann"))["protocol"] == "one"
    await c.close()
