"""Text pieces the terminal client's renderers share: cards and seat maps.

>>> card("Ah"), card("Td"), card("Xr")
('A♥', 'T♦', '🃏r')
>>> cards(["Ah", "Kd"]), seat_map({"2": 40, "1": 60})
('A♥ K♦', '1:60  2:40')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SUITS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
Data = dict[str, Any]


def card(c: str) -> str:
    """``"Ah"`` -> ``"A♥"``; jokers ``"Xr"``/``"Xb"`` -> ``"🃏r"``/``"🃏b"``."""
    if c[0] == "X":
        return "🃏" + c[1]
    return c[0] + SUITS.get(c[1], c[1])


def cards(cs: list[str] | None) -> str:
    """Cards separated by spaces, ``"-"`` for none."""
    return " ".join(card(c) for c in cs) if cs else "-"


def seat_map(m: Mapping[str, Any] | None) -> str:
    """A seat-keyed map (string keys) as ``"1:60  2:40"``, by seat number."""
    return "  ".join(f"{s}:{v}" for s, v in sorted((m or {}).items(), key=lambda kv: int(kv[0])))
