"""The terminal client at private tables and as their host (protocol 1.5; SPEC "Private tables",
"The host's controls", the lobby's query in "HTTP"), driven by textual's pilot against a real
server on loopback (one for the module; each test makes its own tables and players), the other
side played through the client library: the lobby's filter line narrows the list; the owner sees
the invite link and the requests for a seat, and from the host controls approves, denies, kicks,
bans, hands the table over and closes it, each checked by what the other player receives; a
player joining by an invite link waits for the host's answer, then sits; a table's password is
asked for; an unlisted table joined by its invite link is kept with its invite, so a restarted
client lists it and returns to the seat, and forgets it once its owner closes it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from textual.widgets import DataTable, Input
from textual.widgets._footer import FooterKey

from cardhall.clients.tui.app import CardhallApp, Lobby, TableView
from cardhall.clients.tui.host import HostScreen
from cardhall.clients.tui.identity import IdentityStore
from cardhall.clients.tui.private import invite_link
from cardhall.clients.tui.prompts import ConfirmScreen, PasswordScreen
from tests.conftest import until
from tests.server.conftest import LiveServer, running_server

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: seconds for the screen to show what a step leads to (a busy machine is slow)
DEADLINE = 60
#: tables that wait for their players (no bots, more seats than the test fills)
QUIET = {"pause": 0, "bot_think": 0}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def live() -> AsyncIterator[LiveServer]:
    async with running_server() as srv:
        yield srv


def _text(widget) -> str:
    return str(widget.render())


def _footer(app) -> dict[str, str]:
    """The footer as the user sees it: key -> description (enabled keys only)."""
    return {k.key: k.description for k in app.screen.query(FooterKey) if not k.disabled}


def _listed(grid: DataTable) -> set[str]:
    return {str(k.value) for k in grid.rows}


async def _own_table(app: CardhallApp, pilot, spec: str) -> TableView:
    """Create the table ``spec`` from the lobby's input and return its screen (the owner seated)."""
    await until(lambda: isinstance(app.screen, Lobby), DEADLINE, "the lobby")
    app.screen.query_one("#create", Input).value = spec
    await pilot.press("enter")
    await until(lambda: isinstance(app.screen, TableView), DEADLINE, "the table")
    return app.screen


async def _host_controls(app: CardhallApp, pilot, view: TableView) -> HostScreen:
    await until(lambda: _footer(app).get("h") == "host", DEADLINE, "the footer offers the host controls")
    await pilot.press("h")
    await until(lambda: isinstance(app.screen, HostScreen), DEADLINE, "the host controls")
    return app.screen


async def _select(pilot, screen: HostScreen, kind: str, player: str) -> None:
    """Move the host controls' cursor to the row of ``player`` (``kind``: request, seat, watching)."""
    grid = screen.query_one("#people", DataTable)
    await until(lambda: f"{kind}:{player}" in _listed(grid), DEADLINE, f"{player} listed as {kind}")
    grid.move_cursor(row=grid.get_row_index(f"{kind}:{player}"), animate=False)
    await until(lambda: screen.selected() == (kind, player), DEADLINE, "the row selected")
    await pilot.pause()


