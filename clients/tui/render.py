"""Text rendering of a table for the terminal client: one function per game
from the ``snapshot.state`` a viewer holds (``protocol/SPEC.md`` "Games"), and
one line per event for the log. Pure functions (no textual), so they are
easy to test and reuse.

>>> card("Ah"), card("Td"), card("Xr")
('A♥', 'T♦', '🃏r')
>>> event_line({"type": "action", "seat": 2, "action": "raise", "amount": 40, "total": 60})
'seat 2 raise 40 (total 60)'
"""

from __future__ import annotations

from typing import Any

SUITS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
Data = dict[str, Any]


def card(c: str) -> str:
    """``"Ah"`` -> ``"A♥"``; jokers ``"Xr"``/``"Xb"`` -> ``"🃏r"``/``"🃏b"``."""
    if c[0] == "X":
        return "🃏" + c[1]
    return c[0] + SUITS.get(c[1], c[1])


def cards(cs: list[str] | None) -> str:
    return " ".join(card(c) for c in cs) if cs else "-"


def _seats(m: dict[str, Any] | None) -> str:
    return "  ".join(f"{s}:{v}" for s, v in sorted((m or {}).items(), key=lambda kv: int(kv[0])))


def table_text(game: str, state: Data | None, you: int | None, names: dict[int, str]) -> str:
    """The table as lines of text for ``you`` (a seat or None)."""
    if state is None:
        return "waiting for players (the match starts when every seat is taken, or the owner starts it)"
    who = lambda s: f"{s} {names.get(s, '')}".strip()  # noqa: E731
    lines: list[str] = []
    if game in ("fixed_limit_holdem", "no_limit_holdem"):
        lines.append(f"hand {state.get('hand')}  street {state.get('street')}  button {state.get('button')}  "
                     f"blinds {state['stakes']['small_blind']}/{state['stakes']['big_blind']}")
        lines.append(f"board  {cards(state.get('board'))}     pot {state.get('pot', 0)}")
        lines.append(f"stacks {_seats(state.get('stacks'))}")
        lines.append(f"bets   {_seats(state.get('bets'))}   folded {state.get('folded', [])}")
        if state.get("hole"):
            lines.append(f"your cards  {cards(state['hole'])}")
        for s, cs in (state.get("shown") or {}).items():
            lines.append(f"seat {who(int(s))} shows {cards(cs)}")
    elif game == "alamo":
        lines.append(f"hand {state.get('hand')}  street {state.get('street')}  dealer {state.get('dealer')}  "
                     f"ante {state.get('ante')}")
        lines.append(f"board  {cards(state.get('board'))}     pot {state.get('pot')} cards "
                     f"({state.get('face_down')} face down)")
        lines.append(f"stacks (cards) {_seats(state.get('stacks'))}")
        lines.append(f"bets   {_seats(state.get('bets'))}   folded {state.get('folded', [])}")
        if state.get("my_cards"):
            lines.append(f"your cards  {cards(state['my_cards'])}")
        for s, cs in (state.get("shown") or {}).items():
            lines.append(f"seat {who(int(s))} shows {cards(cs)}")
    elif game == "loco_poker":
        lines.append(f"hand {state.get('hand')}  street {state.get('street')}  dealer {state.get('dealer')}  "
                     f"to win {state['options']['points_to_win']} points")
        lines.append(f"board  {cards(state.get('board'))}")
        lines.append(f"points {_seats(state.get('points'))}   in hand {state.get('in_hand')}   "
                     f"all-in {state.get('all_in')}")
        if state.get("hole_cards"):
            lines.append(f"your cards  {cards(state['hole_cards'])}")
        for s, cs in (state.get("shown") or {}).items():
            lines.append(f"seat {who(int(s))} shows {cards(cs)}")
    elif game == "avalanche":
        lines.append(f"deck {state.get('deck')} cards   neutral {state.get('neutral')}   dealer {state.get('dealer')}")
        lines.append(f"hand sizes {_seats(state.get('hand_sizes'))}   stored {_seats(state.get('stored'))}")
        plays = state.get("avalanche") or []
        lines.append("avalanche  " + (" | ".join(f"{p['seat']}: {cards(p['cards'])}" for p in plays) or "-"))
        if state.get("hand") is not None:
            lines.append(f"your hand  {cards(state['hand'])}")
    if state.get("result"):
        lines.append(f"RESULT: winners {state['result'].get('winners')}  ranking {state['result'].get('ranking')}")
    return "\n".join(lines)


def event_line(e: Data) -> str | None:
    """One short line for the log, or None for events not worth a line."""
    t = e.get("type")
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
            return f"pot {e.get('amount')} to {_seats(e['winners'])}"
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
