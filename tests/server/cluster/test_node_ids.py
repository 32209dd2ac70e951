"""Node ids: a second running process with the id of a running node is
refused at start (two nodes with one id would take each other's tables);
a node started again with its id after being killed takes its tables back.
Real ``cardhall serve`` processes on a private ``redis-server``."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request

import pytest

from tests.server.conftest import free_port

pytestmark = pytest.mark.redis


def _serve(redis_url: str, port: int, log) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(port), "--log-level", "warning",
         "--redis", redis_url, "--redis-prefix", "ids", "--node-id", "same", "--lease-ttl", "2", "--lease-renew",
         "0.5"], stdout=log, stderr=subprocess.STDOUT)


def _ready(port: int, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
                if r.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def test_a_second_process_with_a_running_nodes_id_is_refused(redis_server, tmp_path):
    log = open(tmp_path / "nodes.log", "wb")
    first = _serve(redis_server.url, free_port(), log)
    second = None
    try:
        first_port = first.args[first.args.index("--port") + 1]
        assert _ready(int(first_port), first), (tmp_path / "nodes.log").read_text()
        second = _serve(redis_server.url, free_port(), log)
        assert second.wait(timeout=60) != 0  # refused at start
        text = (tmp_path / "nodes.log").read_text()
        assert "node id 'same' is in use by a running node" in text, text[-2000:]
        assert first.poll() is None  # the first one serves on
        # killed, then started again with its id: it is not refused (its process is gone)
        first.kill()
        first.wait()
        again_port = free_port()
        again = _serve(redis_server.url, again_port, log)
        try:
            started = time.monotonic()
            assert _ready(again_port, again), (tmp_path / "nodes.log").read_text()[-2000:]
            assert time.monotonic() - started < 10
        finally:
            again.terminate()
            again.wait(timeout=20)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        log.close()
