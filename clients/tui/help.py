"""``?`` in the terminal client: a game's rules, then a short help from what the catalogue says of it.

A game with a rules page (the catalogue's ``rules``) has its "How to play" text first, read from
the server (``GET /rules/<game>.md``, :mod:`cardhall.clients.tui.rules`). Below it, or alone for a
game without one, the help: the catalogue (``GET /api/games``, SPEC "HTTP") has each game's
title, seat range, bots and options (each with its meaning, default and rule tag);
:func:`game_help` makes that a page, with the values a table plays with when given (its
``info.options``) and the keys. :class:`HelpScreen` shows both, scrollable.

>>> games = {"games": [{"name": "loco_poker", "title": "Loco Poker", "seats": {"min": 2, "max": 8},
...     "bots": ["random", "threshold"], "options": [{"name": "points_to_win", "type": "int", "default": 3,
...     "meaning": "points that win the match", "rule": "LO-6"}]}]}
>>> print(game_help("loco_poker", games, {"points_to_win": 2}, "f fold"))
Loco Poker (loco_poker): 2 to 8 seats; bots: random, threshold
<BLANKLINE>
options (this table's value; the default):
  points_to_win  2 (default 3): points that win the match [LO-6]
<BLANKLINE>
keys: f fold
<BLANKLINE>
This server has no rules page for Loco Poker; the tags in brackets name sections of its rules.
>>> game_help("nope", games, None, "")
'nope: this server does not describe this game (GET /api/games)'
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Footer

from cardhall.clients.tui.plain import Plain
from cardhall.clients.tui.rules import fetch_rules, rules_text

Frame = dict[str, Any]

HELP_CSS = """
HelpScreen { align: center middle; }
HelpScreen > VerticalScroll { width: 110; height: auto; max-height: 90%; padding: 1 2; border: round $accent;
                              background: $surface; }
HelpScreen #rules-text { margin-bottom: 1; }
"""


def game_help(game: str, catalogue: Frame | None, values: Frame | None, keys: str) -> str:
    """The help page of ``game`` from ``catalogue`` (``GET /api/games``): its title, seats and
    bots, each option with its meaning, default and rule tag (and ``values``, a table's
    ``info.options``, where given), ``keys`` (what the keys do, one line), and where the rules the
    tags name are (the rules page above, or none on this server). A game the catalogue does not
    have (or no catalogue): a line that says so."""
    found = next((g for g in (catalogue or {}).get("games", []) if g.get("name") == game), None)
    if found is None:
        return f"{game}: this server does not describe this game (GET /api/games)"
    seats = found.get("seats") or {}
    head = f"{found.get('title') or game} ({game}): {seats.get('min')} to {seats.get('max')} seats"
    if found.get("bots"):
        head += "; bots: " + ", ".join(map(str, found["bots"]))
    lines = [head, ""]
    options = found.get("options") or []
    if options:
        lines.append("options (this table's value; the default):" if values is not None else "options (the default):")
        for o in options:
            name = str(o["name"])
            shown = f"{values[name]} (default {o.get('default')})" if values and name in values else str(o.get("default"))
            rule = f" [{o['rule']}]" if o.get("rule") else ""
            lines.append(f"  {name}  {shown}: {o.get('meaning', '')}{rule}")
        lines.append("")
    if keys:
        lines += [f"keys: {keys}", ""]
    if found.get("rules"):
        lines.append("The tags in brackets name sections of the rules above.")
    else:
        lines.append(f"This server has no rules page for {found.get('title') or game}; the tags in brackets name "
                     "sections of its rules.")
    return "\n".join(lines)


def rules_path(game: str, catalogue: Frame | None) -> str | None:
    """The URL path of ``game``'s rules page in ``catalogue`` (its entry's ``rules``), or None."""
    found = next((g for g in (catalogue or {}).get("games", []) if g.get("name") == game), None)
    path = (found or {}).get("rules")
    return path if isinstance(path, str) and path else None


def table_keys(seated: bool, generic: bool) -> str:
    """The table screen's keys in one line, for :func:`game_help`: a seated player's (``generic``:
    a game drawn as data, its legal actions by number), or a spectator's.

    >>> table_keys(False, False)
    't chat, ? this help, escape leave a field, q lobby, ctrl+q quit (watching: no action keys)'
    """
    common = "t chat, ? this help, escape leave a field, q lobby, ctrl+q quit"
    if not seated:
        return common + " (watching: no action keys)"
    acts = "1-9 the legal actions (the amount typed)" if generic else (
        "f fold, c check/call, b bet/raise (the amount typed), a all-in, 1-5 presets, s snowfall, p play, space continue")
    return f"{acts}, m rematch, tab type, {common}"


class HelpScreen(ModalScreen[None]):
    """``game``'s rules (when the catalogue gives a rules page: read from the server, the app's
    ``server`` websocket URL, as the screen opens) above its :func:`game_help`, over the screen
    and scrollable (arrows, page keys); escape, ``q`` or ``?`` closes it. A page that cannot be
    read says so, and the help stays."""

    DEFAULT_CSS = HELP_CSS
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark,q", "close", "close")]

    def __init__(self, game: str, catalogue: Frame | None, values: Frame | None, keys: str = "") -> None:
        super().__init__()
        self.game = game
        self.text = game_help(game, catalogue, values, keys)
        self.rules = rules_path(game, catalogue)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-scroll"):
            if self.rules is not None:
                yield Plain("reading the rules…", id="rules-text")
            yield Plain(self.text, id="help-text")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#help-scroll", VerticalScroll).focus()
        server = getattr(self.app, "server", None)
        if self.rules is not None and isinstance(server, str):
            self.run_worker(self._read_rules(server, self.rules), exclusive=True)

    async def _read_rules(self, server: str, path: str) -> None:
        """Read the rules page and show it (or why it cannot be shown) above the help."""
        try:
            markdown = await asyncio.to_thread(fetch_rules, server, path)
        except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
            shown = f"The rules of {self.game} could not be read: {exc}"
        else:
            shown = f"This server has no rules page for {self.game}." if markdown is None else rules_text(markdown)
        try:
            self.query_one("#rules-text", Plain).update(shown + "\n\n" + "─" * 40 + "\n")
        except NoMatches:  # closed meanwhile
            pass

    def action_close(self) -> None:
        self.dismiss(None)
