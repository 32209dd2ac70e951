"""Fixtures for the live-service tests: a real uvicorn server on a free
loopback port, in the test's event loop, reached over real websockets."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

import pytest

from clients.client import Client
from server.app import build_server
from server.config import Settings
from server.hall import Hall
from server.store import MemoryStore


@dataclass
class LiveServer:
    """A running server: ``url`` (websocket), ``http`` (base URL), ``hall``."""

    url: str
    http: str
    hall: Hall

    async def client(self, name: str = "player", codec: str = "msgpack", **kw: object) -> Client:
        """A connected client that has said hello."""
        c = await Client(self.url, codec=codec, record=True, **kw).connect()  # type: ignore[arg-type]
        await c.hello(name)
        return c


TEST_SETTINGS = Settings(host="127.0.0.1", port=0, log_level="warning", event_buffer=100_000, sweep_interval=0.2,
                         shutdown_grace=1.0)


@contextlib.asynccontextmanager
async def running_server(settings: Settings = TEST_SETTINGS) -> AsyncIterator[LiveServer]:
    """Serve on a free port for the duration of the block."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = build_server(replace(settings, port=port), MemoryStore(settings.event_buffer, keep_states=True))
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]  # leave pytest's signals alone
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    for _ in range(500):
        if server.started or task.done():
            break
        await asyncio.sleep(0.01)
    if task.done():
        task.result()
    try:
        yield LiveServer(f"ws://127.0.0.1:{port}/ws", f"http://127.0.0.1:{port}", server.hall)
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 15)
        sock.close()


@pytest.fixture
async def live() -> AsyncIterator[LiveServer]:
    async with running_server() as srv:
        yield srv
