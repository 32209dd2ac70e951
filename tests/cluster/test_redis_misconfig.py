"""``cardhall serve --redis URL`` refuses what it cannot use before it
listens: it exits with status 1 and one line on stderr saying why, and its
port never accepts a connection (server/store/redis_conn.py's
``preflight``, clients/commands/serve.py). Real processes each time, against:

* a Redis Cluster with slots missing: a cluster-enabled server holding half
  the slots, and a whole cluster (three masters, three replicas) after
  ``CLUSTER DELSLOTSRANGE`` on every node; and a cluster URL naming a
  database other than 0;
* a wrong password, and none, for a ``redis-server --requirepass``;
* something that is not Redis (a TCP server answering HTTP 400 to anything);
* a Redis older than 7.0 (a stand-in speaking RESP, ``redis_version:6.2.6``);
* a Redis that is down, with ``--redis-wait 1``: status 1 after about that
  long, the message naming the wait.

The refusals that waiting cannot mend come at once (well within the default
``--redis-wait`` of 30 s). A control: the same command against a healthy
Redis does listen (the port check can see it).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cluster.harness import port_open
from tests.cluster.redis_cluster import RedisClusterProcs, RedisProc
from tests.conftest import require, until
from tests.server.conftest import REDIS_SERVER, RedisServer, free_port

pytestmark = pytest.mark.redis

#: a refusal that waiting cannot mend comes well before the default --redis-wait (30 s)
AT_ONCE = 10.0


@dataclass
class Outcome:
    code: int | None
    stderr: str
    seconds: float
    bound: bool  # its port accepted a connection at some point

    @property
    def lines(self) -> list[str]:
        return self.stderr.strip().splitlines()


async def serve(url: str, *extra: str, timeout: float = 60.0, stop_once_bound: bool = False) -> Outcome:
    """Run ``cardhall serve --redis url`` on a free port until it exits (or,
    ``stop_once_bound``, until its port accepts a connection: then SIGTERM),
    watching its port meanwhile."""
    port = free_port()
    argv = [sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(port), "--log-level", "warning",
            "--redis", url, *extra]
    env = {k: v for k, v in os.environ.items() if k not in ("CARDHALL_REDIS_URL", "CARDHALL_NODE_ID")}
    began = time.monotonic()
    proc = await asyncio.create_subprocess_exec(*argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                stderr=subprocess.PIPE, env=env)
    talk = asyncio.ensure_future(proc.communicate())
    bound = False
    try:
        while not talk.done():
            if port_open(port):
                bound = True
                if stop_once_bound:
                    proc.terminate()
            if time.monotonic() - began > timeout:
                raise AssertionError(f"cardhall serve --redis {url} still running after {timeout} s")
            await asyncio.wait({talk}, timeout=0.02)
    finally:
        if proc.returncode is None:
            proc.kill()
        _, err = await talk
    return Outcome(proc.returncode, err.decode(errors="replace"), time.monotonic() - began, bound)


def refused(out: Outcome, *words: str, within: float = AT_ONCE) -> str:
    """``out`` is a refusal: status 1, one line on stderr holding ``words``, the
    port never bound, within ``within`` seconds. Returns the line."""
    print(f"\nexit {out.code} after {out.seconds:.2f} s, stderr: {out.stderr.strip()!r}")
    assert out.code == 1, f"exit {out.code}, stderr:\n{out.stderr}"
    assert not out.bound, "its port accepted a connection"
    assert len(out.lines) == 1, f"not one line on stderr:\n{out.stderr}"
    line = out.lines[0]
    assert line.startswith("cardhall serve: "), line
    for word in words:
        assert word in line, (word, line)
    assert out.seconds < within, f"{out.seconds:.1f} s to refuse"
    return line


@pytest.fixture
def redis_binary() -> str:
    require(REDIS_SERVER is not None, "redis-server is not installed (set CARDHALL_REDIS_SERVER)")
    assert REDIS_SERVER is not None
    return REDIS_SERVER


@pytest.fixture
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="cardhall-misconfig-") as d:
        yield Path(d)


async def tcp_server(answer: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
                     ) -> tuple[asyncio.Server, int]:
    """A loopback TCP server on a free port running ``answer`` per connection."""
    port = free_port()
    server = await asyncio.start_server(answer, "127.0.0.1", port)
    return server, port


# -- a cluster with slots missing ----------------------------------------------------------
async def test_a_cluster_node_holding_half_the_slots(redis_binary: str, workdir: Path) -> None:
    node = RedisProc(redis_binary, workdir, 1000)
    node.start()
    try:
        await until(lambda: port_open(node.port), 30, "the cluster-enabled redis-server answers")
        assert node.call("CLUSTER", "ADDSLOTSRANGE", 0, 8191) in ("OK", True)
        refused(await serve(f"redis://127.0.0.1:{node.port}/0"), "8192 of 16384", "slots")
    finally:
        node.kill()


async def test_a_whole_cluster_with_slots_deleted(redis_cluster: RedisClusterProcs) -> None:
    """A database other than 0 is refused on the whole cluster; then 100
    slots are deleted on every node and the cluster is refused for them."""
    master = redis_cluster.masters()[0]
    refused(await serve(f"redis://127.0.0.1:{master.port}/2"), "database 0")
    first = master.slots[0][0]

    def deleted() -> bool:  # on every node, replicas too (a replica's heartbeat claims its master's slots)
        done = True
        for p in redis_cluster.live:
            held = {s for line in redis_cluster.view(p.port) for a, b in line.slots for s in range(a, b + 1)}
            left = sorted(held & set(range(first, first + 100)))
            if left:
                done = False
                p.call("CLUSTER", "DELSLOTS", *left)
        return done

    await until(deleted, 30, "100 slots unassigned on every node")
    refused(await serve(redis_cluster.url_of(redis_cluster.replicas()[0].port)), "16284 of 16384")


# -- credentials -------------------------------------------------------------------------
@pytest.mark.parametrize("auth", ["redis://:wrong-password@", "redis://"], ids=["wrong", "none"])
async def test_a_wrong_password(redis_binary: str, workdir: Path, auth: str) -> None:
    port = free_port()
    proc = subprocess.Popen([redis_binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(workdir), "--requirepass", "s3cret"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        await until(lambda: port_open(port), 30, "redis-server --requirepass listens")
        line = refused(await serve(f"{auth}127.0.0.1:{port}/0"), "credentials")
        assert "wrong-password" not in line, "the password is not shown"
    finally:
        proc.kill()
        proc.wait(10)


# -- not Redis ---------------------------------------------------------------------------
async def test_a_url_that_is_not_redis() -> None:
    async def http_400(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.read(1024)
            writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n"
                         b"Connection: close\r\n\r\nBad Request")
            await writer.drain()
        finally:
            writer.close()

    server, port = await tcp_server(http_400)
    try:
        refused(await serve(f"redis://127.0.0.1:{port}/0"), f"127.0.0.1:{port}", "Redis")
    finally:
        server.close()
        await server.wait_closed()


# -- Redis older than 7.0 ----------------------------------------------------------------------
async def read_command(reader: asyncio.StreamReader) -> list[bytes] | None:
    """One RESP command (an array of bulk strings, or an inline command); None at EOF."""
    line = await reader.readline()
    if not line:
        return None
    if not line.startswith(b"*"):
        return line.split()
    args = []
    for _ in range(int(line[1:])):
        size = int((await reader.readline())[1:])
        args.append((await reader.readexactly(size + 2))[:-2])
    return args


async def test_a_redis_older_than_7() -> None:
    info = b"# Server\r\nredis_version:6.2.6\r\nredis_mode:standalone\r\n"
    seen: list[str] = []

    async def redis_6(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (args := await read_command(reader)) is not None:
                name = args[0].upper().decode() if args else ""
                seen.append(name)
                if name == "INFO":
                    writer.write(b"$%d\r\n%s\r\n" % (len(info), info))
                elif name == "PING":
                    writer.write(b"+PONG\r\n")
                else:
                    writer.write(b"+OK\r\n")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server, port = await tcp_server(redis_6)
    try:
        refused(await serve(f"redis://127.0.0.1:{port}/0"), "6.2.6", "7.0")
    finally:
        server.close()
        await server.wait_closed()
    assert "INFO" in seen, seen


# -- Redis down ------------------------------------------------------------------------------
async def test_a_redis_that_is_down() -> None:
    """Waited for, the reason said at once (one line), then refused (one line)."""
    port = free_port()  # nothing listens there
    out = await serve(f"redis://127.0.0.1:{port}/0", "--redis-wait", "1")
    waiting, last = out.lines[0], out.lines[-1]
    assert waiting.startswith("cardhall serve: waiting up to 1 s (--redis-wait) for Redis: ") and "refused" in waiting
    refused(Outcome(out.code, last, out.seconds, out.bound), "--redis-wait", "1 s", within=1.0 + AT_ONCE)
    assert len(out.lines) == 2, out.stderr
    assert out.seconds >= 1.0, f"exited after {out.seconds:.2f} s: it did not wait"


# -- the control ---------------------------------------------------------------------------
async def test_a_healthy_redis_is_served(redis_binary: str) -> None:
    """The same command against a healthy standalone Redis listens (SIGTERM then)."""
    server = RedisServer(redis_binary)
    server.start()
    try:
        out = await serve(server.url, stop_once_bound=True)
    finally:
        server.close()
    assert out.bound, f"never listened: exit {out.code}\n{out.stderr}"
