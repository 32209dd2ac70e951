"""The terminal client's fields, focus, stakes, spectator keys and log, in a pseudo-terminal: the real ``cardhall play`` against
a live server, its screen read through ``pyte`` as a person would (:class:`Terminal`).

* Text pasted (bracketed paste, one write) or typed fast with its Enter in the same write lands
  whole in the create line: the table created has every option given (``clients/tui/fields.py``:
  the field's own ``Input.Submitted``, never a priority Enter that read the field stale).
* Escape leaves a field for nowhere: a stray Enter or ``w`` then joins and watches nothing; back
  from a table (``q``) the create line has the focus, not the list.
* The lobby's stakes column shows the blinds, or a game's first number option.
* A spectator's footer has no action key; its log shows the table's recent events at once (a
  second ``join`` with ``since``); ``?`` shows the game's rules page, then its help from the catalogue.

Every wait is on the screen, on the server's lobby or on a protocol event, with a deadline.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from cardhall.clients.client import Client, fetch_json
from tests.clients.test_tui_auth import terminal_env
from tests.clients.test_tui_identity import CTRL_Q, DEADLINE, Terminal
from tests.conftest import until
from tests.server.conftest import LiveServer, running_server

ESC = b"\x1b"
PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"


async def _tables(live: LiveServer) -> list[dict[str, Any]]:
    return await asyncio.to_thread(fetch_json, live.http + "/api/tables")  # type: ignore[no-any-return]


async def _created(live: LiveServer, known: set[str]) -> dict[str, Any]:
    """The one table of the lobby whose id is not in ``known``, once it is listed."""
    found: list[dict[str, Any]] = []

    async def listed() -> bool:
        found[:] = [t for t in await _tables(live) if t["id"] not in known]
        return len(found) == 1

    await until(listed, DEADLINE, "the new table is listed")
    return found[0]


@asynccontextmanager
async def _session(tmp_path: Path) -> AsyncIterator[tuple[LiveServer, Client, Callable[[], Terminal]]]:
    """A live server, bob's client there, and what starts ann's ``cardhall play`` on it (a new
    player); all closed at the end."""
    async with running_server() as live:
        bob = await live.client("bob", codec="json")
        started: list[Terminal] = []

        def start_ann() -> Terminal:
            started.append(Terminal(["play", "--server", live.url, "--json", "--name", "ann"],
                                    terminal_env(tmp_path / "config")))
            return started[-1]

        try:
            yield live, bob, start_ann
        finally:
            for terminal in started:
                terminal.close()
            await bob.close()


def _footer(terminal: Terminal) -> str:
    """The footer's row (the one that ends with the command palette's key); "" while none is drawn."""
    return next((line for line in reversed(terminal.text.splitlines()) if "^p palette" in line), "")


async def _table_has_the_keys(terminal: Terminal) -> None:
    """Wait until the table screen's footer offers its keys with the log focused ("tab type
    amount" first): the screen shows its table a moment before its bindings replace the lobby's
    footer, and a key pressed in that moment is not the table's."""
    await until(lambda: "tab type amount" in _footer(terminal), DEADLINE, "the table screen has the keys")


