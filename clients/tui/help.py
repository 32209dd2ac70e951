"""``?`` in the terminal client: a short help of a game from what the catalogue says of it.

The catalogue (``GET /api/games``, SPEC "HTTP") has each game's title, seat range, bots and
options (each with its meaning, default and RULES tag); :func:`game_help` makes that a page, with
the values a table plays with when given (its ``info.options``) and the keys. The full rules pages
do not exist yet: the page says so, and names the RULES.md tags the options cite.

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
The full rules come later (rules pages are not written yet); the tags in brackets name the
sections of RULES.md.
>>> game_help("nope", games, None, "")
'nope: this server does not describe this game (GET /api/games)'
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer

from cardhall.clients.tui.plain import Plain

Frame = dict[str, Any]

HELP_CSS = """
HelpScreen { align: center middle; }
HelpScreen > Vertical { width: 110; height: auto; max-height: 90%; padding: 1 2; border: round $accent;
                        background: $surface; }
"""


def game_help(game: str, catalogue: Frame | None, values: Frame | None, keys: str) -> str:
    """The help page of ``game`` from ``catalogue`` (``GET /api/games``): its title, seats and
    bots, each option with its meaning, default and rule tag (and ``values``, a table's
    ``info.options``, where given), ``keys`` (what the keys do, one line), and that the full rules
    come later. A game the catalogue does not have (or no catalogue): a line that says so."""
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
    lines.append("The full rules come later (rules pages are not written yet); the tags in brackets name the")
    lines.append("sections of RULES.md.")
    return "\n".join(lines)


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
    """:func:`game_help` of ``game`` over the screen; escape (or ``?``) closes it."""

    DEFAULT_CSS = HELP_CSS
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark", "close", "close")]

    def __init__(self, game: str, catalogue: Frame | None, values: Frame | None, keys: str = "") -> None:
        super().__init__()
        self.text = game_help(game, catalogue, values, keys)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Plain(self.text, id="help-text")
        yield Footer(compact=True)

    def action_close(self) -> None:
        self.dismiss(None)
