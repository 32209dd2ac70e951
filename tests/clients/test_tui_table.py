"""The terminal client (``cardhall play``) as a player finds it, driven by textual's pilot
against a real server on loopback: errors are messages, the footer lists the keys and focus
starts in the creation input, players go by name and no Python value shows, the lobby refreshes
itself, long log lines wrap, Avalanche previews a play, and the bet presets fill the amount; a
game's terminal parts come from its registration, each one absent being the generic behaviour."""

from __future__ import annotations

import argparse
import re
from dataclasses import replace
from pathlib import Path

from textual.widgets import DataTable, Input
from textual.widgets._footer import FooterKey

from cardhall.clients.client import Client
from cardhall.clients.tui.app import CardhallApp, Lobby, TableView
from cardhall.clients.tui.game_avalanche import OUTCOME_TEXT, outcome
from cardhall.clients.tui.presets import presets
from cardhall.clients.tui.render import TuiGame, parts
from cardhall.engine import plugins
from tests.conftest import until
from tests.server.conftest import running_server

#: what a Python value looks like on screen: None, a list or a dict literal
PYTHON_VALUE = re.compile(r"\bNone\b|\[\d|\{'|\bTrue\b|\bFalse\b")

#: seconds for the screen to show what a step leads to (a busy machine is slow)
DEADLINE = 60


def _text(widget) -> str:
    return str(widget.render())


def _footer(app) -> dict[str, str]:
    """The footer as the user sees it: key -> description (enabled keys only)."""
    return {k.key: k.description for k in app.screen.query(FooterKey) if not k.disabled}


async def _footer_showing(pilot, app, key: str, description: str) -> dict[str, str]:
    """The footer once it shows ``key`` as ``description`` (it is drawn after the focus moves)."""
    await until(lambda: _footer(app).get(key) == description, DEADLINE, f"the footer shows {key}: {description}")
    return _footer(app)


async def _table(app, pilot) -> TableView:
    await until(lambda: isinstance(app.screen, TableView), DEADLINE, "the table screen")
    return app.screen


async def test_lobby_focus_keys_refresh_and_a_full_table_is_a_message():
    """(a) Enter on a table whose seats are all taken says why and stays in the lobby; (b) focus starts in the
    input, so typing a spec and Enter creates a table, and the footer lists the focused field's
    keys; (d) the lobby refreshes itself, keeping the selected row and the typed text."""
    async with running_server() as live:
        bob = Client(live.url, codec="json")
        await bob.connect()
        await bob.hello("bob")
        full = await bob.create_table("no_limit_holdem", 2, {"pause": 0, "bot_think": 0}, 1)
        await bob.join(full)
        app = CardhallApp(live.url, "ann", codec="json", lobby_refresh=0.1)
        async with app.run_test(size=(160, 40)) as pilot:
            await until(lambda: isinstance(app.screen, Lobby)
                        and app.screen.query_one("#tables", DataTable).row_count == 1, DEADLINE, "the lobby lists the table")
            lobby = app.screen
            grid = lobby.query_one("#tables", DataTable)
            assert isinstance(app.focused, Input) and app.focused.id == "create"
            keys = await _footer_showing(pilot, app, "enter", "create table")
            assert keys.get("enter") == "create table" and keys.get("tab") == "next field" and keys.get("ctrl+q") == "quit" and "w" not in keys, keys
            await pilot.press(*"no_limit_holdem 3 2")  # typed while the lobby refreshes
            await pilot.press("tab")
            assert app.focused is grid
            keys = await _footer_showing(pilot, app, "enter", "join")
            assert keys.get("enter") == "join" and keys.get("w") == "watch" and keys.get("r") == "refresh", keys
            other = await bob.create_table("alamo", 2, {"pause": 0}, 0)  # joinable: listed first
            await until(lambda: grid.row_count == 2, DEADLINE, "the lobby refreshes by itself")
            await pilot.press("down")  # select the full table (joinable tables come first)
            selected = grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value
            assert selected == full and str(grid.get_row(full)[3]) == "2/2"
            await bob.create_table("loco_poker", 2, {"pause": 0}, 0)
            await until(lambda: grid.row_count == 3, DEADLINE, "a third table appears")
            assert grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value == full  # selection kept
            await pilot.press("enter")
            status = lobby.query_one("#status")
            # the server's refusal (here match_running; table_full at a finished full table) as a message
            await until(lambda: f"cannot join {full}: match_running: " in _text(status), DEADLINE, "the refusal is said")
            assert app.is_running and app.screen is lobby and other in [str(k.value) for k in grid.rows]
            await pilot.press("tab")
            assert lobby.query_one("#create", Input).value == "no_limit_holdem 3 2"  # kept across refreshes
            await pilot.press("enter")
            view = await _table(app, pilot)
            assert view.snap["info"]["seats"] == 3 and view.snap["you"] == 1
        await bob.close()


