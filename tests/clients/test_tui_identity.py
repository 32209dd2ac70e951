"""``cardhall play`` remembers who you are on each server
(``clients/tui/identity.py``): its token, name and tables in ``identity.json``
under the user's config folder (``XDG_CONFIG_HOME``), mode 0600, written
atomically; a damaged file is reported and replaced; started again it is the
same player, the lobby marks its table and Enter returns to the seat mid-match
(G-5); ``--fresh`` starts a new player.

The end-to-end test runs the real command in a pseudo-terminal of a fixed size
(stdlib ``pty``) against a live server, and reads its screen through a terminal
emulator (``pyte``): the assertions read the text a person would see. Every wait
is on a screen state, a process state or a protocol event, with a deadline.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import stat
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import pyte
import pytest

from cardhall.clients.client import Client, fetch_json
from cardhall.clients.tui.app import CardhallApp, Lobby
from cardhall.clients.tui.identity import Identity, IdentityStore, SavedTable, default_path, server_key
from tests.conftest import until
from tests.server.conftest import running_server

CLI = [sys.executable, "-m", "cardhall.clients.cli"]
#: seconds for a screen, a process or an event to show what a step leads to (a busy machine is slow)
DEADLINE = 90
COLUMNS, ROWS = 120, 40
#: a match that cannot end while the test runs: huge stacks, slow bots and pauses
LONG_MATCH = "no_limit_holdem 2 1 starting_stacks=1000000 bot_think=5 pause=5"
CTRL_Q, ENTER, TAB = b"\x11", b"\r", b"\t"


# -- the identity store ----------------------------------------------------------------------------
def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_saved_per_server_with_mode_0600_in_a_new_folder(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "identity.json"
    store = IdentityStore(path)
    one, two = "ws://127.0.0.1:8000/ws", "wss://cards.example.org/ws"
    store.save(one, Identity("t-one", "p1", "ann", {"x1": SavedTable("player", 2, "alamo")}))
    store.save(two, Identity("t-two", "p9", "bob", {"y": SavedTable("spectator", None, "avalanche")}))
    assert _mode(path) == 0o600 and _mode(path.parent) == 0o700
    assert sorted(p.name for p in path.parent.iterdir()) == ["identity.json"]  # no temporary file left
    assert store.load(one) == Identity("t-one", "p1", "ann", {"x1": SavedTable("player", 2, "alamo")})
    assert store.load(two).token == "t-two" and store.load(two).tables["y"].role == "spectator"
    assert store.load("WS://127.0.0.1:8000/ws").token == "t-one"  # the same server, however spelled
    assert store.load("ws://127.0.0.1:8001/ws") == Identity()  # another port: another server
    store.forget(one)
    assert store.load(one) == Identity() and store.load(two).token == "t-two"
    assert json.loads(path.read_text())["servers"].keys() == {server_key(two)}
    assert store.problem is None


def test_an_unlisted_tables_invite_is_kept_and_a_file_without_one_loads(tmp_path: Path) -> None:
    """``invite`` (an unlisted table's, protocol 1.5) is saved with its table and only when there is
    one; a file written before it existed (no ``invite``) loads with None, and is kept as it was."""
    path = tmp_path / "identity.json"
    old = {"format": 1, "servers": {"ws://h:1/ws": {"token": "t", "player": "p", "name": "ann",
                                                    "tables": {"x": {"role": "player", "seat": 2, "game": "alamo"}}}}}
    path.write_text(json.dumps(old))
    store = IdentityStore(path)
    me = store.load("ws://h:1/ws")
    assert me.tables == {"x": SavedTable("player", 2, "alamo")} and me.tables["x"].invite is None
    assert store.problem is None
    me.tables["u"] = SavedTable("player", 1, "loco_poker", invite="Ab-_9")
    store.save("ws://h:1/ws", me)
    tables = json.loads(path.read_text())["servers"]["ws://h:1/ws"]["tables"]
    assert tables == {"x": old["servers"]["ws://h:1/ws"]["tables"]["x"],
                      "u": {"role": "player", "seat": 1, "game": "loco_poker", "invite": "Ab-_9"}}
    assert IdentityStore(path).load("ws://h:1/ws").tables["u"].invite == "Ab-_9"
    assert "Ab-_9" not in repr(me)  # a secret: never in a repr (a log line, a test's failure)


def test_a_file_readable_by_others_is_replaced_by_a_0600_one(tmp_path: Path) -> None:
    path = tmp_path / "identity.json"
    path.write_text(json.dumps({"format": 1, "servers": {}}))
    path.chmod(0o644)
    IdentityStore(path).save("ws://h:1/ws", Identity("secret"))
    assert _mode(path) == 0o600 and IdentityStore(path).load("ws://h:1/ws").token == "secret"


@pytest.mark.parametrize("content", [
    b"{not json", b"\xff\xfe\x00garbage", b"[]", b'{"servers": []}', b'{"servers": {"ws://h:1/ws": 3}}',
    b'{"servers": {"ws://h:1/ws": {"token": 5}}}',
    b'{"servers": {"ws://h:1/ws": {"token": "t", "tables": {"x": {"role": "owner"}}}}}',
    b'{"servers": {"ws://h:1/ws": {"token": "t", "tables": {"x": {"role": "player", "seat": "1"}}}}}',
    b'{"servers": {"ws://h:1/ws": {"token": "t", "tables": {"x": {"role": "player", "invite": 7}}}}}',
], ids=["json", "bytes", "list", "servers-list", "entry", "token", "role", "seat", "invite"])
def test_a_damaged_file_is_reported_and_replaced(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "identity.json"
    path.write_bytes(content)
    store = IdentityStore(path)
    assert store.load("ws://h:1/ws") == Identity()  # never a crash
    assert store.problem is not None and str(path) in store.problem
    assert "damaged" in store.problem.replace(str(path), "")  # the path names the test
    store.save("ws://h:1/ws", Identity("fresh"))
    assert store.problem is None and IdentityStore(path).load("ws://h:1/ws").token == "fresh"


def test_an_unreadable_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "identity.json"
    path.mkdir()  # something that cannot be read as a file (root reads any mode)
    store = IdentityStore(path)
    assert store.load("ws://h:1/ws") == Identity()
    assert store.problem is not None and "cannot read" in store.problem.replace(str(path), "")
    with pytest.raises(OSError):
        store.save("ws://h:1/ws", Identity("t"))  # the caller reports it (CardhallApp.report)
    assert [p.name for p in tmp_path.iterdir()] == ["identity.json"]  # no temporary file left


def test_the_default_path_follows_xdg_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_path() == tmp_path / "cardhall" / "identity.json"


# -- the app, driven by textual's pilot -----------------------------------------------------------
async def test_a_damaged_file_or_a_forgotten_token_gives_a_new_player(tmp_path: Path) -> None:
    """At start, a damaged identity file is said on the lobby's message line and replaced; a token
    the server does not know (``unknown_token``) gives a new player and the file follows."""
    path = tmp_path / "identity.json"
    async with running_server() as live:
        for content, said in [(b"{damaged", "damaged"),
                              (json.dumps({"format": 1, "servers": {server_key(live.url): {
                                  "token": "f" * 32, "name": "old", "tables": {"gone": {"role": "player", "seat": 1}}}}}
                              ).encode(), "no longer knows the kept player")]:
            path.write_bytes(content)
            app = CardhallApp(live.url, "ann", codec="json", identity=IdentityStore(path))
            async with app.run_test(size=(COLUMNS, ROWS)):
                def says(app: CardhallApp = app, said: str = said) -> bool:
                    return isinstance(app.screen, Lobby) and said in str(app.screen.query_one("#status").render())

                await until(says, DEADLINE, f"the lobby says {said!r}")
                kept = IdentityStore(path).load(live.url)
                assert kept.token == app.client.token and kept.player == app.client.player and kept.name == "ann"
                assert kept.tables == {} and _mode(path) == 0o600


async def test_joining_and_leaving_update_the_kept_tables(tmp_path: Path) -> None:
    """The kept player is resumed by its token; a kept table the lobby no longer lists (closed) is
    forgotten; sitting down keeps the table with its seat and game; leaving (q) forgets it."""
    path = tmp_path / "identity.json"
    async with running_server() as live:
        ann = await live.client("ann", codec="json")
        await ann.close()  # a player known to the server, not connected
        store = IdentityStore(path)
        store.save(live.url, Identity(ann.token, ann.player, "ann", {"t_closed": SavedTable("player", 1, "alamo")}))
        app = CardhallApp(live.url, None, codec="json", lobby_refresh=0.1, identity=IdentityStore(path))
        async with app.run_test(size=(COLUMNS, ROWS)) as pilot:
            await until(lambda: isinstance(app.screen, Lobby) and not store.load(live.url).tables, DEADLINE,
                        "the closed table is forgotten")
            assert app.client.player == ann.player and app.client.name == "ann"  # the same player
            await pilot.click("#create")
            await pilot.press(*"alamo 2 1 pause=0", "enter")
            await until(lambda: store.load(live.url).tables, DEADLINE, "the table is kept")
            [(table, kept)] = store.load(live.url).tables.items()
            assert kept == SavedTable("player", 1, "alamo")
            await until(lambda: not isinstance(app.screen, Lobby), DEADLINE, "the table screen")
            await pilot.press("q")  # q leaves the table (escape only leaves a field)
            await until(lambda: isinstance(app.screen, Lobby) and table not in store.load(live.url).tables, DEADLINE,
                        "the table left is forgotten")
            assert store.load(live.url).token == ann.token


async def test_another_name_for_the_kept_player_renames_it(tmp_path: Path) -> None:
    """``--name`` differing from the kept player's name renames that player (protocol 1.4
    ``rename``): the same player id and token, the new name on the server and in the file."""
    path = tmp_path / "identity.json"
    async with running_server() as live:
        ann = await live.client("ann", codec="json")
        await ann.close()
        IdentityStore(path).save(live.url, Identity(ann.token, ann.player, "ann"))
        app = CardhallApp(live.url, "anna", codec="json", identity=IdentityStore(path))
        async with app.run_test(size=(COLUMNS, ROWS)):
            await until(lambda: isinstance(app.screen, Lobby), DEADLINE, "the lobby")
            kept = IdentityStore(path).load(live.url)
            assert (kept.player, kept.token, kept.name) == (ann.player, ann.token, "anna")
            assert app.client.player == ann.player and app.client.name == "anna" and app.sub_title.startswith("anna @ ")


# -- cardhall play in a pseudo-terminal -----------------------------------------------------------
class Terminal:
    """``cardhall ARGS`` in a pseudo-terminal of :data:`COLUMNS` x :data:`ROWS`, its output fed
    to a ``pyte`` screen as it arrives (an event-loop reader on the master side)."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self.proc = subprocess.Popen([*CLI, *args], stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True, close_fds=True)
        os.close(slave)
        self.master = master
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        os.set_blocking(master, False)
        self.loop = asyncio.get_running_loop()
        self.loop.add_reader(master, self._read)
        self.reading = True

    def _read(self) -> None:
        try:
            data = os.read(self.master, 1 << 16)
        except BlockingIOError:
            return
        except OSError:  # EIO: the command closed the terminal (it exited)
            data = b""
        if not data:
            self._stop_reading()
            return
        self.stream.feed(data)

    def _stop_reading(self) -> None:
        if self.reading:
            self.reading = False
            self.loop.remove_reader(self.master)

    @property
    def text(self) -> str:
        """The screen as text, a line per row."""
        return "\n".join(line.rstrip() for line in self.screen.display)

    def press(self, keys: bytes) -> None:
        """Type ``keys`` (bytes as a terminal sends them: ``\\r`` Enter, ``\\t`` Tab, ``\\x11`` ctrl+q)."""
        os.write(self.master, keys)

    async def shows(self, *texts: str) -> str:
        """Wait until the screen shows every one of ``texts``; the screen's text."""
        try:
            await until(lambda: all(t in self.text for t in texts), DEADLINE, f"the screen shows {texts}")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the screen:\n{self.text}") from None
        return self.text

    async def exited(self) -> int:
        """Wait until the command has exited; its exit status."""
        try:
            await until(lambda: self.proc.poll() is not None, DEADLINE, "cardhall play exits")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the screen:\n{self.text}") from None
        return self.proc.returncode

    def close(self) -> None:
        self._stop_reading()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        os.close(self.master)


