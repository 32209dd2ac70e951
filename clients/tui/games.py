"""The built-in games' tables as text for the terminal client, one function per
game (named by each game's registration, ``GameSpec.tui_renderer``), from the
``snapshot.state`` a viewer holds (``protocol/SPEC.md`` "Games").

Each is ``text(state, you, names) -> str``: ``state`` the game's view (not
None), ``you`` the viewer's seat or None, ``names`` seat -> name.

>>> print(loco_text({"hand": 2, "street": "flop", "dealer": 1, "options": {"points_to_win": 3},
...                  "board": ["Ah", "Kd", "2c"], "points": {"1": 1, "2": 0}, "in_hand": [1, 2],
...                  "all_in": None, "hole_cards": ["9s", "9h"]}, 1, {}))
hand 2  street flop  dealer 1  to win 3 points
board  A♥ K♦ 2♣
points 1:1  2:0   in hand [1, 2]   all-in None
your cards  9♠ 9♥
"""

from __future__ import annotations

from typing import Any

from cardhall.clients.tui.text import cards, seat_map

Data = dict[str, Any]


def _shown(state: Data, names: dict[int, str]) -> list[str]:
    return [f"seat {s} {names.get(int(s), '')}".rstrip() + f" shows {cards(cs)}"
            for s, cs in (state.get("shown") or {}).items()]


def holdem_text(state: Data, you: int | None, names: dict[int, str]) -> str:
    """Both Hold'em games: hand, street, button, blinds, board, pot, stacks, bets, your cards."""
    lines = [(f"hand {state.get('hand')}  street {state.get('street')}  button {state.get('button')}  "
              f"blinds {state['stakes']['small_blind']}/{state['stakes']['big_blind']}"),
             f"board  {cards(state.get('board'))}     pot {state.get('pot', 0)}",
             f"stacks {seat_map(state.get('stacks'))}",
             f"bets   {seat_map(state.get('bets'))}   folded {state.get('folded', [])}"]
    if state.get("hole"):
        lines.append(f"your cards  {cards(state['hole'])}")
    return "\n".join(lines + _shown(state, names))


def alamo_text(state: Data, you: int | None, names: dict[int, str]) -> str:
    """Alamo: stacks and pot are cards."""
    lines = [(f"hand {state.get('hand')}  street {state.get('street')}  dealer {state.get('dealer')}  "
              f"ante {state.get('ante')}"),
             (f"board  {cards(state.get('board'))}     pot {state.get('pot')} cards "
              f"({state.get('face_down')} face down)"),
             f"stacks (cards) {seat_map(state.get('stacks'))}",
             f"bets   {seat_map(state.get('bets'))}   folded {state.get('folded', [])}"]
    if state.get("my_cards"):
        lines.append(f"your cards  {cards(state['my_cards'])}")
    return "\n".join(lines + _shown(state, names))


def loco_text(state: Data, you: int | None, names: dict[int, str]) -> str:
    """Loco Poker: points, who is in the hand, the all-in."""
    lines = [(f"hand {state.get('hand')}  street {state.get('street')}  dealer {state.get('dealer')}  "
              f"to win {state['options']['points_to_win']} points"),
             f"board  {cards(state.get('board'))}",
             (f"points {seat_map(state.get('points'))}   in hand {state.get('in_hand')}   "
              f"all-in {state.get('all_in')}")]
    if state.get("hole_cards"):
        lines.append(f"your cards  {cards(state['hole_cards'])}")
    return "\n".join(lines + _shown(state, names))


def avalanche_text(state: Data, you: int | None, names: dict[int, str]) -> str:
    """Avalanche: deck, neutral pile, hand sizes, stored cards, the avalanche, your hand."""
    plays = state.get("avalanche") or []
    lines = [f"deck {state.get('deck')} cards   neutral {state.get('neutral')}   dealer {state.get('dealer')}",
             f"hand sizes {seat_map(state.get('hand_sizes'))}   stored {seat_map(state.get('stored'))}",
             "avalanche  " + (" | ".join(f"{p['seat']}: {cards(p['cards'])}" for p in plays) or "-")]
    if state.get("hand") is not None:
        lines.append(f"your hand  {cards(state['hand'])}")
    return "\n".join(lines)
