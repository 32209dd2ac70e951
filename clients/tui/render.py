"""Text rendering of a table for the terminal client, from the ``snapshot.state``
a viewer holds (``protocol/SPEC.md`` "Games"), and one line per event for the
log. Pure functions (no textual), so they are easy to test and reuse.

Which function draws a game is the game's registration
(:attr:`cardhall.engine.plugins.GameSpec.tui_renderer`: the built-in games'
are in :mod:`cardhall.clients.tui.games`); a game without one, or one this
process has not registered (a remote server's own game), is drawn by
:mod:`cardhall.clients.tui.generic`.

>>> card("Ah"), card("Td"), card("Xr")
('A♥', 'T♦', '🃏r')
>>> event_line({"type": "action", "seat": 2, "action": "raise", "amount": 40, "total": 60}, {2: "bob"})
'bob raises to 60'
>>> has_renderer("loco_poker"), has_renderer("no_such_game")
(True, False)
>>> event_line({"type": "deal", "hand": 1, "card": "Qh"}, generic=True)
'deal: hand 1, card Q♥'
>>> print(table_text("no_such_game", {"hand": 2, "result": {"winners": [1], "ranking": [[1], [2]]}}, 1, {1: "ann"}))
hand: 2
RESULT: ann wins   ranking: 1. ann  2. seat 2
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from cardhall.clients.tui.events import event_line, who_all
from cardhall.clients.tui.generic import generic_text
from cardhall.clients.tui.text import card, cards
from cardhall.engine import plugins

__all__ = ["card", "cards", "event_line", "has_renderer", "renderer", "table_text"]

Data = dict[str, Any]
Renderer = Callable[[Data, "int | None", dict[int, str]], str]
log = logging.getLogger("cardhall.tui")


def renderer(game: str) -> Renderer:
    """The function that draws ``game``: its registration's, else the generic one
    (also when the registered one does not import: logged)."""
    found = plugins.games().get(game)
    if found is None or found.tui_renderer is None:
        return generic_text
    try:
        return plugins.resolve(found.tui_renderer)  # type: ignore[no-any-return]
    except (ImportError, AttributeError) as exc:
        log.error("game %s: its terminal renderer %s does not import (%s); drawing it as data",
                  game, found.tui_renderer, exc)
        return generic_text


def has_renderer(game: str) -> bool:
    """True when ``game`` is registered here with a terminal renderer of its own."""
    found = plugins.games().get(game)
    return found is not None and found.tui_renderer is not None


def table_text(game: str, state: Data | None, you: int | None, names: dict[int, str]) -> str:
    """The table as lines of text for ``you`` (a seat or None)."""
    if state is None:
        return "waiting for players (the match starts when every seat is taken, or the owner starts it)"
    lines = [renderer(game)(state, you, names)]
    if state.get("result"):
        lines.append(result_text(state["result"], names))
    return "\n".join(lines)


def result_text(result: Data, names: dict[int, str]) -> str:
    """A match's ``result`` (``winners``, ``ranking``: groups of tied seats, best first) by name."""
    winners = list(result.get("winners") or [])
    ranking = "  ".join(f"{i}. {who_all(names, group)}" for i, group in enumerate(result.get("ranking") or [], 1))
    return f"RESULT: {who_all(names, winners)} {'win' if len(winners) > 1 else 'wins'}" + (
        f"   ranking: {ranking}" if ranking else "")
