"""What the built-in games' terminal parts (the ``game_*`` modules beside this one) share: a
row per seat, the cards shown, and the log's lines for the events several of them have (a hand
starts, cards are dealt or shown, an action, the match starts and ends). No game is named
here: each game's module picks what it uses.

>>> names = {1: "ann", 2: "bob"}
>>> print("\\n".join(betting_rows({"seats": [1, 2], "stacks": {"1": 90, "2": 110}, "bets": {"2": 10},
...                                "folded": [1]}, 1, names, "")))
  ann (you)  stack 90  folded
  bob        stack 110  bet 10
>>> events = texts(COMMON)
>>> events({"type": "hand_start", "hand": 4, "dealer": 2}, names), events({"type": "turn"}, names) is None
('— hand 4: bob deals', True)
>>> events({"type": "match_end", "result": {"winners": [1, 2]}}, names)
'the match is over: ann, bob win'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cardhall.clients.tui.events import Names, who, wins
from cardhall.clients.tui.text import cards

Data = dict[str, Any]
#: one event's line: event, names -> text
Text = Callable[[Data, Names], str]
#: the action keys of a betting game (:attr:`cardhall.clients.tui.render.TuiGame.keys`)
BETTING_KEYS = ("fold", "check_call", "bet_raise", "all_in")
#: an action without an amount in words
VERBS = {"fold": "folds", "check": "checks", "call": "calls", "all_in": "goes all-in"}


def seat_list(state: Data) -> list[int]:
    """The view's seats: its ``seats``, else the keys of its ``stacks``, in order."""
    return [int(s) for s in state.get("seats") or sorted(int(k) for k in (state.get("stacks") or {}))]


def row(names: Mapping[int, str], seat: int, you: int | None, parts: list[str]) -> str:
    """One seat's row: its name (``(you)`` for the viewer's) and the non-empty ``parts``."""
    name = who(names, seat) + (" (you)" if seat == you else "")
    return f"  {name:<10} " + "  ".join(p for p in parts if p)


def shown(state: Data, names: Mapping[int, str]) -> list[str]:
    """``ann shows A♥ K♦``: a line per hand the view's ``shown`` holds."""
    return [f"{who(names, s)} shows {cards(cs)}" for s, cs in (state.get("shown") or {}).items()]


def betting_rows(state: Data, you: int | None, names: Mapping[int, str], unit: str) -> list[str]:
    """A row per seat of a betting game's view: stack and bet (``unit`` after each amount),
    folded, all-in."""
    stacks, bets = state.get("stacks") or {}, state.get("bets") or {}
    folded, all_in = state.get("folded") or [], state.get("all_in") or []
    rows = []
    for seat in seat_list(state):
        k = str(seat)
        rows.append(row(names, seat, you, [
            f"stack {stacks.get(k, 0)}{unit}", f"bet {bets[k]}{unit}" if bets.get(k) else "",
            "folded" if seat in folded else "", "all-in" if seat in all_in else ""]))
    return rows


def action_line(e: Data, names: Names, verb: str | None) -> str:
    """``ann raises to 60``: the seat by name and ``verb`` (None: the action's word), `` (all-in)``
    when the action put the seat all in."""
    kind = e.get("action")
    text = f"{who(names, e.get('seat'))} {verb or VERBS.get(kind, str(kind))}"
    return text + (" (all-in)" if e.get("all_in") and kind != "all_in" else "")


def chip_verb(e: Data) -> str | None:
    """An action's words when its amounts are chips (``amount`` added, ``total`` the bet after);
    None without an amount."""
    if not e.get("amount"):
        return None
    return {"call": f"calls {e.get('amount')}", "bet": f"bets {e.get('total', e.get('amount'))}",
            "raise": f"raises to {e.get('total', e.get('amount'))}"}.get(str(e.get("action")))


def street_line(e: Data, names: Names) -> str:
    """``Flop: A♥ K♦ 2♣``: a street's cards."""
    street = str(e.get("street") or "board")
    return f"{street.capitalize()}: {cards(e.get('cards'))}"


def hand_start_line(e: Data, names: Names) -> str:
    """``— hand 3: ann has the button`` (or ``deals``)."""
    return f"— hand {e.get('hand')}" + (
        f": {who(names, e['button'])} has the button" if "button" in e
        else f": {who(names, e['dealer'])} deals" if "dealer" in e else "")


def match_end_line(e: Data, names: Names) -> str:
    """``the match is over: ann wins`` from the winners (in ``result`` or the event itself)."""
    result = e.get("result") if isinstance(e.get("result"), Mapping) else e
    return f"the match is over: {wins(names, result.get('winners'))}"


#: the lines of the events the built-in betting games share (a game's own map adds to them)
COMMON: dict[str, Text] = {
    "hand_start": hand_start_line,
    "hole_cards": lambda e, names: f"you are dealt {cards(e['cards'])}" if e.get("cards") else "hole cards are dealt",
    "show": lambda e, names: f"{who(names, e.get('seat'))} shows {cards(e.get('cards'))}"
    + (f" ({e['hand']})" if e.get("hand") else ""),
    "match_start": lambda e, names: "the match starts",
    "match_end": match_end_line,
}


def texts(lines: Mapping[str, Text]) -> Callable[[Data, Names], str | None]:
    """A game's ``event`` part (:class:`cardhall.clients.tui.render.TuiGame`) from its map of
    event type -> line: None for a type it has no line for (the shared texts)."""
    def event(e: Data, names: Names) -> str | None:
        line = lines.get(str(e.get("type")))
        return line(e, names) if line else None
    return event
