"""``cardhall serve --workers N`` (``cardhall.server.workers``), with real processes, a
private ``redis-server`` and real sockets over loopback:

* the supervisor binds one port (``--port 0``: a free one, logged) and starts N
  children, each a node with its own pid and id (``<node-id>-w<i>``), and the
  connections spread over them (a listening socket each, ``SO_REUSEPORT``);
* a child killed with SIGKILL is started again, and the port answers all along;
* SIGTERM stops everything within seconds with status 0; a supervisor killed
  with SIGKILL leaves no child serving orphaned;
* a node that keeps dying at start makes the supervisor give up (status 1);
* wrong arguments are refused with status 2 and a message, never a traceback.

The tests rely only on the nodes answering HTTP and websockets, not on what the
cluster does between them.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cardhall.clients.client import Client
from tests.conftest import until
from tests.server.conftest import RedisServer

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    """The environment of a ``cardhall serve`` under test: no Redis URL unless given on its command line."""
    env = dict(os.environ)
    env.pop("CARDHALL_REDIS_URL", None)
    env.pop("CARDHALL_NODE_ID", None)
    return env


class Served:
    """A ``cardhall serve --workers N`` process whose output goes to ``log``."""

    def __init__(self, log: Path, *args: str) -> None:
        self.log = log
        with log.open("wb") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "cardhall.clients.cli", "serve", *args],
                                         cwd=ROOT, env=_env(), stdout=out, stderr=subprocess.STDOUT)
        self.port = 0

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, pattern: str, count: int = 1, timeout: float = 60.0) -> list[re.Match[str]]:
        """The first ``count`` matches of ``pattern`` in the log, once there are that many."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = list(re.finditer(pattern, self.text()))
            if len(found) >= count:
                return found[:count]
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        pytest.fail(f"no {count} x {pattern!r} in the log (status {self.proc.poll()}):\n{self.text()}")

    async def until(self, condition: Callable[[], Any], what: str) -> None:
        """:func:`tests.conftest.until` with a minute's deadline, failing with the log."""
        try:
            await until(condition, 60, what)
        except AssertionError as exc:
            raise AssertionError(f"{exc}:\n{self.text()}") from None

    def children(self) -> set[int]:
        return children(self.proc.pid)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[list[Served]]:
    """Started :class:`Served` processes are put here; whatever is left of them is killed at the end."""
    started: list[Served] = []
    yield started
    for s in started:
        left = s.children()
        s.kill()
        for pid in left:
            _signal(pid, signal.SIGKILL)