async def test_paste_fast_typing_escape_and_stakes_in_the_lobby(tmp_path: Path) -> None:
    async with _session(tmp_path) as (live, bob, start_ann):
        blinds = await bob.create_table("no_limit_holdem", 2, {"small_blind": 25, "big_blind": 50}, 0)
        await bob.create_table("loco_poker", 2, {"points_to_win": 2}, 0)
        ann = start_ann()
        screen = await ann.shows("⏎ create table", "points to win 2", blinds)
        row = next(line for line in screen.splitlines() if blinds in line)
        assert "25/50" in row, row
        known = {t["id"] for t in await _tables(live)}

        # a paste (bracketed, one write) and its Enter: the whole spec, every option
        ann.press(PASTE_START + b"no_limit_holdem 2 1 small_blind=5 big_blind=10 blind_levels=7 pause=5"
                  + PASTE_END + b"\r")
        await ann.shows("you: seat 1 (ann)")
        await _table_has_the_keys(ann)
        made = await _created(live, known)
        assert made["game"] == "no_limit_holdem" and made["seats"] == 2 and made["bots"] == 1, made
        assert {k: made["options"].get(k) for k in ("small_blind", "big_blind", "blind_levels", "pause")} == {
            "small_blind": 5, "big_blind": 10, "blind_levels": 7, "pause": 5.0}, made
        ann.press(b"q")  # back to the lobby: the create line has the focus again
        await ann.shows("⏎ create table", "5/10")
        known.add(made["id"])

        # keys typed fast, Enter in the same write (as a terminal sends them)
        ann.press(b"loco_poker 3 1 points_to_win=4 multi_call=duels\r")
        await ann.shows("you: seat 1 (ann)")
        await _table_has_the_keys(ann)
        made = await _created(live, known)
        assert made["game"] == "loco_poker" and made["seats"] == 3, made
        assert made["options"].get("points_to_win") == 4 and made["options"].get("multi_call") == "duels", made
        ann.press(b"q")
        await ann.shows("⏎ create table", "points to win 4")
        known.add(made["id"])

        # escape leaves the field for nowhere: stray Enter and w act on no table
        ann.press(ESC)
        await ann.shows("n new table")  # the footer of nowhere (n: back to the create line)
        assert "⏎ join" not in _footer(ann) and "w watch" not in _footer(ann), _footer(ann)
        ann.press(b"\r")
        ann.press(b"w\rw")
        ann.press(b"/")  # processed after the stray keys: the filter line takes the focus
        await ann.shows("⏎ apply filter")
        assert "you: seat" not in ann.text and "you: watching" not in ann.text, ann.text
        after = await _tables(live)
        assert {t["id"] for t in after} == known and all(t["spectators"] == 0 for t in after), after
        ann.press(CTRL_Q)
        assert await ann.exited() == 0


async def test_a_spectator_sees_the_recent_log_no_action_keys_and_the_games_help(tmp_path: Path) -> None:
    async with _session(tmp_path) as (live, bob, start_ann):
        # a hand under way, waiting on bob (the button acts first heads-up, NL-4): no event while ann looks
        table = await bob.create_table("no_limit_holdem", 2, {"button": 1, "pause": 0, "bot_think": 5}, 1)
        await bob.join(table)
        await bob.next_event(table, DEADLINE, where=lambda f: f.get("turn", {}).get("seat") == 1)
        ann = start_ann()
        await ann.shows("⏎ create table", table, "10/20")
        ann.press(b"\t")  # the list, explicitly
        await ann.shows("⏎ join", "w watch")
        ann.press(b"w")
        screen = await ann.shows("you: watching", "bob sits at seat 1", "posts small blind", "— hand 1")
        assert "match 1 (commitment" in screen, screen
        await ann.shows("q lobby", "t chat")  # the footer, drawn once the focus is set
        footer = _footer(ann)
        for key in ("fold", "check/call", "bet/raise", "all-in", "continue", "rematch", "type amount", "min"):
            assert key not in footer, footer
        assert "q lobby" in footer and "t chat" in footer, footer

        ann.press(b"?")  # the game's rules first (tests/clients/test_tui_rules.py), the catalogue's help below them
        await ann.shows("How to play No-limit Texas Hold'em")
        ann.press(b"\x1b[F")  # End
        await ann.shows("No-limit Hold'em (no_limit_holdem)", "big_blind", "watching: no action keys")
        ann.press(ESC)
        await until(lambda: "watching: no action keys" not in ann.text, DEADLINE, "escape closes the help")
        await ann.shows("you: watching", "q lobby")
        ann.press(CTRL_Q)
        assert await ann.exited() == 0
