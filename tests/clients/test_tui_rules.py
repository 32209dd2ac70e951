"""``?`` in the terminal client shows the game's rules, in a pseudo-terminal: the real ``cardhall
play`` against a live server, its screen read through ``pyte`` (the helpers of
``tests/clients/test_tui_fixes.py``).

* At a table of a game with a rules page (the catalogue's ``rules``), ``?`` shows the page's text
  read from the server (``GET /rules/<game>.md``): its title and first section; the end of the
  scrollable view still has the catalogue's help (the options, the keys); Esc returns to the table.
* The ``cards`` rows show with the terminal's card symbols (High Card's rules, whose first section
  has one).
* A game without rules shows the catalogue's help alone, saying the server has no rules page.

Every wait is on the screen or on a protocol event, with a deadline.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from markdown_it import MarkdownIt

from cardhall.clients.tui.text import cards
from cardhall.engine import plugins
from tests.clients.test_tui_fixes import ESC, _session
from tests.clients.test_tui_identity import CTRL_Q, DEADLINE
from tests.conftest import until
from tests.games import GAMES, quick
from tests.toygame.engine import HighCard

END = b"\x1b[F"  # the End key as xterm sends it


class NoRules(HighCard):
    """High Card under another name, registered without rules."""

    game = "no_rules"
    title = "High Card without rules"


async def _watching(start_ann, bob, game: str, options: dict[str, object]):  # type: ignore[no-untyped-def]
    """Bob's table of ``game``, waiting for its players (nothing on it moves while ann reads), and
    ann's terminal watching it, its footer drawn."""
    table = await bob.create_table(game, 2, options, 0)
    ann = start_ann()
    await ann.shows("⏎ create table", table)
    ann.press(b"\t")
    await ann.shows("⏎ join", "w watch")
    ann.press(b"w")
    await ann.shows("you: watching", "q lobby")
    return ann


async def test_question_mark_shows_the_games_rules_and_escape_returns(tmp_path: Path) -> None:
    game = GAMES[1]
    rules = plugins.spec(game).rules
    assert rules is not None
    markdown = rules.read_text(encoding="utf-8")
    title = markdown.splitlines()[0].removeprefix("# ")
    sections = [line.removeprefix("## ") for line in markdown.splitlines() if line.startswith("## ")]
    async with _session(tmp_path) as (_live, bob, start_ann):
        ann = await _watching(start_ann, bob, game, quick(game))
        ann.press(b"?")
        screen = await ann.shows(title, "═" * len(title), sections[0])
        assert "reading the rules" not in screen
        ann.press(END)  # the end: the catalogue's help, with the keys
        await ann.shows("watching: no action keys", "The tags in brackets name sections of the rules above")
        ann.press(ESC)
        await until(lambda: title not in ann.text, DEADLINE, "escape closes the rules")
        await ann.shows("you: watching", "q lobby")
        ann.press(CTRL_Q)
        assert await ann.exited() == 0


async def test_the_rules_cards_show_with_the_terminals_card_symbols(tmp_path: Path) -> None:
    (toy,) = plugins.load_module("tests.toygame")
    assert toy.rules is not None
    markdown = toy.rules.read_text(encoding="utf-8")
    first = next(t for t in MarkdownIt("commonmark").parse(markdown) if t.type == "fence" and t.info.strip() == "cards")
    rows = [line.partition(":") for line in first.content.splitlines() if line.strip()]
    with plugins.registered(toy):
        async with _session(tmp_path) as (_live, bob, start_ann):
            ann = await _watching(start_ann, bob, toy.name, {"hands": 1})
            ann.press(b"?")
            await ann.shows(markdown.splitlines()[0].removeprefix("# "), *(f"{label}: {cards(codes.split())}"
                                                                         for label, _, codes in rows))
            assert "Qh" not in ann.text and "Q♥" in ann.text  # a code shown as its symbols
            ann.press(ESC)
            await until(lambda: "Q♥" not in ann.text, DEADLINE, "escape closes the rules")
            await ann.shows("you: watching", "q lobby")
            ann.press(CTRL_Q)
            assert await ann.exited() == 0


async def test_a_game_without_rules_shows_the_catalogues_help(tmp_path: Path) -> None:
    (toy,) = plugins.load_module("tests.toygame")
    bare = dataclasses.replace(toy, name=NoRules.game, engine=NoRules, schema=None, web_renderer=None, rules=None,
                               source="tests.clients")
    with plugins.registered(bare):
        async with _session(tmp_path) as (_live, bob, start_ann):
            ann = await _watching(start_ann, bob, NoRules.game, {"hands": 1})
            ann.press(b"?")
            await ann.shows(f"{NoRules.title} ({NoRules.game})", "max_bet", "watching: no action keys",
                            f"This server has no rules page for {NoRules.title}")
            ann.press(b"q")  # q closes it too (and leaves nothing else)
            await until(lambda: "has no rules page" not in ann.text, DEADLINE, "q closes the help")
            await ann.shows("you: watching", "q lobby")
            ann.press(CTRL_Q)
            assert await ann.exited() == 0