def children(pid: int) -> set[int]:
    """The pids of the live (not zombie) child processes of ``pid``, from /proc."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None and stat[1] == pid and stat[0] != "Z":
                found.add(int(entry.name))
    return found


def _stat(pid: int) -> tuple[str, int] | None:
    """``(state, parent pid)`` of ``pid``, or None when there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def _alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _get(url: str, timeout: float = 60.0) -> tuple[int, dict[str, object]]:
    """GET on a new connection (each request may reach another node); ``(status, JSON body)``."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (loopback)
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def _healthy(port: int, times: int) -> None:
    """``times`` GET /healthz, each on its own connection, all answered 200 ok."""
    for _ in range(times):
        status, body = await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/healthz")
        assert status == 200 and body["status"] == "ok", (status, body)


async def _websockets(port: int, count: int) -> None:
    """``count`` websockets at once: each connects, says hello and gets a pong."""
    clients = [await Client(f"ws://127.0.0.1:{port}/ws").connect() for _ in range(count)]
    try:
        for i, c in enumerate(clients):
            await c.hello(f"p{i}")
            assert (await c.ping())["type"] == "pong"
    finally:
        for c in clients:
            await c.close()


def _start(served: list[Served], tmp_path: Path, redis_server: RedisServer, *extra: str) -> Served:
    """``cardhall serve --workers 2`` on a free port of the private Redis; returns once both nodes are ready."""
    s = Served(tmp_path / "serve.log", "--workers", "2", "--port", "0", "--redis", redis_server.url,
               "--redis-prefix", "x", "--node-id", "t", "--log-level", "info", *extra)
    served.append(s)
    s.port = int(s.wait_for(r"listening on http://127\.0\.0\.1:(\d+)")[0].group(1))
    s.wait_for(r"node t-w1 ready")
    s.wait_for(r"node t-w2 ready")
    return s


async def test_two_nodes_share_the_port_restart_and_stop(redis_server: RedisServer, tmp_path: Path,
                                                         served: list[Served]) -> None:
    # its 26 new players come from 127.0.0.1: past the 20 per address the two nodes count together
    s = _start(served, tmp_path, redis_server, "--new-players-per-address", "0")
    kids = s.children()
    assert len(kids) == 2, (kids, s.text())
    await _healthy(s.port, 6)
    await _websockets(s.port, 4)
    # the kernel spreads connections over the nodes (a socket each, SO_REUSEPORT): both serve a share
    clients = [await Client(f"ws://127.0.0.1:{s.port}/ws").connect() for _ in range(20)]
    try:
        for i, c in enumerate(clients):
            await c.hello(f"p{i}")
        seen: dict[str, int] = {}
        for _ in range(30):
            status, body = await asyncio.to_thread(_get, f"http://127.0.0.1:{s.port}/healthz")
            seen[body["cluster"]["node"]] = body["connections"]
            if len(seen) == 2:
                break
        assert set(seen) == {"t-w1", "t-w2"} and min(seen.values()) >= 2, seen
    finally:
        for c in clients:
            await c.close()
    # each node logs with its id
    log = s.text()
    assert "[t-w1]" in log and "[t-w2]" in log, log

    # a node killed: started again (a new pid, the same id), and the port answers meanwhile
    victim = min(kids)
    os.kill(victim, signal.SIGKILL)

    async def replaced() -> bool:  # the port answering all along
        await _healthy(s.port, 1)
        now = s.children()
        return len(now) == 2 and victim not in now and len(re.findall(r"node t-w\d ready", s.text())) == 3

    await s.until(replaced, "the killed node started again")
    assert re.search(rf"node t-w\d \(pid {victim}\) was killed by SIGKILL", s.text()), s.text()
    await _healthy(s.port, 3)
    await _websockets(s.port, 2)

    # SIGTERM: every node stops, then the supervisor, with status 0
    kids = s.children()
    began = time.monotonic()
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(10) == 0, s.text()
    took = time.monotonic() - began
    assert took < 5, f"took {took:.1f} s to stop"
    assert not any(_alive(pid) for pid in kids)
    log = s.text()
    assert "received SIGTERM" in log and "node t-w1" in log and "Traceback" not in log, log
    assert len(re.findall(r"node t-w\d \(pid \d+\) stopped", log)) == 2, log
    with pytest.raises(OSError):  # nobody listens any more
        socket.create_connection(("127.0.0.1", s.port), 1).close()


async def test_nodes_stop_when_the_supervisor_is_killed(redis_server: RedisServer, tmp_path: Path,
                                                        served: list[Served]) -> None:
    s = _start(served, tmp_path, redis_server)
    kids = s.children()
    assert len(kids) == 2
    s.proc.kill()
    s.proc.wait(30)
    await s.until(lambda: not any(_alive(pid) for pid in kids), "the nodes stopping without their supervisor")
    assert s.text().count("is gone: stopping") == 2, s.text()


def test_a_node_that_keeps_failing_to_start_stops_the_supervisor(redis_server: RedisServer, tmp_path: Path,
                                                                 served: list[Served]) -> None:
    # Redis passes the command's own check; each node then fails to start: a running process (this
    # test) heartbeats under both node ids, and a node refuses an id in use
    import redis as sync_redis

    from cardhall.server.store.keys import Keys

    keys, db = Keys("x"), sync_redis.Redis.from_url(redis_server.url)
    info = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "nonce": "another", "address": "-"})
    stop = threading.Event()

    def beat() -> None:  # renewed as a live node renews its heartbeat
        while not stop.is_set():
            now = db.time()
            for node in ("t-w1", "t-w2"):
                db.hset(keys.nodes, node, info)
                db.zadd(keys.seen, {node: now[0] * 1000 + now[1] // 1000 + 3000})
            time.sleep(0.05)

    beater = threading.Thread(target=beat, daemon=True)
    beater.start()
    try:
        s = Served(tmp_path / "serve.log", "--workers", "2", "--port", "0", "--redis", redis_server.url,
                   "--redis-prefix", "x", "--node-id", "t", "--lease-ttl", "0.9", "--lease-renew", "0.3")
        served.append(s)
        assert s.proc.wait(60) == 1, s.text()
    finally:
        stop.set()
        beater.join()
    log = s.text()
    assert re.search(r"node t-w[12] failed to start 3 times in a row: giving up", log), log
    assert "restarting node" in log and "before it served" in log, log
    assert "is in use by a running node" in log, log


def test_a_node_pointed_at_no_redis_url_exits_1_before_listening() -> None:
    proc = subprocess.run([sys.executable, "-m", "cardhall.clients.cli", "serve", "--workers", "2", "--port", "0",
                           "--redis", "nosuch://127.0.0.1:1/0"], cwd=ROOT, env=_env(), capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "cardhall serve: --redis nosuch://127.0.0.1:1/0: not a Redis URL (Redis URL must specify one of the "
        "following schemes (redis://, rediss://, unix://))"], proc.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--workers", "2"], "--workers 2: N > 1 needs --redis: nodes share tables through Redis"),
    (["--workers", "0"], "--workers must be between 1 and 64 (got 0)"),
    (["--workers", "65", "--redis", "redis://127.0.0.1:1/0"], "--workers must be between 1 and 64 (got 65)"),
])
def test_wrong_workers_are_refused_with_status_2(args: list[str], message: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "cardhall.clients.cli", "serve", *args], cwd=ROOT, env=_env(),
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"cardhall serve: error: {message}", proc.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--lease-ttl", "0.4"], "--lease-ttl must be between 0.5 and 300 seconds (got 0.4)"),
    (["--lease-ttl", "301", "--lease-renew", "1"], "--lease-ttl must be between 0.5 and 300 seconds (got 301)"),
    (["--lease-ttl", "nan"], "--lease-ttl must be between 0.5 and 300 seconds (got nan)"),
    (["--lease-renew", "0"], "--lease-renew must be more than 0 and at most a third of --lease-ttl"),
    (["--lease-renew", "-1"], "--lease-renew must be more than 0 and at most a third of --lease-ttl"),
    (["--lease-ttl", "3", "--lease-renew", "1.01"], "(3 / 3 = 1 s; got 1.01)"),
    (["--trusted-proxy", "10.0.0.1/8"], "--trusted-proxy 10.0.0.1/8: not an IP address or network"),
    (["--trusted-proxy", "proxy.example"], "--trusted-proxy proxy.example: not an IP address or network"),
    (["--workers", "2", "--redis", "redis://127.0.0.1:1/0", "--fd", "0"], "--fd serves one node"),
])
def test_wrong_settings_are_refused_with_status_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from cardhall.clients.cli import main

    monkeypatch.delenv("CARDHALL_REDIS_URL", raising=False)
    assert main(["serve", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cardhall serve: error: ") and message in err and err.count("\n") == 1, err


def test_lease_renew_of_exactly_a_third_is_accepted(redis_server: RedisServer) -> None:
    # the settings checks pass, and Redis's; what fails is the port (in use), after them
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "cardhall.clients.cli", "serve", "--lease-ttl", "0.9",
                               "--lease-renew", "0.3", "--workers", "2", "--redis", redis_server.url,
                               "--port", str(port)], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_one_node_on_an_inherited_socket(tmp_path: Path) -> None:
    # ``--fd``: a socket bound by someone else (a supervisor, a service manager); no supervisor here
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]
        log = tmp_path / "serve.log"
        with log.open("wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", "cardhall.clients.cli", "serve", "--fd", str(sock.fileno()),
                                     "--node-id", "solo"], cwd=ROOT, env=_env(), stdout=out, stderr=subprocess.STDOUT,
                                    pass_fds=(sock.fileno(),))
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                status, body = _get(f"http://127.0.0.1:{port}/healthz", 1)
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        assert status == 200 and body["status"] == "ok"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) in (0, -signal.SIGTERM)  # as a node on its own port: uvicorn raises the signal again
        assert "[solo]" in log.read_text() and "Traceback" not in log.read_text(), log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
