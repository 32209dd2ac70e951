"""Ctrl-C on the installed commands: one clear line and the shell's 130, never a traceback.

Each command runs as a real process in a session of its own, and SIGINT goes
to its whole process group, as a terminal's Ctrl-C does (the load generator's
worker processes get it too). The signal is sent once the command shows it is
under way (a line it printed, a server event, its own server's connections),
in a state where it cannot finish before the signal arrives; the deadlines are
generous, since a busy machine is slow.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cardhall.clients.client import Client, Frame
from cardhall.clients.load.interrupts import run_interruptible
from cardhall.clients.load.probe import metric
from tests.conftest import until
from tests.server.conftest import running_server

CLI = [sys.executable, "-m", "cardhall.clients.cli"]

#: seconds: for a command to show it is under way, and to end once interrupted
DEADLINE = 120

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


@contextlib.contextmanager
def _ctrl_c_reachable() -> Iterator[None]:
    """A command started in this block starts with SIGINT's default action, as a terminal's
    foreground command does, even when this test process ignores SIGINT (started in the
    background by a non-interactive shell: the commands would inherit the ignored signal, and
    no Ctrl-C would reach them). exec resets a caught signal, not an ignored one."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


async def _start(*args: str, cwd: Path) -> asyncio.subprocess.Process:
    """``cardhall ARGS`` in a new session (its own process group), output unbuffered."""
    with _ctrl_c_reachable():
        return await asyncio.create_subprocess_exec(*CLI, *args, cwd=cwd, start_new_session=True,
                                                    env={**os.environ, "PYTHONUNBUFFERED": "1"},
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def _wait_for_line(stream: asyncio.StreamReader, text: str, timeout: float = DEADLINE) -> bytes:
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


async def _interrupt(proc: asyncio.subprocess.Process, timeout: float = DEADLINE) -> tuple[int, str, str]:
    """SIGINT to the process group; returns ``(exit status, stdout, stderr)`` once the command has
    exited and every process holding its output has too."""
    os.killpg(proc.pid, signal.SIGINT)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is left."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _interrupted(code: int, err: str, command: str) -> None:
    """The command ended as Ctrl-C should end it: 130 and its one line, no traceback."""
    assert code == 130, f"exit status {code}:\n{err}"
    assert err.strip().splitlines()[-1] == f"{command}: interrupted" and "Traceback" not in err, err


async def test_simulate_interrupted(tmp_path):
    proc = await _start("simulate", "--game", "loco_poker", "--players", "3", "--matches", "100000", cwd=tmp_path)
    assert proc.stdout is not None
    await _wait_for_line(proc.stdout, "match    1:")
    code, _, err = await _interrupt(proc)
    _interrupted(code, err, "cardhall simulate")


async def test_loadtest_interrupted_ends_its_workers(live, tmp_path):
    proc = await _start("loadtest", "--server", live.url, "--tables", "2", "--seats", "2", "--players", "1",
                        "--spectators", "1", "--workers", "2", "--think", "0.05", "--warmup", "0",
                        "--duration", "300", cwd=tmp_path)
    assert proc.stderr is not None
    before = await _wait_for_line(proc.stderr, "connections open")  # its workers are up: the load is under way
    code, _, err = await _interrupt(proc)
    _interrupted(code, before.decode() + err, "cardhall loadtest")
    await until(lambda: not _group_alive(proc.pid), DEADLINE, "the load worker processes end with the command")


async def test_bot_interrupted(live, tmp_path):
    owner = await live.client("owner", codec="json")
    table = await owner.create_table("loco_poker", seats=2, bots=1, options={"pause": 0, "bot_think": 30})
    await owner.join(table, role="spectator")
    proc = await _start("bot", "--server", live.url, "--table", table, "--seat", "1", cwd=tmp_path)
    await owner.next_event(table, timeout=DEADLINE, where=lambda f: f["event"]["type"] == "seated"
                           and f["event"].get("seat") == 1)
    code, _, err = await _interrupt(proc)
    _interrupted(code, err, "cardhall bot")
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


#: hands in the replayed folder: their lines (~100 bytes each under pytest's tmp_path) are about
#: 1 MB, more than twice what the pipe (64 KiB) and this process's reader (it pauses the pipe past
#: 128 KiB, after a read of up to 256 KiB) hold, so the replay cannot finish while nobody reads
PHH_HANDS = 10_000


async def test_phh_replay_interrupted(tmp_path):
    """The replay's output fills the stdout pipe, which this test stops reading after the first
    line: from then on the command is blocked mid-way, whatever the machine's speed, until the
    signal comes (:data:`PHH_HANDS`)."""
    hand = tmp_path / "one.phh"
    hand.write_text(HEADS_UP_HAND)
    folder = tmp_path / "hands"
    folder.mkdir()
    for i in range(PHH_HANDS):
        (folder / f"h{i}.phh").symlink_to(hand)
    proc = await _start("phh", "replay", str(folder), cwd=tmp_path)
    assert proc.stdout is not None
    await _wait_for_line(proc.stdout, str(folder))
    code, out, err = await _interrupt(proc)
    _interrupted(code, err, "cardhall phh replay")
    assert f"{PHH_HANDS} hands" not in out  # it was stopped mid-way: no summary line


async def test_bench_engine_interrupted(tmp_path):
    proc = await _start("bench", "engine", "--games", "no_limit_holdem", "--hands", "10000000", "--no-pokerkit",
                        cwd=tmp_path)
    assert proc.stdout is not None
    await _wait_for_line(proc.stdout, "ours h/s")  # the table's header: its first row takes 10,000,000 hands
    code, _, err = await _interrupt(proc)
    _interrupted(code, err, "cardhall bench engine")


#: a ``cardhall`` command of the test's own, run with ``python -m`` as the suite runs ``cardhall``:
#: ``{name}`` is its name, ``{register}`` the body of its ``register(subparsers)``
COMMAND_MODULE = """
import signal
import sys

from cardhall.clients import cli


def register(subparsers):
{register}


if __name__ == "__main__":
    cli.COMMANDS[:] = ["{name}"]
    sys.exit(cli.main())
"""


async def _run_module(tmp_path: Path, name: str, register: str, *args: str) -> tuple[int, str]:
    """Write :data:`COMMAND_MODULE` as ``commands.NAME`` under ``tmp_path`` and run ``python -m
    commands.NAME ARGS`` there (SIGINT at its default action); returns ``(exit status, stderr)``."""
    package = tmp_path / "commands"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").touch()
    (package / f"{name}.py").write_text(COMMAND_MODULE.format(name=f"commands.{name}", register=register))
    with _ctrl_c_reachable():
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", f"commands.{name}", *args, cwd=tmp_path,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), DEADLINE)
    assert proc.returncode is not None
    return proc.returncode, err.decode()


async def test_ctrl_c_in_code_run_by_exec_of_a_string_still_exits_130(tmp_path):
    """The Ctrl-C lands in code that ``exec`` of a string runs, as it does when it comes while a
    module defining a dataclass is imported (``cardhall bench engine`` right after its table's
    header): CPython 3.11 notes that KeyboardInterrupt as unhandled although ``cli.main`` catches
    it, and under ``python -m`` the process then killed itself by SIGINT (-2) after printing its
    line (:func:`cardhall.clients.cli._clear_unhandled_mark`)."""
    register = ('    subparsers.add_parser("boom").set_defaults(\n'
                '        func=lambda args: exec("import signal; signal.raise_signal(signal.SIGINT)"))')
    code, err = await _run_module(tmp_path, "exec_interrupted", register, "boom")
    _interrupted(code, err, "cardhall boom")


async def test_ctrl_c_while_the_command_is_parsed_names_the_command(tmp_path):
    """The Ctrl-C comes while the command's modules are imported and its parser built (here:
    inside ``register``): it is held until the command is named, and the command never runs."""
    register = ('    signal.raise_signal(signal.SIGINT)\n'
                '    subparsers.add_parser("quick").set_defaults(func=lambda args: print("ran"))')
    code, err = await _run_module(tmp_path, "parse_interrupted", register, "quick")
    _interrupted(code, err, "cardhall quick")


class _CancelledOnReply(Client):
    """A client whose ``victim`` task is cancelled in the very step that completes the request it
    waits on: a Ctrl-C that comes with the reply."""

    victim: asyncio.Task[Frame] | None = None

    def dispatch(self, frame: Frame) -> None:
        super().dispatch(frame)
        if frame.get("type") == "pong" and self.victim is not None:
            self.victim.cancel()


async def test_a_cancellation_that_comes_with_the_reply_is_not_lost(live):
    """Python 3.11's ``asyncio.wait_for`` returned the reply and dropped the cancellation
    (``cardhall bot`` interrupted as its join was answered played on, and ended with 0 once its
    match was over): the client's waits keep the cancellation."""
    client = await _CancelledOnReply(live.url).connect()
    try:
        await client.hello("cancelled")
        client.victim = asyncio.ensure_future(client.ping())
        with pytest.raises(asyncio.CancelledError):
            await client.victim
        assert client.victim.cancelled()
    finally:
        await client.close()


@contextlib.contextmanager
def _sigint_default() -> Iterator[None]:
    """SIGINT at Python's default handler in this process for the block (as for a command)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("swallows", [0, 1])
def test_run_interruptible_ends_in_keyboardinterrupt_whatever_the_work_does(swallows):
    """A Ctrl-C while the work runs ends it with KeyboardInterrupt, also when the work swallows the
    cancellation (it is cancelled again after :data:`RECANCEL_AFTER` seconds) and then returns a
    result (``asyncio.run`` would return it: exit status 0)."""
    taken: list[int] = []

    async def work() -> str:
        signal.raise_signal(signal.SIGINT)  # the Ctrl-C
        while True:
            try:
                await asyncio.sleep(DEADLINE)
            except asyncio.CancelledError:
                taken.append(1)
                if len(taken) > swallows:
                    return "finished as if nothing had come"

    with _sigint_default():
        with pytest.raises(KeyboardInterrupt):
            run_interruptible(work)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # left as found
    assert len(taken) == swallows + 1


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


def _argv(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:  # gone meanwhile
        return []


def _served_port(parent: int) -> int | None:
    """The ``--port`` of ``parent``'s ``cardhall serve`` child, once there is one."""
    for child in _children(parent):
        argv = _argv(child)
        if "serve" in argv and "--port" in argv:
            return int(argv[argv.index("--port") + 1])
    return None


async def test_bench_server_interrupted_stops_its_server(tmp_path):
    """Interrupted in its measured phase: its server is up and serves the spectators of its load
    process (``--tables 2 --spectators 1``: two connections), which it started and waits on. (Its
    server merely answering is not enough: the command may be ending on its own then, and a SIGINT
    that comes while Python exits kills it: status -2, not 130.)"""
    proc = await _start("bench", "server", "--tables", "2", "--spectators", "1", "--seats", "2", "--warmup", "0",
                        "--duration", "300", cwd=tmp_path)
    port: int | None = None

    async def measuring() -> bool:
        nonlocal port
        if proc.returncode is not None:
            assert proc.stderr is not None
            raise AssertionError(f"cardhall bench server ended by itself ({proc.returncode}):\n"
                                 f"{(await proc.stderr.read()).decode()}")
        port = port or _served_port(proc.pid)
        if port is None or not any("--multiprocessing-fork" in _argv(c) for c in _children(proc.pid)):
            return False
        try:
            async with httpx.AsyncClient() as http:
                text = (await http.get(f"http://127.0.0.1:{port}/metrics", timeout=10)).text
        except httpx.TransportError:  # not listening yet
            return False
        return metric(text, "cardhall_connections") >= 2

    await until(measuring, DEADLINE, "cardhall bench server measures: its load process's spectators are connected")
    code, _, err = await _interrupt(proc)
    _interrupted(code, err, "cardhall bench server")
    await until(lambda: not _group_alive(proc.pid), DEADLINE, "the benchmark's server ends with the command")
