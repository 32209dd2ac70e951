"""The terminal client's actions from keys and typed text, and their words:
what a key plays from the legal actions, what the legal line and the status
line say (never a Python value). A game's own reading of typed text and its
own words come from its terminal parts (``parse``, ``words``:
:class:`cardhall.clients.tui.render.TuiGame`); these functions are the rest.

>>> legal = [{"type": "fold"}, {"type": "call", "min": 40, "max": 40}, {"type": "all_in", "min": 40, "max": 40, "as": "call"}]
>>> legal_line(legal)
'fold  call 40 (all-in)'
>>> choose("bet_raise", [{"type": "raise", "min": 40, "max": 200}], "")
{'type': 'raise', 'amount': 40}
>>> action_words({"type": "raise", "amount": 60}), action_words({"type": "draw", "cards": ["Ah", "2c"]})
('raise to 60', 'draw Ah 2c')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Frame = dict[str, Any]
#: a game's own reading of a key with the text typed (``TuiGame.parse``)
Parse = Callable[[str, list[Frame], str], "Frame | None"]
#: a game's own words for an action (``TuiGame.words``)
Words = Callable[[Frame], "str | None"]


def choose(what: str, legal: list[Frame], typed: str, parse: Parse | None = None) -> Frame | None:
    """The action for key ``what`` (``fold``, ``check_call``, ``bet_raise``, ``all_in``, ``play``,
    ``snowfall``, ``continue``, ``rematch``) from the legal actions and the text typed, or None when
    it is not possible now; ValueError (with the message to show) for a typed amount (or what the
    game's ``parse`` reads) that is not one. ``parse``: the game's own reading of a key, tried
    first (None from it: the reading here)."""
    kinds = {a["type"]: a for a in legal}
    if what in ("continue", "rematch"):
        return {"type": what}
    if parse is not None:
        action = parse(what, legal, typed)
        if action is not None:
            return action
    if what == "check_call":
        kind = "check" if "check" in kinds else "call" if "call" in kinds else None
        return {"type": kind} if kind else None
    if what == "bet_raise":
        kind = "bet" if "bet" in kinds else "raise" if "raise" in kinds else None
        if kind is None:
            return None
        text = typed.strip()
        if text and not text.isdigit():
            raise ValueError(f"type the amount as a number, not {text!r}")
        return {"type": kind, "amount": int(text) if text else kinds[kind]["min"]}
    return {"type": what} if what in kinds else None


def _one(a: Frame, calls_all_in: bool, words: Words | None) -> str:
    said = words(a) if words is not None else None
    if said is not None:
        return said
    if a["type"] == "call" and a.get("min") is not None:
        return f"call {a['min']}" + (" (all-in)" if calls_all_in else "")
    if a["type"] == "all_in" and a.get("min") is not None:
        return f"all-in {a['min']}"
    if a.get("min") is not None and a.get("min") != a.get("max"):
        return f"{a['type']} {a['min']}..{a['max']}"
    if a.get("min") is not None:
        return f"{a['type']} {a['min']}"
    return str(a["type"]).replace("_", "-")


def legal_line(legal: list[Frame], words: Words | None = None) -> str:
    """The legal actions in words (``words``: the game's own, tried first); a call that puts the
    player all in is one entry, ``call N (all-in)``."""
    all_in = next((a for a in legal if a["type"] == "all_in"), None)
    call = next((a for a in legal if a["type"] == "call"), None)
    calls_all_in = bool(all_in and call and all_in.get("as") == "call")
    return "  ".join(_one(a, calls_all_in, words) for a in legal if not (calls_all_in and a is all_in))


def action_words(action: Frame, words: Words | None = None) -> str:
    """An action sent, in words: ``fold``, ``raise to 60`` (``words``: the game's own, tried first)."""
    said = words(action) if words is not None else None
    if said is not None:
        return said
    kind = str(action.get("type"))
    if kind in ("bet", "raise") and "amount" in action:
        return f"{kind} {'to ' if kind == 'raise' else ''}{action['amount']}"
    extra = " ".join(str(v) if not isinstance(v, list) else " ".join(map(str, v))
                     for k, v in action.items() if k != "type")
    return f"{kind.replace('_', '-')} {extra}".strip()
