"""Alamo in the terminal client (its registration's ``tui_renderer``, :data:`TUI`): stacks, bets
and the pot are cards; the log's lines for its events; the betting keys.

>>> names = {1: "ann", 2: "bob"}
>>> TUI.event({"type": "action", "seat": 1, "action": "call", "cards": 2}, names)
'ann calls 2 cards'
>>> TUI.event({"type": "hand_end", "hand": 2, "winnings": {"2": 6}, "stacks": {}, "reason": "fold"}, names)
'— hand 2 over: bob takes 6 cards'
"""

from __future__ import annotations

from cardhall.clients.tui.events import Names, who, who_all
from cardhall.clients.tui.game_common import BETTING_KEYS, COMMON, Data, action_line, betting_rows, shown, street_line, texts
from cardhall.clients.tui.render import TuiGame
from cardhall.clients.tui.text import cards


def alamo_text(state: Data, you: int | None, names: dict[int, str]) -> str:
    """The table: hand, street, dealer, ante, board, the pot in cards (face down), a row per seat, your cards."""
    lines = [(f"hand {state.get('hand')}  {state.get('street') or 'between hands'}  "
              f"dealer {who(names, state.get('dealer'))}  ante {state.get('ante')} cards"),
             (f"board  {cards(state.get('board'))}     pot {state.get('pot')} cards "
              f"({state.get('face_down')} face down)")]
    lines += betting_rows({**state, "all_in": []}, you, names, " cards")
    if state.get("my_cards"):
        lines.append(f"your cards  {cards(state['my_cards'])}")
    return "\n".join(lines + shown(state, names))


def _verb(e: Data) -> str | None:
    """An action's words: amounts are cards (``cards`` moved now, ``amount`` the raise-to total)."""
    return {"call": f"calls {e['cards']} cards", "bet": f"bets {e.get('amount')}",
            "raise": f"raises to {e.get('amount')}", "all_in": f"goes all-in ({e['cards']} cards)"}.get(str(e.get("action")))


def _hand_end(e: Data, names: Names) -> str:
    head = f"— hand {e.get('hand')} over"
    if "winnings" not in e:
        return head
    return f"{head}: " + ", ".join(f"{who(names, s)} takes {c} cards" for s, c in e["winnings"].items())


def _award(e: Data, names: Names) -> str:
    return "; ".join(f"{'side pot ' + str(i) if i else 'pot'} ({p.get('cards')} cards) to {who_all(names, p.get('winners'))}"
                     for i, p in enumerate(e.get("pots", [])))


EVENTS = texts({
    **COMMON,
    "action": lambda e, names: action_line(e, names, _verb(e)),
    "hand_end": _hand_end,
    "award": _award,
    "board": street_line,
    "uncalled": lambda e, names: f"{e['cards']} cards uncalled back to {who(names, e.get('seat'))}",
    "eliminated": lambda e, names: f"{who(names, e.get('seat'))} is eliminated ({e.get('cards')} cards into the pot)",
})

#: what Alamo's registration names
TUI = TuiGame(text=alamo_text, event=EVENTS, keys=BETTING_KEYS)