async def test_the_lobby_filter_narrows_the_list(live):
    bob = await live.client("bob", codec="json")
    high = await bob.create_table("no_limit_holdem", 3, {**QUIET, "small_blind": 25, "big_blind": 50}, 0)
    botted = await bob.create_table("no_limit_holdem", 3, QUIET, 1)
    alamo = await bob.create_table("alamo", 2, QUIET, 0)
    app = CardhallApp(live.url, "ann", codec="json", lobby_refresh=0.2)
    async with app.run_test(size=(160, 45)) as pilot:
        await until(lambda: isinstance(app.screen, Lobby), DEADLINE, "the lobby")
        grid = app.screen.query_one("#tables", DataTable)
        await until(lambda: {high, botted, alamo} <= _listed(grid), DEADLINE, "every table listed")
        await pilot.press("tab")  # to the list: / moves to the filter line, as the footer says
        await until(lambda: _footer(app).get("slash") == "filter", DEADLINE, "the footer offers the filter")

        async def filtered(text: str, wanted: set[str], unwanted: set[str]) -> None:
            await pilot.press("slash")
            assert app.focused is app.screen.query_one("#filter", Input)
            assert _footer(app).get("enter") == "apply filter"
            app.focused.value = text
            await pilot.press("enter")
            await until(lambda: wanted <= _listed(grid) and not unwanted & _listed(grid), DEADLINE, f"the list for {text}")
            assert app.focused is grid

        await filtered("game=alamo", {alamo}, {high, botted})
        await filtered("game=no_limit_holdem min_big_blind=40", {high}, {alamo, botted})
        await filtered("bots=yes free=2", {botted}, {alamo, high})
        await filtered("", {high, botted, alamo}, set())
        await pilot.press("slash")
        app.focused.value = "free=12"
        await pilot.press("enter")
        status = app.screen.query_one("#status")
        await until(lambda: "free is a whole number from 1 to 9" in _text(status), DEADLINE, "a bad filter is a message")
    await bob.close()


async def test_the_owner_approves_and_denies_seats_from_the_host_controls(live):
    bob = await live.client("bob", codec="json")
    carl = await live.client("carl", codec="json")
    app = CardhallApp(live.url, "ann", codec="json")
    async with app.run_test(size=(150, 50)) as pilot:
        view = await _own_table(app, pilot, "loco_poker 4 pause=0 visibility=unlisted approve_seats=yes password=1234")
        table, host = view.table, view.query_one("#host")
        assert view.snap["info"]["password"] is True and view.host.invite  # the password option stayed text
        link = invite_link(live.http, table, view.host.invite)
        await until(lambda: link in _text(host) and "password set" in _text(host), DEADLINE, "the invite link")

        snap = await bob.join(table, role="player", invite=view.host.invite, password="1234", ask=True)
        assert snap["pending"] is True
        await until(lambda: "requests: bob" in _text(host), DEADLINE, "bob's request on the host line")
        screen = await _host_controls(app, pilot, view)
        await _select(pilot, screen, "request", bob.player)
        keys = _footer(app)
        assert keys.get("a") == "approve" and keys.get("d") == "deny" and "o" not in keys, keys
        await pilot.press("y")  # the invite link to the clipboard (OSC 52), and said as text
        assert app.clipboard == link and link in _text(screen.query_one("#status"))
        await pilot.press("a")
        got = await bob.next_event(table, where=lambda f: f["event"]["type"] == "seat_approved")
        assert got["event"]["player"] == bob.player and got["event"]["seat"] == 2
        await until(lambda: f"seat:{bob.player}" in _listed(screen.query_one("#people", DataTable)), DEADLINE,
                    "bob seated in the host controls")
        assert f"request:{bob.player}" not in _listed(screen.query_one("#people", DataTable))

        await carl.join(table, role="player", invite=view.host.invite, password="1234", ask=True)
        await _select(pilot, screen, "request", carl.player)
        await pilot.press("d")
        got = await carl.next_event(table, where=lambda f: f["event"]["type"] == "seat_denied")
        assert got["event"]["player"] == carl.player
        await until(lambda: "denied carl" in _text(screen.query_one("#status")), DEADLINE, "the outcome said")
        await pilot.press("escape")
        await until(lambda: app.screen is view and "requests:" not in _text(host), DEADLINE, "no request left")
    await bob.close()
    await carl.close()


