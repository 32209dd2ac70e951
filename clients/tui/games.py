"""The built-in games' tables as text for the terminal client, one function per
game (named by each game's registration, ``GameSpec.tui_renderer``), from the
``snapshot.state`` a viewer holds (``protocol/SPEC.md`` "Games"): players by
name, one row per seat, never a Python value.

Each is ``text(state, you, names) -> str``: ``state`` the game's view (not
None), ``you`` the viewer's seat or None, ``names`` seat -> name.

>>> print(loco_text({"hand": 2, "street": "flop", "dealer": 1, "options": {"points_to_win": 3},
...                  "board": ["Ah", "Kd", "2c"], "points": {"1": 1, "2": 0}, "in_hand": [1, 2],
...                  "all_in": None, "hole_cards": ["9s", "9h"], "seats": [1, 2]}, 1, {1: "ann", 2: "bob"}))
hand 2  flop  dealer ann  first to 3 points
board  A♥ K♦ 2♣
  ann (you)  1 point  in the hand
  bob        0 points  in the hand
your cards  9♠ 9♥
>>> outcome([{"seat": 2, "cards": ["9h", "9s"], "rank": "9", "count": 2}], 2, "9"), outcome([], 1, "4")
('grow', 'start')
"""

from __future__ import annotations

from typing import Any

from cardhall.clients.tui.events import who, who_all
from cardhall.clients.tui.text import cards

Data = dict[str, Any]
#: Avalanche's ranks, lowest to highest (``X`` the joker, RULES AV-1)
RANKS = "23456789TJQKAX"
#: what a play does to the avalanche, as the browser says it
OUTCOME_TEXT = {"start": "starts an avalanche", "grow": "grows the avalanche",
                "stop": "stops it: all to the neutral pile", "fall": "lets it fall on the previous player"}


def _seat_list(state: Data) -> list[int]:
    return [int(s) for s in state.get("seats") or sorted(int(k) for k in (state.get("stacks") or {}))]


def _row(names: dict[int, str], seat: int, you: int | None, parts: list[str]) -> str:
    name = who(names, seat) + (" (you)" if seat == you else "")
    return f"  {name:<10} " + "  ".join(p for p in parts if p)


def _shown(state: Data, names: dict[int, str]) -> list[str]:
    return [f"{who(names, s)} shows {cards(cs)}" for s, cs in (state.get("shown") or {}).items()]


def _betting_rows(state: Data, you: int | None, names: dict[int, str], unit: str) -> list[str]:
    stacks, bets = state.get("stacks") or {}, state.get("bets") or {}
    folded, all_in = state.get("folded") or [], state.get("all_in") or []
    rows = []
    for seat in _seat_list(state):
        k = str(seat)
        rows.append(_row(names, seat, you, [
            f"stack {stacks.get(k, 0)}{unit}", f"bet {bets[k]}{unit}" if bets.get(k) else "",
            "folded" if seat in folded else "", "all-in" if seat in all_in else ""]))
    return rows


def holdem_text(state: Data, you: int | None, names: dict[int, str]) -> str:
    """Both Hold'em games: hand, street, button, blinds, board, pot (side pots), a row per seat, your cards."""
    stakes = state.get("stakes") or {}
    lines = [(f"hand {state.get('hand')}  {state.get('street') or 'between hands'}  "
              f"button {who(names, state.get('button'))}  "
              f"blinds {stakes.get('small_blind')}/{stakes.get('big_blind')}"),
             f"board  {cards(state.get('board'))}     pot {state.get('pot', 0)}"]
    pots = state.get("pots") or []
    if len(pots) > 1:
        lines.append("pots   " + "   ".join(f"{'main' if i == 0 else 'side ' + str(i)} {p['amount']} "
                                             f"({who_all(names, p.get('eligible'))})" for i, p in enumerate(pots)))
    lines += _betting_rows(state, you, names, "")
    if state.get("hole"):
        lines.append(f"your cards  {cards(state['hole'])}")
    return "\n".join(lines + _shown(state, names))


def alamo_text(state: Data, you: int | None, names: dict[int, str]) -> str:
    """Alamo: stacks, bets and the pot are cards."""
    lines = [(f"hand {state.get('hand')}  {state.get('street') or 'between hands'}  "
              f"dealer {who(names, state.get('dealer'))}  ante {state.get('ante')} cards"),
             (f"board  {cards(state.get('board'))}     pot {state.get('pot')} cards "
              f"({state.get('face_down')} face down)")]
    lines += _betting_rows({**state, "all_in": []}, you, names, " cards")
    if state.get("my_cards"):
        lines.append(f"your cards  {cards(state['my_cards'])}")
    return "\n".join(lines + _shown(state, names))


def loco_text(state: Data, you: int | None, names: dict[int, str]) -> str:
    """Loco Poker: points, who is in the hand, the all-in, who is knocked out."""
    points, in_hand = state.get("points") or {}, state.get("in_hand") or []
    out = {s for k in state.get("knocked_out") or [] for s in k.get("seats", [])}
    lines = [(f"hand {state.get('hand')}  {state.get('street') or 'between hands'}  "
              f"dealer {who(names, state.get('dealer'))}  "
              f"first to {state['options']['points_to_win']} points"),
             f"board  {cards(state.get('board'))}"]
    for seat in [int(s) for s in state.get("seats") or sorted(int(k) for k in points)]:
        status = ("knocked out" if seat in out else "ALL-IN" if seat == state.get("all_in")
                  else "in the hand" if seat in in_hand else "")
        lines.append(_row(names, seat, you, [_points(points.get(str(seat), 0)), status]))
    if state.get("hole_cards"):
        lines.append(f"your cards  {cards(state['hole_cards'])}")
    return "\n".join(lines + _shown(state, names))


def _points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def outcome(avalanche: list[Data], count: int, rank: str) -> str:
    """What playing ``count`` cards of ``rank`` does to ``avalanche`` (the view's plays, oldest
    first): ``start``, ``grow``, ``stop`` or ``fall`` (RULES AV-2; as ``clients/web/js/games/avalanche.js``)."""
    if not avalanche:
        return "start"
    prev = avalanche[-1]
    n = prev.get("count") or len(prev["cards"])
    r = prev.get("rank") or prev["cards"][0][0]
    if count > n or (count == n and RANKS.index(rank) >= RANKS.index(r)):
        return "grow"
    if count == n and n >= 2:
        return "stop"
    return "fall"


def avalanche_text(state: Data, you: int | None, names: dict[int, str]) -> str:
    """Avalanche: deck, neutral pile, a row per seat (hand size, stored cards), the avalanche, your hand."""
    plays = state.get("avalanche") or []
    sizes, stored, out = state.get("hand_sizes") or {}, state.get("stored") or {}, state.get("out") or []
    lines = [f"deck {state.get('deck')} cards   neutral pile {state.get('neutral')}   "
             f"dealer {who(names, state.get('dealer'))}"]
    for seat in _seat_list({**state, "stacks": sizes}):
        k = str(seat)
        lines.append(_row(names, seat, you, [f"hand {sizes.get(k, 0)}", f"stored {stored.get(k, 0)}",
                                             "out" if seat in out else ""]))
    lines.append("avalanche  " + (" | ".join(f"{who(names, p['seat'])}: {cards(p['cards'])}" for p in plays)
                                  or "none: snowfall or start one"))
    if state.get("hand") is not None:
        lines.append(f"your hand  {cards(state['hand'])}")
    return "\n".join(lines)
