"""Ctrl-C on the installed commands: one clear line and the shell's 130, never a traceback.

Each command runs as a real process in a session of its own, and SIGINT goes
to its whole process group, as a terminal's Ctrl-C does (the load generator's
worker processes get it too).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.server.conftest import running_server

CLI = [sys.executable, "-m", "cardhall.clients.cli"]

#: one whole no-limit hand in PHH: dealt, then a fold
HEADS_UP_HAND = """variant = "NT"
antes = [0, 0]
blinds_or_straddles = [1, 2]
min_bet = 2
starting_stacks = [200, 200]
actions = ["d dh p1 AcAd", "d dh p2 7h2s", "p2 f"]
finishing_stacks = [201, 199]
"""


@pytest.fixture
async def live():
    async with running_server() as srv:
        yield srv


async def _start(*args: str, cwd: Path) -> asyncio.subprocess.Process:
    """``cardhall ARGS`` in a new session (its own process group), output unbuffered."""
    return await asyncio.create_subprocess_exec(*CLI, *args, cwd=cwd, start_new_session=True,
                                                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def _wait_for_line(stream: asyncio.StreamReader, text: str, timeout: float = 60) -> bytes:
    """Read ``stream`` until a line containing ``text``; returns what was read."""
    seen = b""
    async with asyncio.timeout(timeout):
        while True:
            line = await stream.readline()
            if not line:
                raise AssertionError(f"the stream ended before {text!r}:\n{seen.decode()}")
            seen += line
            if text.encode() in line:
                return seen


async def _interrupt(proc: asyncio.subprocess.Process, timeout: float = 30) -> tuple[int, str, str]:
    """SIGINT to the process group; returns ``(exit status, stdout, stderr)``."""
    os.killpg(proc.pid, signal.SIGINT)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def _group_gone(pgid: int, timeout: float = 10) -> bool:
    """True once no process of group ``pgid`` is left."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        await asyncio.sleep(0.05)
    return False


async def test_simulate_interrupted(tmp_path):
    proc = await _start("simulate", "--game", "loco_poker", "--players", "3", "--matches", "100000", cwd=tmp_path)
    assert proc.stdout is not None
    await _wait_for_line(proc.stdout, "match    1:")
    code, _, err = await _interrupt(proc)
    assert code == 130
    assert err.strip().splitlines()[-1] == "cardhall simulate: interrupted" and "Traceback" not in err, err


async def test_loadtest_interrupted_ends_its_workers(live, tmp_path):
    proc = await _start("loadtest", "--server", live.url, "--tables", "2", "--seats", "2", "--players", "1",
                        "--spectators", "1", "--workers", "2", "--think", "0.05", "--warmup", "0",
                        "--duration", "120", cwd=tmp_path)
    assert proc.stderr is not None
    before = await _wait_for_line(proc.stderr, "connections open")
    code, _, err = await _interrupt(proc)
    err = before.decode() + err
    assert code == 130
    assert err.strip().splitlines()[-1] == "cardhall loadtest: interrupted" and "Traceback" not in err, err
    assert await _group_gone(proc.pid), "load worker processes outlived the interrupted command"


async def test_bot_interrupted(live, tmp_path):
    owner = await live.client("owner", codec="json")
    table = await owner.create_table("loco_poker", seats=2, bots=1, options={"pause": 0, "bot_think": 30})
    await owner.join(table, role="spectator")
    proc = await _start("bot", "--server", live.url, "--table", table, "--seat", "1", cwd=tmp_path)
    await owner.next_event(table, timeout=30, where=lambda f: f["event"]["type"] == "seated"
                           and f["event"].get("seat") == 1)
    code, _, err = await _interrupt(proc)
    assert code == 130
    assert err.strip().splitlines()[-1] == "cardhall bot: interrupted" and "Traceback" not in err, err
    await owner.close()


async def test_serve_interrupted_shuts_down_gracefully(tmp_path):
    from cardhall.clients.load.probe import free_port

    port = free_port()
    proc = await _start("serve", "--port", str(port), cwd=tmp_path)
    assert proc.stderr is not None
    before = await _wait_for_line(proc.stderr, "Application startup complete")
    code, _, err = await _interrupt(proc)
    err = before.decode() + err
    assert code == 0, err
    assert "Finished server process" in err and "Traceback" not in err, err


async def test_phh_replay_interrupted(tmp_path):
    """A folder of 2,000 hands: the replay fills the stdout pipe, which this test stops reading after
    the first line, so it is still at work when the signal comes."""
    hand = tmp_path / "one.phh"
    hand.write_text(HEADS_UP_HAND)
    folder = tmp_path / "hands"
    folder.mkdir()
    for i in range(2000):
        (folder / f"h{i}.phh").symlink_to(hand)
    proc = await _start("phh", "replay", str(folder), cwd=tmp_path)
    assert proc.stdout is not None
    await _wait_for_line(proc.stdout, str(folder))
    code, _, err = await _interrupt(proc)
    assert code == 130
    assert err.strip().splitlines()[-1] == "cardhall phh replay: interrupted" and "Traceback" not in err, err


async def test_bench_engine_interrupted(tmp_path):
    proc = await _start("bench", "engine", "--games", "no_limit_holdem", "--hands", "10000000", "--no-pokerkit",
                        cwd=tmp_path)
    assert proc.stdout is not None
    await _wait_for_line(proc.stdout, "ours h/s")
    code, _, err = await _interrupt(proc)
    assert code == 130
    assert err.strip().splitlines()[-1] == "cardhall bench engine: interrupted" and "Traceback" not in err, err


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


async def _served_port(parent: int, timeout: float = 60) -> int:
    """The ``--port`` of ``parent``'s ``cardhall serve`` child, once that port accepts connections."""
    async with asyncio.timeout(timeout):
        while True:
            for child in _children(parent):
                try:
                    argv = Path(f"/proc/{child}/cmdline").read_bytes().decode().split("\0")
                except OSError:
                    continue
                if "serve" in argv and "--port" in argv:
                    port = int(argv[argv.index("--port") + 1])
                    try:
                        _, writer = await asyncio.open_connection("127.0.0.1", port)
                    except OSError:
                        continue
                    writer.close()
                    return port
            await asyncio.sleep(0.1)


async def test_bench_server_interrupted_stops_its_server(tmp_path):
    proc = await _start("bench", "server", "--tables", "2", "--spectators", "1", "--seats", "2", "--warmup", "0",
                        "--duration", "300", cwd=tmp_path)
    await _served_port(proc.pid)  # its server is up: the benchmark is under way
    code, _, err = await _interrupt(proc)
    assert code == 130
    assert err.strip().splitlines()[-1] == "cardhall bench server: interrupted" and "Traceback" not in err, err
    assert await _group_gone(proc.pid), "the benchmark's server outlived the interrupted command"