async def test_kick_ban_hand_over_and_close_from_the_host_controls(live):
    app = CardhallApp(live.url, "ann", codec="json")
    async with app.run_test(size=(150, 50)) as pilot:
        view = await _own_table(app, pilot, "loco_poker 5 pause=0")
        table = view.table
        bob, carl, dave = [await live.client(n, codec="json") for n in ("bob", "carl", "dave")]
        await bob.join(table, role="player")
        await carl.join(table, role="player")
        await dave.join(table, role="spectator")
        await dave.chat(table, "hello from the rail")  # a spectator the host knows from its chat
        await until(lambda: dave.player in view.host.watchers, DEADLINE, "dave's chat")
        screen = await _host_controls(app, pilot, view)

        await _select(pilot, screen, "seat", bob.player)
        keys = _footer(app)
        assert keys.get("k") == "kick" and keys.get("o") == "make host" and "a" not in keys, keys
        await pilot.press("k")
        got = await bob.next_event(table, where=lambda f: f["event"]["type"] == "kicked")
        assert got["event"] == {"type": "kicked", "player": bob.player, "seat": 2}

        await _select(pilot, screen, "watching", dave.player)
        assert "o" not in _footer(app)  # a spectator cannot be made host
        await pilot.press("b")
        await until(lambda: isinstance(app.screen, ConfirmScreen), DEADLINE, "ban asks first")
        await pilot.press("y")
        got = await dave.next_event(table, where=lambda f: f["event"]["type"] == "banned")
        assert got["event"] == {"type": "banned", "player": dave.player}

        await _select(pilot, screen, "seat", carl.player)
        await pilot.press("o")
        await until(lambda: isinstance(app.screen, ConfirmScreen), DEADLINE, "the hand-over asks first")
        await pilot.press("y")
        got = await carl.next_event(table, where=lambda f: f["event"]["type"] == "owner_changed")
        assert got["event"] == {"type": "owner_changed", "owner": carl.player, "reason": "transfer"}
        await until(lambda: app.screen is view and "h" not in _footer(app), DEADLINE, "no host controls any more")
        assert "carl is the host now" in view.query_one("#log").written

        await carl.transfer(table, app.client.player)  # back to ann, who closes it
        screen = await _host_controls(app, pilot, view)
        await pilot.press("c")
        await until(lambda: isinstance(app.screen, ConfirmScreen), DEADLINE, "closing asks first")
        await pilot.press("y")
        got = await bob.next_event(table, where=lambda f: f["event"]["type"] == "closed")
        assert got["event"] == {"type": "closed", "reason": "owner"}
        await until(lambda: app.screen is view, DEADLINE, "the host controls leave a closed table")
        for c in (bob, carl, dave):
            await c.close()


async def test_joining_by_invite_link_waits_for_the_host_then_sits(live):
    bob = await live.client("bob", codec="json")
    table = await bob.create_table("loco_poker", 3, {**QUIET, "visibility": "unlisted", "approve_seats": True}, 0)
    invite = (await bob.join(table, role="player"))["info"]["invite"]
    app = CardhallApp(live.url, "ann", codec="json")
    async with app.run_test(size=(150, 50)) as pilot:
        await until(lambda: isinstance(app.screen, Lobby), DEADLINE, "the lobby")
        app.screen.query_one("#create", Input).value = invite_link(live.http, table, invite)  # pasted
        await pilot.press("enter")
        await until(lambda: isinstance(app.screen, TableView), DEADLINE, "the table")
        view = app.screen
        host = view.query_one("#host")
        await until(lambda: "waiting for the host to approve your seat" in _text(host), DEADLINE, "the wait")
        assert view.you is None and "h" not in _footer(app)  # not the owner: no host key
        asked = await bob.next_event(table, where=lambda f: f["event"]["type"] == "seat_requested")
        assert asked["event"]["player"] == app.client.player
        await bob.approve(table, app.client.player)
        await until(lambda: view.you == 2, DEADLINE, "seated once approved")
        assert "you sit at seat 2" in _text(view.query_one("#status")) and not _text(host).strip()
        assert view.role == "player"
    await bob.close()


