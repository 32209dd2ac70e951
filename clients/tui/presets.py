"""Bet-size presets for the variable-amount bets (no-limit Hold'em, Alamo): min,
½ pot, ¾ pot, pot, all-in, each clamped to the legal range.

Amounts are raise-to totals for the street (RULES NL-2; Alamo counts cards the
same way, AL-5). A pot-sized raise is to the amount to call plus the pot after
the call: ``to = top + (pot + to_call)`` where ``top`` is the bet to match
(the viewer's bet plus ``to_call``) and ``pot`` counts every chip (card) put in
this hand, this street's bets included (the view's ``pot``); a fraction ``f``
of the pot raises to ``top + f * (pot + to_call)``, rounded down.

>>> legal = [{"type": "fold"}, {"type": "call", "min": 10, "max": 10}, {"type": "raise", "min": 40, "max": 200}]
>>> state = {"pot": 30, "bets": {"1": 10, "2": 20}}
>>> [(p.label, p.amount) for p in presets(legal, state, 1)]
[('min', 40), ('½ pot', 40), ('¾ pot', 50), ('pot', 60), ('all-in', 200)]
>>> presets([{"type": "bet", "min": 20, "max": 20}], state, 1)  # nothing to choose (fixed limit, or all-in only)
[]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Data = dict[str, Any]
#: the presets in key order (keys 1..5): label, fraction of the pot (None: the legal min or max)
PRESETS: tuple[tuple[str, float | None], ...] = (("min", None), ("½ pot", 0.5), ("¾ pot", 0.75), ("pot", 1.0),
                                                 ("all-in", None))


@dataclass(frozen=True)
class Preset:
    """One preset: ``label`` (``"½ pot"``), ``amount`` (the raise-to total, chips or cards), ``kind`` (``bet``/``raise``)."""

    label: str
    amount: int
    kind: str


def sizing(legal: list[Data]) -> Data | None:
    """The legal ``bet`` or ``raise`` whose amount is a choice (``min`` < ``max``), else None."""
    for a in legal:
        if a["type"] in ("bet", "raise") and a.get("min") is not None and a.get("max", a["min"]) > a["min"]:
            return a
    return None


def presets(legal: list[Data], state: Data | None, you: int | None) -> list[Preset]:
    """The five presets for ``you`` from the legal actions and the game's view
    (``pot``, ``bets``), in :data:`PRESETS` order; empty when the amount is not a choice."""
    action = sizing(legal)
    if action is None or state is None:
        return []
    low, high = int(action["min"]), int(action["max"])
    to_call = next((int(a.get("min") or 0) for a in legal if a["type"] == "call"), 0)
    mine = int((state.get("bets") or {}).get(str(you), 0) or 0)
    top, pot = mine + to_call, int(state.get("pot") or 0)
    out = []
    for label, fraction in PRESETS:
        if fraction is None:
            amount = high if label == "all-in" else low
        else:
            amount = min(high, max(low, top + int(fraction * (pot + to_call))))
        out.append(Preset(label, amount, action["type"]))
    return out
