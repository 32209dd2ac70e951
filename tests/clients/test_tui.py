"""The terminal client (``cardhall play``) against a real server, driven by
textual's pilot: create a table with a bot from the lobby, then play a hand of
each game by pressing keys, and check what the screen shows."""

from __future__ import annotations

import pytest

from cardhall.clients.tui.app import CardhallApp, Lobby, TableView, parse_create
from cardhall.clients.tui.game_avalanche import parse_play
from tests.conftest import until
from tests.games import everyday
from tests.server.conftest import running_server

#: seconds for the screen to show what a step leads to (a busy machine is slow)
DEADLINE = 60

GAMES = {
    "fixed_limit_holdem": "fixed_limit_holdem 2 1 pause=0 bot_think=0 starting_stacks=100",
    "no_limit_holdem": "no_limit_holdem 2 1 pause=0 bot_think=0 starting_stacks=200",
    "alamo": "alamo 2 1 pause=0 bot_think=0",
    "loco_poker": "loco_poker 2 1 pause=0 bot_think=0",
    "avalanche": "avalanche 2 1 pause=0 bot_think=0",
}
HAND_OVER = {"avalanche": "MATCH OVER"}


def test_parse_create():
    assert parse_create("loco_poker 3 2 points_to_win=2 pause=0.5") == {
        "game": "loco_poker", "seats": 3, "bots": 2, "options": {"points_to_win": 2, "pause": 0.5}}
    with pytest.raises(ValueError):
        parse_create("  ")


def test_parse_play_ranks():
    groups = {"4": 1, "T": 2, "Q": 1}
    assert parse_play("10", groups) == {"type": "play", "rank": "T", "count": 1}  # 10 is the ten, not the lowest rank
    assert parse_play("10 2", groups) == {"type": "play", "rank": "T", "count": 2}
    assert parse_play("q", groups) == {"type": "play", "rank": "Q", "count": 1}
    assert parse_play("  ", groups) == {"type": "play", "rank": "4", "count": 1}  # nothing typed: the lowest
    for text, said in [("1", "unknown rank '1'"), ("11", "unknown rank '11'"), ("Z 2", "unknown rank 'Z'"), ("JQ", "unknown rank"),
                       ("9", "no 9 in your hand: you can play 4 T Q"), ("T two", "the count must be a number")]:
        with pytest.raises(ValueError, match=said):
            parse_play(text, groups)


def _text(widget) -> str:
    return str(widget.render())


async def _lobby_lists(app, entry: str) -> None:
    """Wait until the lobby's help line (built from GET /api/games) shows ``entry``."""
    await until(lambda: isinstance(app.screen, Lobby) and entry in _text(app.screen.query_one("#help")), DEADLINE,
                f"the lobby lists {entry}")


async def _table_view(app) -> TableView:
    """The table screen, once it has the table's snapshot."""
    await until(lambda: isinstance(app.screen, TableView) and app.screen.snap is not None, DEADLINE, "the table")
    return app.screen


@pytest.mark.parametrize("game", everyday(sorted(GAMES), set(GAMES) - {"avalanche", "fixed_limit_holdem"}))
async def test_play_a_hand_by_keys(game):
    async with running_server() as live:
        app = CardhallApp(live.url, "ann", codec="json")
        async with app.run_test(size=(120, 50)) as pilot:
            await _lobby_lists(app, "avalanche 2-8")
            assert "no_limit_holdem 2-9 (starting_stacks" in _text(app.screen.query_one("#help"))  # GET /api/games
            await pilot.click("#create")
            await pilot.press(*GAMES[game])
            await pilot.press("enter")
            view = await _table_view(app)
            assert view.snap["you"] == 1
            assert game in _text(view.query_one("#info"))
            saw_my_turn = snowed = False
            over = HAND_OVER.get(game, "hand 1 over")
            log = view.query_one("#log")
            for _ in range(3000):
                if any(over in line for line in log.written):
                    break
                turn = view.turn
                if turn and turn["seat"] == 1:
                    if turn.get("continue"):
                        await pilot.press("space")
                    else:
                        kinds = {a["type"] for a in view.legal}
                        if kinds:
                            saw_my_turn = saw_my_turn or "YOUR TURN" in _text(view.query_one("#turn"))
                            # Avalanche: one snowfall (the key), then plays (a game of snowfalls is long)
                            key = ("c" if kinds & {"check", "call"} else "s" if "snowfall" in kinds and not snowed
                                   else "p")
                            snowed = snowed or key == "s"
                            await pilot.press(key)
                await pilot.pause(0.02)
            else:
                raise AssertionError("the hand did not end")
            assert saw_my_turn
            board = _text(view.query_one("#board"))
            shown = {"alamo": "ann (you)  stack", "loco_poker": "points", "avalanche": "RESULT"}.get(game, "ann (you)  stack")
            assert shown in board, board
            assert any(line.startswith("ann ") for line in log.written)  # our own actions are in the log, by name
            started = [line for line in log.written if line.startswith("match 1 (")]
            if game != "avalanche":  # (a whole Avalanche game is longer than the log keeps)
                assert started and ("button" in started[0] or "dealer" in started[0]), started  # match_started.options
            await pilot.press("q")  # back to the lobby (escape only leaves a field)
            await until(lambda: isinstance(app.screen, Lobby), DEADLINE, "back in the lobby")


async def test_a_game_without_a_terminal_renderer_is_played_as_data():
    """High Card (tests/toygame) has no renderer: the terminal client draws its view as key/value
    lines, logs its events as such lines, numbers its legal actions, and the digit keys play them
    (an amount typed in the input, else the legal minimum)."""
    from cardhall.engine import plugins

    (spec,) = plugins.load_module("tests.toygame")
    with plugins.registered(spec):
        async with running_server() as live:
            app = CardhallApp(live.url, "ann", codec="json")
            async with app.run_test(size=(120, 50)) as pilot:
                await _lobby_lists(app, "high_card 2-6 (hands max_bet)")
                await pilot.click("#create")
                await pilot.press(*"high_card 2 1 pause=0 bot_think=0 hands=2 max_bet=4")
                await pilot.press("enter")
                view = await _table_view(app)
                assert view.snap["you"] == 1 and view.generic
                log = view.query_one("#log")
                bets = 0
                for _ in range(3000):
                    if any("MATCH OVER" in line for line in log.written):
                        break
                    turn = view.turn
                    if turn and turn["seat"] == 1:
                        if turn.get("continue"):
                            await pilot.press("space")
                        elif view.legal:
                            assert "1:bet 1..4  2:fold" in _text(view.query_one("#legal"))
                            if bets == 0:  # the first bet with an amount typed, later ones at the minimum
                                await pilot.press("tab", "3", "escape")  # into the amount field, 3, out
                                await until(lambda: view.query_one("#amount").value == "3"
                                            and not view.query_one("#amount").has_focus, DEADLINE, "3 typed")
                            await pilot.press("1")
                            bets += 1
                            # the bet answered: the turn moves on (its id is the seq that began it), the input cleared
                            await until(lambda t=turn: (not view.turn or view.turn["id"] != t["id"])
                                        and view.query_one("#amount").value == "", DEADLINE, "the table takes the bet")
                    await pilot.pause(0.02)
                else:
                    raise AssertionError("the match did not end")
                lines = [line for line in log.written]
                assert any(line.startswith("deal: hand 1, order ") and ", card " in line for line in lines), lines
                assert "action: hand 1, seat ann, action bet, amount 3" in lines, lines
                assert bets >= 2
                board = _text(view.query_one("#board"))
                assert "points: 1:" in board and "hand: 2" in board and "RESULT" in board, board
