"""Both Hold'em games in the terminal client (their registrations' ``tui_renderer``,
:data:`TUI`): the table from the view, the log's lines for their events, the betting keys.

>>> names = {1: "ann", 2: "bot 2"}
>>> TUI.event({"type": "action", "seat": 2, "action": "raise", "amount": 40, "total": 60}, names)
'bot 2 raises to 60'
>>> TUI.event({"type": "hand_end", "hand": 1, "stacks": {}, "net": {"1": 44, "2": -44}}, names)
'— hand 1 over: ann +44, bot 2 -44'
>>> TUI.event({"type": "award", "pot": 0, "amount": 40, "winners": {"1": 40}, "hand": "a pair"}, names)
'ann wins 40 with a pair'
"""

from __future__ import annotations

from cardhall.clients.tui.events import Data, Names, per_seat, who, who_all
from cardhall.clients.tui.game_common import BETTING_KEYS, COMMON, action_line, betting_rows, chip_verb, shown, street_line, texts
from cardhall.clients.tui.render import TuiGame
from cardhall.clients.tui.text import cards


def holdem_text(state: Data, you: int | None, names: dict[int, str]) -> str:
    """The table: hand, street, button, blinds, board, pot (side pots), a row per seat, your cards."""
    stakes = state.get("stakes") or {}
    lines = [(f"hand {state.get('hand')}  {state.get('street') or 'between hands'}  "
              f"button {who(names, state.get('button'))}  "
              f"blinds {stakes.get('small_blind')}/{stakes.get('big_blind')}"),
             f"board  {cards(state.get('board'))}     pot {state.get('pot', 0)}"]
    pots = state.get("pots") or []
    if len(pots) > 1:
        lines.append("pots   " + "   ".join(f"{'main' if i == 0 else 'side ' + str(i)} {p['amount']} "
                                             f"({who_all(names, p.get('eligible'))})" for i, p in enumerate(pots)))
    lines += betting_rows(state, you, names, "")
    if state.get("hole"):
        lines.append(f"your cards  {cards(state['hole'])}")
    return "\n".join(lines + shown(state, names))


def _hand_end(e: Data, names: Names) -> str:
    head = f"— hand {e.get('hand')} over"
    return f"{head}: {per_seat(names, e['net'], signed=True)}" if "net" in e else head


def _award(e: Data, names: Names) -> str:
    won = ", ".join(f"{who(names, s)} wins {c}" for s, c in (e.get("winners") or {}).items())
    return won + (f" with {e['hand']}" if e.get("hand") else "")


EVENTS = texts({
    **COMMON,
    "action": lambda e, names: action_line(e, names, chip_verb(e)),
    "hand_end": _hand_end,
    "award": _award,
    "board": street_line,
    "blinds": lambda e, names: "; ".join(f"{who(names, p['seat'])} posts {str(p['kind']).replace('_', ' ')} {p['amount']}"
                                         for p in e.get("posts", [])),
    "uncalled": lambda e, names: f"{e.get('amount')} uncalled back to {who(names, e.get('seat'))}",
    "muck": lambda e, names: f"{who(names, e.get('seat'))} mucks",
    "bust": lambda e, names: f"{who_all(names, e.get('seats'))} busted",
    "blind_level": lambda e, names: f"blinds go up: {e['stakes']['small_blind']}/{e['stakes']['big_blind']}",
})

#: what the registrations of both Hold'em games name
TUI = TuiGame(text=holdem_text, event=EVENTS, keys=BETTING_KEYS)