def _seat_one(snap: dict[str, Any]) -> dict[str, Any]:
    return next(o for o in snap["info"]["occupants"] if o["seat"] == 1)


async def test_play_returns_to_its_seat_after_a_restart_in_a_pseudo_terminal(tmp_path: Path) -> None:
    config = tmp_path / "config"
    env = {**os.environ, "XDG_CONFIG_HOME": str(config), "TERM": "xterm-256color", "PYTHONUNBUFFERED": "1"}
    for name in ("COLUMNS", "LINES", "NO_COLOR", "TEXTUAL"):
        env.pop(name, None)
    path = config / "cardhall" / "identity.json"
    terminals: list[Terminal] = []

    def play(*args: str) -> Terminal:
        terminals.append(Terminal(["play", "--server", live.url, "--json", *args], env))
        return terminals[-1]

    async with running_server() as live:
        watcher = await Client(live.url, codec="json").connect()
        try:
            await watcher.hello("watcher")
            # 1. a new player creates a table with a bot: the match runs
            first = play("--name", "ann")
            # the lobby: the games' help line (GET /api/games), the name, the input's keys (it has the focus)
            await first.shows("alamo 2-3", "ann @ ", "⏎ create table")
            first.press(LONG_MATCH.encode())
            await first.shows(LONG_MATCH)  # typed into the input (Enter sent with it would overtake the letters)
            first.press(ENTER)
            await first.shows("you: seat 1 (ann)", "running")
            [entry] = await asyncio.to_thread(fetch_json, live.http + "/api/tables")
            table = entry["id"]
            ann = _seat_one(await watcher.join(table, role="spectator"))
            assert ann["connected"] and ann["name"] == "ann"

            # 2. quit mid-match: the seat is kept, the identity is in the file (0600)
            first.press(CTRL_Q)
            assert await first.exited() == 0
            await watcher.next_event(table, DEADLINE, where=lambda f: f["event"]["type"] == "presence"
                                     and f["event"]["seat"] == 1 and not f["event"]["connected"])
            assert _mode(path) == 0o600
            kept = json.loads(path.read_text())["servers"][server_key(live.url)]
            assert isinstance(kept["token"], str) and len(kept["token"]) >= 16
            assert kept["player"] == ann["player"] and kept["name"] == "ann"
            assert kept["tables"] == {table: {"role": "player", "seat": 1, "game": "no_limit_holdem"}}

            # 3. started again (no --name): the same player; the lobby marks the table, Enter returns to the seat
            second = play()
            screen = await second.shows("ann @ ", "your seat 1", f"your seat 1 at {table}", "Enter returns to it")
            row = next(line for line in screen.splitlines() if table in line and "your seat 1" in line)
            assert "no_limit_holdem" in row and "running" in row, row
            await second.shows("⏎ join")  # the list has the focus, the table selected
            second.press(ENTER)
            await second.shows("you: seat 1 (ann)", f"table {table}")
            await watcher.next_event(table, DEADLINE, where=lambda f: f["event"]["type"] == "presence"
                                     and f["event"]["seat"] == 1 and f["event"]["connected"])
            back = _seat_one(await watcher.join(table, role="spectator"))
            assert back["player"] == ann["player"] and back["connected"] and back["name"] == "ann"
            second.press(CTRL_Q)
            assert await second.exited() == 0
            assert json.loads(path.read_text())["servers"][server_key(live.url)]["token"] == kept["token"]

            # 4. --fresh: a new player; the table is not marked, and its seat is not this player's
            third = play("--fresh", "--name", "bob")
            screen = await third.shows("bob @ ", table, "⏎ create table")
            assert "your seat" not in screen and "Enter returns" not in screen, screen
            third.press(TAB)  # to the table list (the input is focused first)
            await third.shows("⏎ join")  # the footer lists the list's keys: the list has the focus
            third.press(ENTER)  # join the table
            await third.shows(f"cannot join {table}: match_running")
            third.press(CTRL_Q)
            assert await third.exited() == 0
            fresh = json.loads(path.read_text())["servers"][server_key(live.url)]
            assert fresh["token"] != kept["token"] and fresh["player"] != ann["player"]
            assert fresh["name"] == "bob" and fresh["tables"] == {} and _mode(path) == 0o600
            assert _seat_one(await watcher.join(table, role="spectator"))["player"] == ann["player"]
        finally:
            for terminal in terminals:
                terminal.close()
            await watcher.close()
