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
>>> event_line({"type": "action", "seat": 2, "action": "raise", "amount": 40, "total": 60})
'seat 2 raise 40 (total 60)'
>>> has_renderer("loco_poker"), has_renderer("no_such_game")
(True, False)
>>> event_line({"type": "deal", "hand": 1, "card": "Qh"}, generic=True)
'deal: hand 1, card Q♥'
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from cardhall.clients.tui.generic import event_text, generic_text
from cardhall.clients.tui.text import card, cards, seat_map
from cardhall.engine import plugins

__all__ = ["card", "cards", "event_line", "has_renderer", "renderer", "table_text"]

Data = dict[str, Any]
Renderer = Callable[[Data, "int | None", dict[int, str]], str]
log = logging.getLogger("cardhall.tui")
#: the table's own events (protocol/SPEC.md "Events"): every game's stream has them
TABLE_EVENTS = frozenset({"seated", "left", "presence", "match_started", "match_ended", "rematch", "timeout",
                          "sat_out", "sat_in", "paused", "resumed", "awaiting", "closed", "broken"})


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
        lines.append(f"RESULT: winners {state['result'].get('winners')}  ranking {state['result'].get('ranking')}")
    return "\n".join(lines)


def event_line(e: Data, generic: bool = False) -> str | None:
    """One short line for the log, or None for events not worth a line.
    ``generic``: the table's game has no renderer of its own, so the game's
    events get the generic ``type: key value, ...`` line (the table's own
    events keep theirs)."""
    t = e.get("type")
    if generic and t not in TABLE_EVENTS:
        return event_text(e)
    seat = e.get("seat")
    if t == "action":
        line = f"seat {seat} {e.get('action')}"
        if e.get("amount"):
            line += f" {e['amount']}"
        if e.get("total") is not None and e.get("action") in ("bet", "raise"):
            line += f" (total {e['total']})"
        return line + (" all-in" if e.get("all_in") else "")
    if t in ("board", "street"):
        return f"{e.get('street')}: {cards(e.get('cards'))}"
    if t == "show":
        return f"seat {seat} shows {cards(e.get('cards'))} {e.get('hand') or ''}".rstrip()
    if t == "showdown":
        return "showdown: " + "; ".join(f"{h['seat']} {cards(h['cards'])} {h['hand']}" for h in e["hands"])
    if t == "award":
        if "winners" in e and isinstance(e["winners"], dict):
            return f"pot {e.get('amount')} to {seat_map(e['winners'])}"
        return "pots: " + "; ".join(f"{p['cards']} cards to {p['winners']}" for p in e.get("pots", []))
    if t == "hand_end":
        return f"— hand {e.get('hand')} over" + (f" ({e['result']})" if "result" in e else "")
    if t == "hand_start":
        return f"— hand {e.get('hand')}"
    if t == "play":
        return f"seat {seat} plays {cards(e.get('cards'))} ({e.get('outcome')})"
    if t == "snowfall":
        return f"seat {seat} snowfall" + (f" {card(e['card'])}" if "card" in e else "")
    if t in ("stopped", "fallen"):
        return f"avalanche {t} ({e.get('count')} cards)"
    if t in ("point", "knocked_out", "loco", "bust", "timeout", "sat_out", "sat_in", "paused", "resumed"):
        return f"{t} " + ", ".join(f"{k} {v}" for k, v in e.items() if k != "type")
    if t in ("match_ended", "game_end", "match_end"):
        result = e.get("result", e)
        return f"MATCH OVER: winners {result.get('winners')}"
    if t == "match_started":
        played = ", ".join(f"{k} {v}" for k, v in (e.get("options") or {}).items() if v is not None)
        return f"match {e.get('match')} (commitment {e.get('commitment', '')[:12]}…)" + (f": {played}" if played else "")
    if t == "rematch":
        return f"match {e.get('match')} (commitment {e.get('commitment', '')[:12]}…)"
    return None
