"""Text rendering of a table for the terminal client, from the ``snapshot.state``
a viewer holds (``protocol/SPEC.md`` "Games"), and one line per event for the
log. Pure functions (no textual), so they are easy to test and reuse.

How the terminal client draws and plays a game is the game's registration
(:attr:`cardhall.engine.plugins.GameSpec.tui_renderer`): a callable that draws
the table, optionally with more parts (:class:`TuiGame`: its event texts, its
action keys, what typed text does); the built-in games' are the ``game_*``
modules beside this one. A game without one, or one this process has not
registered (a remote server's own game), is drawn by
:mod:`cardhall.clients.tui.generic`.

>>> card("Ah"), card("Td"), card("Xr")
('A♥', 'T♦', '🃏r')
>>> has_renderer("no_such_game"), parts("no_such_game") is None
(False, True)
>>> event_line({"type": "deal", "hand": 1, "card": "Qh"})
'deal: hand 1, card Q♥'
>>> print(table_text("no_such_game", {"hand": 2, "result": {"winners": [1], "ranking": [[1], [2]]}}, 1, {1: "ann"}))
hand: 2
RESULT: ann wins   ranking: 1. ann  2. seat 2
>>> game = TuiGame(text=lambda state, you, names: "a table")
>>> game({}, None, {}), game.keys, game.hint
('a table', None, 'amount')
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cardhall.clients.tui.events import event_line, who_all
from cardhall.clients.tui.generic import generic_text
from cardhall.clients.tui.text import card, cards
from cardhall.engine import plugins

__all__ = ["TuiGame", "card", "cards", "event_line", "has_renderer", "parts", "renderer", "table_text"]

Data = dict[str, Any]
Renderer = Callable[[Data, "int | None", dict[int, str]], str]
log = logging.getLogger("cardhall.tui")


@dataclass(frozen=True)
class TuiGame:
    """A game's parts in the terminal client (what ``GameSpec.tui_renderer`` may name); every part
    but ``text`` is optional, and an absent one is the generic behaviour.

    ``text(state, you, names) -> str``: the table drawn from the game's view (``you`` the
    viewer's seat or None, ``names`` seat -> name); the object itself is callable the same way.
    ``event(event, names) -> str | None``: the log's line for one of the game's events; None for
    the shared texts (the table's own events have theirs; the game's others get no line). Absent:
    every event gets the generic ``type: key value`` line.
    ``keys``: the action keys the game uses, of ``fold``, ``check_call``, ``bet_raise``,
    ``all_in``, ``snowfall``, ``play``: the footer shows each (dimmed while not possible) and hides
    the others. None: a key shows only while the legal actions have its type.
    ``preview(typed, legal, state) -> str``: what the text typed in the amount field would do,
    shown under it as it changes ("" for nothing to say).
    ``parse(key, legal, typed) -> action | None``: the action of ``key`` played with the text
    typed (ValueError with the message to show when the text is not one); None for the shared
    reading (:func:`cardhall.clients.tui.actions.choose`).
    ``words(action) -> str | None``: a legal action or an action sent in words; None for the
    shared wording (:func:`cardhall.clients.tui.actions.legal_line`, ``action_words``).
    ``hint``: what the amount field takes, its placeholder.
    """

    text: Renderer
    event: Callable[[Data, dict[int, str]], str | None] | None = None
    keys: tuple[str, ...] | None = None
    preview: Callable[[str, list[Data], Data | None], str] | None = None
    parse: Callable[[str, list[Data], str], Data | None] | None = None
    words: Callable[[Data], str | None] | None = None
    hint: str = "amount"

    def __call__(self, state: Data, you: int | None, names: dict[int, str]) -> str:
        return self.text(state, you, names)


def parts(game: str) -> TuiGame | None:
    """The terminal parts of ``game`` from its registration: its :class:`TuiGame`, or one made of
    a plain callable (and whichever of the parts it has as attributes); None when the game is
    drawn as data (no renderer, not registered here, or its renderer does not import: logged)."""
    found = plugins.games().get(game)
    if found is None or found.tui_renderer is None:
        return None
    try:
        named = plugins.resolve(found.tui_renderer)
    except (ImportError, AttributeError) as exc:
        log.error("game %s: its terminal renderer %s does not import (%s); drawing it as data",
                  game, found.tui_renderer, exc)
        return None
    if isinstance(named, TuiGame):
        return named
    keys = getattr(named, "keys", None)
    return TuiGame(text=named, event=getattr(named, "event", None), keys=None if keys is None else tuple(keys),
                   preview=getattr(named, "preview", None), parse=getattr(named, "parse", None),
                   words=getattr(named, "words", None), hint=str(getattr(named, "hint", "amount")))


def renderer(game: str) -> Renderer:
    """The function that draws ``game``: its registration's, else the generic one
    (also when the registered one does not import: logged)."""
    found = parts(game)
    return generic_text if found is None else found.text


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
