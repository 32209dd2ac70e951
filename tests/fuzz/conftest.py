"""A live server for hypothesis-driven tests: it runs in its own thread and
event loop for the whole module, so each example is only a frame or two over
a real websocket (``websockets.sync.client``), not a server start.

``ServerThread.call(fn)`` runs ``fn(live)`` (a coroutine function or a plain
function of the :class:`tests.server.conftest.LiveServer`) in the server's
loop and returns its result: the only safe way to look at the hall from the
test's thread.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from websockets.sync.client import ClientConnection, connect

from cardhall.protocol.codec import CODECS, JSON, MSGPACK
from cardhall.server.config import Settings
from tests.server.conftest import TEST_SETTINGS, LiveServer, running_server

#: examples per hypothesis test by default (``CARDHALL_FUZZ_EXAMPLES`` or ``--runslow`` raise it)
EXAMPLES = int(os.environ.get("CARDHALL_FUZZ_EXAMPLES", "0")) or None

#: no rate limit in the way of the fuzzer (the limit itself is tested on its own)
FUZZ_SETTINGS = replace(TEST_SETTINGS, rate=1e9, burst=1e9, max_tables_per_player=10**6)


class ServerThread:
    """``running_server(settings)`` in a thread of its own."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.loop = asyncio.new_event_loop()
        self.live: LiveServer | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="cardhall-fuzz-server", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._serve())
        except BaseException as exc:  # reported by start()/call()
            self._error = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        async with running_server(self.settings) as live:
            self.live = live
            self._ready.set()
            await self._stop.wait()

    def start(self) -> ServerThread:
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None or self.live is None:
            raise RuntimeError(f"the server did not start: {self._error!r}")
        return self

    def call(self, fn: Callable[[LiveServer], Any], timeout: float = 30.0) -> Any:
        """``fn(live)`` in the server's loop (awaited if it returns an awaitable)."""
        async def run() -> Any:
            result = fn(self.live)  # type: ignore[arg-type]
            if asyncio.iscoroutine(result):
                result = await result
            return result

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and self._error is None

    def stop(self) -> None:
        if self._stop is not None and self._thread.is_alive():
            self.loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(30)


@pytest.fixture(scope="module")
def server_thread() -> Iterator[ServerThread]:
    srv = ServerThread(FUZZ_SETTINGS).start()
    try:
        yield srv
    finally:
        srv.stop()


class SyncClient:
    """A blocking protocol client for one websocket: ``send`` a message or raw
    payload, ``request`` (a message with an id, returns the frame that answers
    it), every frame received kept in ``frames`` (``batch`` frames unpacked)."""

    def __init__(self, url: str, codec: str) -> None:
        self.subprotocol = MSGPACK if codec == "msgpack" else JSON
        self.codec = CODECS[self.subprotocol]
        self.ws: ClientConnection = connect(url, subprotocols=[self.subprotocol], max_size=None, compression=None,
                                            open_timeout=10).__enter__()
        self.frames: list[dict[str, Any]] = []
        self._unread: deque[dict[str, Any]] = deque()
        self._next = 0
        self.player: str | None = None
        self.token: str | None = None

    def send(self, message: dict[str, Any]) -> None:
        self.ws.send(self.codec.encode(message))

    def send_raw(self, payload: bytes | str) -> None:
        self.ws.send(payload)

    def new_id(self) -> str:
        self._next += 1
        return f"q{self._next}"

    def next_frame(self, timeout: float = 10.0) -> dict[str, Any]:
        """The next frame (a batch's frames one by one)."""
        if not self._unread:
            frame = self.codec.decode(self.ws.recv(timeout), 1 << 30)
            inner = frame["frames"] if frame.get("type") == "batch" else [frame]
            self.frames.extend(inner)
            self._unread.extend(inner)
        return self._unread.popleft()

    def until(self, rid: Any, timeout: float = 10.0) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Read up to the frame with ``re`` = ``rid``; returns it and the other
        non-event frames read on the way (events and snapshots without ``re`` are kept in ``frames`` only)."""
        others = []
        while True:
            frame = self.next_frame(timeout)
            if frame.get("re") == rid and frame.get("type") != "event":
                return frame, others
            if frame.get("type") not in ("event", "snapshot"):
                others.append(frame)

    def request(self, message: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        rid = self.new_id()
        self.send({**message, "id": rid})
        frame, _ = self.until(rid, timeout)
        return frame

    def hello(self, name: str = "fuzz") -> dict[str, Any]:
        welcome = self.request({"type": "hello", "name": name, "batch": True})
        self.player, self.token = welcome["player"], welcome["token"]
        return welcome

    def close(self) -> None:
        self.ws.close()