async def test_a_password_is_asked_for(live):
    bob = await live.client("bob", codec="json")
    table = await bob.create_table("loco_poker", 3, {**QUIET, "password": "open sesame"}, 0)
    app = CardhallApp(live.url, "ann", codec="json", join=f"#table={table}")  # as `--join` would give it
    async with app.run_test(size=(150, 50)) as pilot:
        await until(lambda: isinstance(app.screen, PasswordScreen), DEADLINE, "the password prompt")
        assert _footer(app).get("enter") == "join"
        await pilot.press(*"guess", "enter")
        await until(lambda: isinstance(app.screen, PasswordScreen) and app.screen.wrong, DEADLINE, "asked again")
        assert "not the table's" in _text(app.screen.query_one("#prompt"))
        await pilot.press(*"open sesame", "enter")
        await until(lambda: isinstance(app.screen, TableView), DEADLINE, "the table")
        assert app.screen.you == 1 and app.screen.host.password  # bob owns it without sitting
    await bob.close()



async def test_a_kept_unlisted_table_is_listed_returned_to_and_forgotten_once_closed(live, tmp_path: Path):
    """The lobby lists no unlisted table, so the client keeps its invite with it: a restarted
    client (the same identity file) looks it up with it, lists it as yours, Enter returns to the
    seat; once the owner closes it, the lobby forgets it."""
    bob = await live.client("bob", codec="json")
    table = await bob.create_table("loco_poker", 3, {**QUIET, "visibility": "unlisted"}, 0)
    invite = (await bob.join(table, role="spectator"))["info"]["invite"]
    path = tmp_path / "identity.json"
    app = CardhallApp(live.url, "ann", codec="json", lobby_refresh=0.2, identity=IdentityStore(path))
    async with app.run_test(size=(150, 50)) as pilot:
        await until(lambda: isinstance(app.screen, Lobby), DEADLINE, "the lobby")
        app.screen.query_one("#create", Input).value = invite_link(live.http, table, invite)  # pasted
        await pilot.press("enter")
        await until(lambda: isinstance(app.screen, TableView) and app.screen.you == 1, DEADLINE, "seated")
        kept = IdentityStore(path).load(live.url).tables[table]
        assert (kept.role, kept.seat, kept.invite) == ("player", 1, invite) and invite not in repr(kept)
        player = app.client.player

    def kept_here() -> bool:
        return table in IdentityStore(path).load(live.url).tables

    again = CardhallApp(live.url, None, codec="json", lobby_refresh=0.2, identity=IdentityStore(path))
    async with again.run_test(size=(150, 50)) as pilot:
        await until(lambda: isinstance(again.screen, Lobby), DEADLINE, "the lobby")
        lobby, grid = again.screen, again.screen.query_one("#tables", DataTable)
        await until(lambda: table in _listed(grid), DEADLINE, "the unlisted table listed")
        row = [str(c) for c in grid.get_row(table)]
        assert row[-1] == "your seat 1" and "(unlisted)" in row[-2] and invite not in " ".join(row), row
        status = lobby.query_one("#status")
        await until(lambda: f"your seat 1 at {table}" in _text(status) and again.focused is grid, DEADLINE,
                    "Enter offered to return to the seat")
        assert invite not in _text(status)
        await pilot.press("enter")
        await until(lambda: isinstance(again.screen, TableView) and again.screen.you == 1, DEADLINE, "back in the seat")
        assert again.client.player == player
    assert kept_here()  # quitting keeps the seat

    await bob.close_table(table)  # while nobody runs the client: only the lobby can tell
    last = CardhallApp(live.url, None, codec="json", lobby_refresh=0.2, identity=IdentityStore(path))
    async with last.run_test(size=(150, 50)):
        await until(lambda: isinstance(last.screen, Lobby) and not kept_here(), DEADLINE, "the closed table forgotten")
        assert table not in _listed(last.screen.query_one("#tables", DataTable))
    await bob.close()
