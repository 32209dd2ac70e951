"""Fixtures for the live-service tests: a real uvicorn server on a free
loopback port, in the test's event loop, reached over real websockets; and a
real ``redis-server`` of the tests' own (:class:`RedisServer`: a free port,
append-only persistence, a temporary directory; never the shared one)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace

import pytest

from cardhall.clients.client import Client
from cardhall.clients.load.probe import free_port as loopback_port
from cardhall.server.app import serving
from cardhall.server.config import Settings
from cardhall.server.hall import Hall
from cardhall.server.store.base import Store
from cardhall.server.store.memory import MemoryStore
from tests.conftest import require

#: the redis-server binary the Redis tests start (``CARDHALL_REDIS_SERVER`` overrides)
REDIS_SERVER = os.environ.get("CARDHALL_REDIS_SERVER") or shutil.which("redis-server")


#: every port :func:`free_port` handed out in this process
_GIVEN_PORTS: set[int] = set()


def free_port() -> int:
    """A TCP port free on the loopback interface right now, and never handed out
    before in this process: a port of a test's stopped Redis or node is free
    while it is down, and must not be given to another process of that test."""
    for _ in range(1000):
        port = loopback_port()  # outside the range of outgoing connections' ports
        if port not in _GIVEN_PORTS:
            _GIVEN_PORTS.add(port)
            return port
    raise RuntimeError("no loopback port left that was not handed out before")


class RedisServer:
    """A ``redis-server`` process for one test: loopback, a free port,
    append-only file (``appendfsync everysec``) in its own directory, no RDB
    snapshots. :meth:`stop` and :meth:`start` again keep the port and the data
    (the append-only file); ``fresh=True`` starts it with no data at all."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="cardhall-redis-")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def argv(self) -> list[str]:
        """The command line :meth:`start` runs."""
        return [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "yes", "--appendfsync", "everysec", "--dir", self.dir,
                "--daemonize", "no", "--loglevel", "warning"]

    def start(self, fresh: bool = False) -> None:
        """Start it (``fresh``: without its data) and return once it answers ``PING``."""
        if fresh:
            shutil.rmtree(self.dir, ignore_errors=True)
            os.makedirs(self.dir)
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), 0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        """Shut down in order (SIGTERM: the append-only file is complete)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(10)
        self.proc = None

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def redis_cluster() -> Iterator[object]:
    """A started Redis Cluster of three masters
    (:class:`tests.server.cluster.redis_cluster.RedisCluster`), one for the
    module's tests, each writing under a key prefix of its own (skipped
    locally, failed under CI=true, without redis-server or redis-cli)."""
    from tests.server.cluster.redis_cluster import REDIS_CLI, RedisCluster

    require(REDIS_SERVER is not None and REDIS_CLI is not None,
            "redis-server or redis-cli is not installed (set CARDHALL_REDIS_SERVER, CARDHALL_REDIS_CLI)")
    procs = RedisCluster(3)
    try:
        yield procs
    finally:
        procs.close()


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A started :class:`RedisServer` (skipped locally, failed under CI=true, without the binary)."""
    require(REDIS_SERVER is not None, "redis-server is not installed (set CARDHALL_REDIS_SERVER)")
    assert REDIS_SERVER is not None
    server = RedisServer(REDIS_SERVER)
    server.start()
    try:
        yield server
    finally:
        server.close()


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


#: the per-address limits on tables and new players and the bot think floor lifted: the suite's
#: clients all come from 127.0.0.1 and its bots play at full speed (the limits have tests of their own);
#: so is the per-address connection limit (many tests hold more than its default 64 connections)
TEST_SETTINGS = Settings(host="127.0.0.1", port=0, log_level="warning", event_buffer=100_000, sweep_interval=0.2,
                         shutdown_grace=1.0, max_tables_per_address=0, new_players_per_address=0,
                         bot_think_floor=0.0, max_connections_per_ip=0, bot_workers=0)


@contextlib.asynccontextmanager
async def running_server(settings: Settings = TEST_SETTINGS, store: Store | None = None,
                         port: int = 0) -> AsyncIterator[LiveServer]:
    """Serve on ``port`` (0: a free one) for the duration of the block; ``store`` defaults
    to a memory store that keeps states (``settings.redis_url`` set: Redis)."""
    if store is None and not settings.redis_url:
        store = MemoryStore(settings.event_buffer, keep_states=True)
    async with serving(replace(settings, port=port), store) as (server, bound):
        yield LiveServer(f"ws://127.0.0.1:{bound}/ws", f"http://127.0.0.1:{bound}", server.hall)


@pytest.fixture
async def live() -> AsyncIterator[LiveServer]:
    async with running_server() as srv:
        yield srv
