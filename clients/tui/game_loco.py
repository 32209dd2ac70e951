"""Loco Poker in the terminal client (its registration's ``tui_renderer``, :data:`TUI`): points,
who is in the hand, the all-in, who is knocked out; the log's lines for its events; the keys.

>>> print(loco_text({"hand": 2, "street": "flop", "dealer": 1, "options": {"points_to_win": 3},
...                  "board": ["Ah", "Kd", "2c"], "points": {"1": 1, "2": 0}, "in_hand": [1, 2],
...                  "all_in": None, "hole_cards": ["9s", "9h"], "seats": [1, 2]}, 1, {1: "ann", 2: "bob"}))
hand 2  flop  dealer ann  first to 3 points
board  A♥ K♦ 2♣
  ann (you)  1 point  in the hand
  bob        0 points  in the hand
your cards  9♠ 9♥
>>> TUI.event({"type": "hand_end", "hand": 3, "result": "all_in_won", "points": {"1": 1, "2": 0}}, {1: "ann", 2: "bot 2"})
'— hand 3 over: the all-in won (points ann 1, bot 2 0)'
"""

from __future__ import annotations

from cardhall.clients.tui.events import Names, per_seat, who, who_all
from cardhall.clients.tui.game_common import BETTING_KEYS, COMMON, Data, action_line, row, shown, street_line, texts
from cardhall.clients.tui.render import TuiGame
from cardhall.clients.tui.text import cards

#: a hand's ``hand_end.result`` in words
OUTCOMES = {"checked_down": "checked down: no points", "folded_around": "folded around: no points",
            "uncalled_all_in": "uncalled all-in: a point", "all_in_won": "the all-in won",
            "all_in_lost": "the all-in lost", "push": "push"}


def _points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def loco_text(state: Data, you: int | None, names: dict[int, str]) -> str:
    """The table: hand, street, dealer, the points to win, board, a row per seat (points, in the
    hand, all-in, knocked out), your cards."""
    points, in_hand = state.get("points") or {}, state.get("in_hand") or []
    out = {s for k in state.get("knocked_out") or [] for s in k.get("seats", [])}
    lines = [(f"hand {state.get('hand')}  {state.get('street') or 'between hands'}  "
              f"dealer {who(names, state.get('dealer'))}  "
              f"first to {state['options']['points_to_win']} points"),
             f"board  {cards(state.get('board'))}"]
    for seat in [int(s) for s in state.get("seats") or sorted(int(k) for k in points)]:
        status = ("knocked out" if seat in out else "ALL-IN" if seat == state.get("all_in")
                  else "in the hand" if seat in in_hand else "")
        lines.append(row(names, seat, you, [_points(points.get(str(seat), 0)), status]))
    if state.get("hole_cards"):
        lines.append(f"your cards  {cards(state['hole_cards'])}")
    return "\n".join(lines + shown(state, names))


def _hand_end(e: Data, names: Names) -> str:
    head = f"— hand {e.get('hand')} over"
    if "result" not in e:
        return head
    said = OUTCOMES.get(e["result"], str(e["result"]).replace("_", " "))
    return f"{head}: {said}" + (f" (points {per_seat(names, e['points'])})" if e.get("points") else "")


EVENTS = texts({
    **COMMON,
    "action": lambda e, names: action_line(e, names, None),
    "hand_end": _hand_end,
    "street": street_line,
    "showdown": lambda e, names: "showdown: " + ", ".join(f"{who(names, h['seat'])} {cards(h['cards'])} ({h['hand']})"
                                                        for h in e.get("hands", [])),
    "loco": lambda e, names: f"¡Loco! {who_all(names, e.get('seats'))} led after the turn and lost",
    "point": lambda e, names: f"{who(names, e.get('seat'))} scores a point ({e.get('points')})",
    "knocked_out": lambda e, names: f"{who_all(names, e.get('seats'))} knocked out",
})

#: what Loco Poker's registration names (the betting keys: fold, check/call, all-in)
TUI = TuiGame(text=loco_text, event=EVENTS, keys=BETTING_KEYS)
