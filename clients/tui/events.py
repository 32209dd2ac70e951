"""One readable line per event for the terminal client's log: players by name,
cards as cards, never a Python value (no ``None``, lists or maps).

``names`` maps a seat to its player's name (``snapshot.info.occupants``, kept
up to date from ``seated`` events); a seat without a name is ``seat N``. The
table's own events (protocol/SPEC.md "Events") have their lines here; a game's
own events have the lines of its terminal parts (``event``,
:class:`cardhall.clients.tui.render.TuiGame`), and a game without them the
generic ``type: key value`` line.

>>> names = {1: "ann", 2: "bot 2"}
>>> event_line({"type": "seated", "seat": 2, "name": "bot 2", "bot": "random"}, names)
'bot 2 sits at seat 2 (bot)'
>>> event_line({"type": "match_ended", "match": 1, "result": {"winners": [2], "ranking": [[2], [1]]}}, names)
'MATCH OVER: bot 2 wins'
>>> event_line({"type": "match_ended", "match": 1, "result": {"winners": [2]}, "names": {"2": "cy"}}, names)
'MATCH OVER: cy wins'
>>> event_line({"type": "action", "seat": 2, "action": "bet", "amount": 3}, names)
'action: seat bot 2, action bet, amount 3'
>>> event_line({"type": "turn", "seat": 1}, names, game=lambda e, names: None) is None
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from cardhall.clients.tui.generic import event_text

Data = dict[str, Any]
Names = Mapping[int, str]
#: the table's own events (protocol/SPEC.md "Events"): every game's stream has them
TABLE_EVENTS = frozenset({"seated", "left", "presence", "match_started", "match_ended", "rematch", "timeout",
                          "sat_out", "sat_in", "paused", "resumed", "awaiting", "closed", "broken"})


def who(names: Names, seat: Any) -> str:
    """The name at ``seat`` (an int or a seat-map key), else ``seat N``; ``nobody`` for None."""
    if seat is None:
        return "nobody"
    try:
        return names.get(int(seat)) or f"seat {seat}"
    except (TypeError, ValueError):
        return str(seat)


def who_all(names: Names, seats: Iterable[Any] | None) -> str:
    """Seats as names joined by commas, ``nobody`` for none."""
    return ", ".join(who(names, s) for s in seats or []) or "nobody"


def per_seat(names: Names, m: Mapping[str, Any] | None, signed: bool = False) -> str:
    """A seat map as ``ann 60, bob 40`` (by seat; ``+N`` when ``signed``), ``-`` when empty."""
    items = sorted((m or {}).items(), key=lambda kv: int(kv[0]))
    return ", ".join(f"{who(names, s)} {v:+d}" if signed and isinstance(v, int) else f"{who(names, s)} {v}"
                     for s, v in items) or "-"


def wins(names: Names, winners: Iterable[Any] | None) -> str:
    """``ann wins``, ``ann, bob win``: the winners by name."""
    seats = list(winners or [])
    return f"{who_all(names, seats)} {'win' if len(seats) > 1 else 'wins'}"


def _option(key: str, value: Any, n: Callable[[Any], str]) -> str:
    """An option's value in words: on/off for a switch, a name for a seat."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return n(value) if key in ("button", "dealer") else str(value)


def _table_event(e: Data, n: Callable[[Any], str]) -> str | None:
    t = e["type"]
    if t == "seated":
        return f"{e.get('name')} sits at seat {e.get('seat')}" + (" (bot)" if e.get("bot") else "")
    if t == "left":
        return f"seat {e.get('seat')} is free"
    if t == "presence":
        return f"{n(e.get('seat'))} {'connected' if e.get('connected') else 'disconnected'}"
    if t in ("match_started", "rematch"):
        played = ", ".join(f"{k.replace('_', ' ')} {_option(k, v, n)}" for k, v in (e.get("options") or {}).items()
                           if v is not None and not isinstance(v, (list, dict)))
        return (f"match {e.get('match')} (commitment {str(e.get('commitment', ''))[:12]}…)"
                + (f": {played}" if played else ""))
    if t == "timeout":
        action = e.get("action")
        kind = action.get("type") if isinstance(action, Mapping) else action
        return f"{n(e.get('seat'))} ran out of time: {kind}"
    if t == "sat_out":
        return f"{n(e.get('seat'))} sits out ({e.get('reason')})"
    if t == "sat_in":
        return f"{n(e.get('seat'))} is back in"
    return {"paused": "the owner paused the table", "resumed": "the table resumes",
            "closed": f"the table is closed ({e.get('reason')})",
            "broken": "the table failed and is out of service"}.get(t)


def event_line(e: Data, names: Names | None = None,
               game: Callable[[Data, Names], str | None] | None = None) -> str | None:
    """One line for the log, or None for an event not worth one (turns, pots).

    ``game``: the game's own texts (event, names -> line, or None for the shared texts): the
    table's own events keep theirs and the game's other events get no line. None: the game has
    no texts of its own (drawn as data), so its events get the generic ``type: key value, ...``
    line with names for seats."""
    names = names or {}
    if game is not None:
        line = game(e, names)
        if line is not None:
            return line
    t = e.get("type")

    def n(seat: Any) -> str:
        return who(names, seat)

    if t == "match_ended":
        # the names the match was played under (1.6 ``names``): whoever sits in a seat now may not be who played
        played = e.get("names") if isinstance(e.get("names"), Mapping) else {}
        by_seat = {**names, **{int(k): str(v) for k, v in played.items() if str(k).isdigit()}}
        result = e.get("result") if isinstance(e.get("result"), Mapping) else e
        return f"MATCH OVER: {wins(by_seat, result.get('winners'))}"
    if t in TABLE_EVENTS:
        return _table_event(e, n)
    if game is None:
        return event_text({k: (n(v) if k == "seat" else v) for k, v in e.items()})
    return None