async def test_no_limit_presets_names_errors_and_wrapping():
    """(g) the presets (min, ½ pot, ¾ pot, pot, all-in, clamped) fill the amount and b raises it,
    with their keys in the footer; (a) a refused raise and a dropped connection are messages;
    (c) names everywhere and never a Python value; (e) long log lines wrap."""
    async with running_server() as live:
        app = CardhallApp(live.url, "ann", codec="json")
        async with app.run_test(size=(100, 50)) as pilot:
            await until(lambda: isinstance(app.screen, Lobby), DEADLINE, "the lobby")
            await pilot.press(*"no_limit_holdem 2 1 pause=0 bot_think=0 starting_stacks=400 button=1", "enter")
            view = await _table(app, pilot)
            await until(lambda: view.turn and view.turn["seat"] == 1
                        and any(a["type"] == "raise" for a in view.legal), DEADLINE, "my turn to raise")
            state = view.snap["state"]
            sizes = presets(view.legal, state, 1)
            raise_ = next(a for a in view.legal if a["type"] == "raise")
            to_call = next((a["min"] for a in view.legal if a["type"] == "call"), 0)
            pot_to = state["bets"]["1"] + to_call + state["pot"] + to_call  # RULES NL-2: call, then the pot
            assert [p.amount for p in sizes] == [raise_["min"], max(raise_["min"], state["bets"]["1"] + to_call + (state["pot"] + to_call) // 2),
                                                 max(raise_["min"], state["bets"]["1"] + to_call + 3 * (state["pot"] + to_call) // 4),
                                                 min(pot_to, raise_["max"]), raise_["max"]]
            keys = await _footer_showing(pilot, app, "5", "all-in")
            assert [keys.get(str(n)) for n in range(1, 6)] == ["min", "½ pot", "¾ pot", "pot", "all-in"], keys
            assert keys.get("f") == "fold" and keys.get("b") == "bet/raise" and keys.get("q") == "lobby"
            assert "presets: 1 min" in _text(view.query_one("#legal"))
            assert "YOUR TURN" in _text(view.query_one("#turn"))
            # a raise the server refuses: its reason on the message line, the table still there
            await pilot.press("tab", *"5")
            assert "f" not in await _footer_showing(pilot, app, "enter", "send")
            await pilot.press("escape", "b")
            status = view.query_one("#status")
            await until(lambda: _text(status).startswith("illegal_action: the smallest raise"), DEADLINE, "the refusal is said")
            assert app.is_running and app.screen is view
            # a dropped connection while acting: a message too
            real_act = app.client.act

            async def dropped(*args, **kwargs):
                raise ConnectionError("connection closed")

            app.client.act = dropped
            await pilot.press("c")
            await until(lambda: "connection closed" in _text(status), DEADLINE, "the drop is said")
            app.client.act = real_act
            await pilot.press("4")  # the pot preset fills the amount
            assert view.query_one("#amount", Input).value == str(sizes[3].amount)
            await pilot.press("b")
            log = view.query_one("#log")
            await until(lambda: f"ann raises to {sizes[3].amount}" in log.written, DEADLINE, "the raise is logged")
            assert f"you: raise to {sizes[3].amount}" in _text(status)
            for _ in range(500):  # play the hand out: fold (check when free), continue between streets
                if any(line.startswith("— hand 1 over") for line in log.written):
                    break
                if view.turn and view.turn["seat"] == 1:
                    kinds = {a["type"] for a in view.legal}
                    await pilot.press("space" if view.turn.get("continue") else "f" if "fold" in kinds else "c")
                await pilot.pause(0.02)
            shown = [_text(view.query_one(f"#{w}")) for w in ("info", "board", "turn", "legal", "status")] + log.written
            assert not [s for s in shown if PYTHON_VALUE.search(s)], shown
            assert any("bot 2" in line for line in log.written) and "ann (you)" in shown[1]
            assert not any(re.search(r"\bseat \d+ (folds|checks|calls|raises|bets)", line) for line in log.written)
            # a long line wraps to the log's width instead of running off it
            before = len(log.lines)
            log.write("ann says " + "word " * 60)
            await until(lambda: len(log.lines) - before >= 3, DEADLINE, "the long line is in the log")
            assert all(strip.cell_length <= log.size.width for strip in log.lines)


async def test_avalanche_shows_what_a_play_would_do():
    """(f) the typed play's effect on the avalanche (start, grow, stop, fall) is shown as the
    browser shows it, by the rule of RULES AV-2; a rank not held says so."""
    async with running_server() as live:
        app = CardhallApp(live.url, "ann", codec="json")
        async with app.run_test(size=(120, 50)) as pilot:
            await until(lambda: isinstance(app.screen, Lobby), DEADLINE, "the lobby")
            await pilot.press(*"avalanche 2 1 pause=0 bot_think=0", "enter")
            view = await _table(app, pilot)
            preview = view.query_one("#preview")
            seen: set[str] = set()
            for _ in range(200):  # turns until a play that is not a start (how soon depends on the deal)
                await until(lambda: view.turn and view.turn["seat"] == 1 and view.legal and view.snap.get("state"), DEADLINE,
                                "my turn, its state drawn")
                acted = view.turn["id"]
                play = next((a for a in view.legal if a["type"] == "play"), None)
                pile = view.snap["state"]["avalanche"]
                snowfall = any(a["type"] == "snowfall" for a in view.legal)
                # snowfall until the bot has started an avalanche; with the deck empty a start is
                # the only play left (AV-5): start again
                if play is None or (not pile and "start" in seen and snowfall):
                    await pilot.press("s")
                else:
                    rank, held = max(play["groups"].items(), key=lambda kv: kv[1])
                    await pilot.press("tab", *f"{rank} {held}")
                    expected = OUTCOME_TEXT[outcome(pile, held, rank)]
                    await until(lambda said=expected: _text(preview).endswith(said), DEADLINE, f"the preview says {expected}")
                    seen.add(outcome(pile, held, rank))
                    assert f"play {held} × " in _text(preview)
                    missing = next((r for r in "23456789TJQKA" if r not in play["groups"]), None)
                    if missing is not None:
                        view.query_one("#amount", Input).value = missing
                        await until(lambda: "in your hand" in _text(preview), DEADLINE, "a rank not held")
                    view.query_one("#amount", Input).value = f"{rank} {held}"
                    await pilot.press("enter")
                if seen - {"start"}:
                    break
                # the server's answer: the turn moves on (its id is the seq that began it), the input is cleared
                await until(lambda acted=acted: (not view.turn or view.turn["id"] != acted)
                            and view.query_one("#amount", Input).value == "", DEADLINE, "the table takes the play")
            assert seen - {"start"}, seen
    browser = (Path(__file__).resolve().parents[2] / "clients/web/js/games/avalanche.js").read_text()
    assert all(f'"{said}"' in browser for said in OUTCOME_TEXT.values())  # the browser's words


def draw_with_parts(state, you, names) -> str:
    """A renderer that is a plain function carrying two of the other parts as attributes."""
    return f"{len(state)} fields"


draw_with_parts.keys = ["fold", "bet_raise"]  # type: ignore[attr-defined]
draw_with_parts.hint = "chips"  # type: ignore[attr-defined]


def test_the_parts_come_from_the_registration():
    """A game's terminal parts are what its registration names: a :class:`TuiGame`, or a plain
    function with whichever parts it carries (the others absent); a reference that does not
    import, or none, draws the game as data."""
    assert isinstance(parts("avalanche"), TuiGame) and parts("avalanche").keys == ("snowfall", "play")
    (spec,) = plugins.load_module("tests.toygame")
    with plugins.registered(replace(spec, tui_renderer=f"{__name__}:draw_with_parts")):
        found = parts(spec.name)
        assert found is not None and found({"a": 1}, None, {}) == "1 fields"
        assert (found.keys, found.hint, found.event, found.preview, found.parse) == (("fold", "bet_raise"), "chips",
                                                                                    None, None, None)
    with plugins.registered(replace(spec, tui_renderer=f"{__name__}:no_such_renderer")):
        assert parts(spec.name) is None
    with plugins.registered(spec):
        assert parts(spec.name) is None


async def test_a_renderer_alone_gets_the_generic_keys_and_log_lines():
    """A game whose registration names only a drawing function (High Card drawn by the generic
    text): the footer offers the action keys of its legal actions now (bet: b, fold: f) and hides
    the others (no check/call, snowfall, play), the field says it takes an amount, and its events
    get the generic log lines."""
    (spec,) = plugins.load_module("tests.toygame")
    with plugins.registered(replace(spec, tui_renderer="cardhall.clients.tui.generic:generic_text")):
        async with running_server() as live:
            app = CardhallApp(live.url, "ann", codec="json")
            async with app.run_test(size=(160, 50)) as pilot:
                await until(lambda: isinstance(app.screen, Lobby), DEADLINE, "the lobby")
                await pilot.press(*"high_card 2 1 pause=0 bot_think=0 hands=2 max_bet=4", "enter")
                view = await _table(app, pilot)
                for _ in range(50):  # past the table's waits for a continue, to a turn with actions
                    await until(lambda: view.turn and view.turn["seat"] == 1, DEADLINE, "my turn")
                    if not view.turn.get("continue"):
                        break
                    turn = view.turn["id"]
                    await pilot.press("space")
                    await until(lambda t=turn: not view.turn or view.turn["id"] != t, DEADLINE, "the table goes on")
                assert not view.generic and {a["type"] for a in view.legal} == {"bet", "fold"}, view.legal
                keys = await _footer_showing(pilot, app, "b", "bet/raise")
                assert keys.get("f") == "fold" and not {"c", "a", "s", "p"} & set(keys), keys
                assert view.query_one("#amount", Input).placeholder.startswith("amount ")
                await pilot.press("b")
                log = view.query_one("#log")
                mine = re.compile(r"^action: hand \d+, seat ann, action bet, amount 1$")
                await until(lambda: any(mine.match(line) for line in log.written), DEADLINE, "the bet's generic line")


def test_cardhall_play_exits_with_the_apps_status(monkeypatch):
    """``cardhall play`` returns the terminal app's exit status (2: the name was refused)."""
    from cardhall.clients.commands import play

    def run(self):
        self._return_code = 2

    monkeypatch.setattr(CardhallApp, "run", run)
    assert play.main(argparse.Namespace(server="ws://127.0.0.1:9/ws", name="x", json=True)) == 2
