"""The terminal client's renderer for a game without its own: the view as data,
the events as key/value lines, the legal actions numbered, an action typed.

The legal actions' shape drives the input (protocol/SPEC.md "Games", the
generic conventions): ``min``/``max`` mean the action carries an ``amount``
in that range, a ``cards`` list means it carries ``cards`` chosen from it,
and any other list of plain values (``choices``) a field of that name with one
of them.

>>> print(generic_text({"game": "high_card", "hand": 2, "card": "Qh", "points": {"1": 3, "2": -3},
...                     "folded": [], "result": None}, 1, {1: "ann"}))
hand: 2
card: Q♥
points: 1:3  2:-3
folded: -
>>> event_text({"type": "action", "seat": 2, "action": "bet", "amount": 3})
'action: seat 2, action bet, amount 3'
>>> legal = [{"type": "bet", "min": 1, "max": 5}, {"type": "fold"}]
>>> legal_text(legal)
'1:bet 1..5  2:fold'
>>> action_from(legal[0], "4"), action_from(legal[0], ""), parse_action("fold", legal)
({'type': 'bet', 'amount': 4}, {'type': 'bet', 'amount': 1}, {'type': 'fold'})
>>> parse_action("bet 9", legal)
Traceback (most recent call last):
...
ValueError: bet takes an amount from 1 to 5
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cardhall.clients.tui.text import card, cards, seat_map

Data = dict[str, Any]
#: view fields the generic rendering leaves out (the frame shows them elsewhere)
SKIPPED = ("game", "viewer", "result")


def _is_card(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 2 and (value[0] == "X" or value[1] in "cdhs") \
        and value[0] in "23456789TJQKAX"


def value_text(value: Any) -> str:
    """One value, readably: cards as cards, seat maps as ``1:v  2:v``, lists by spaces."""
    if value is None:
        return "-"
    if _is_card(value):
        return card(value)
    if isinstance(value, list):
        if value and all(_is_card(v) for v in value):
            return cards(value)
        return " ".join(value_text(v) for v in value) if value else "-"
    if isinstance(value, Mapping):
        if value and all(isinstance(k, str) and k.isdigit() for k in value):
            return seat_map({k: value_text(v) for k, v in value.items()})
        return ", ".join(f"{k} {value_text(v)}" for k, v in value.items()) or "-"
    return str(value)


def generic_text(state: Data, you: int | None, names: dict[int, str]) -> str:
    """The view as ``key: value`` lines (see :func:`value_text`), the fields of
    :data:`SKIPPED` left out."""
    return "\n".join(f"{k}: {value_text(v)}" for k, v in state.items() if k not in SKIPPED)


def event_text(event: Data) -> str:
    """``"type: key value, ..."`` for any event."""
    fields = ", ".join(f"{k} {value_text(v)}" for k, v in event.items() if k != "type")
    return f"{event.get('type')}: {fields}" if fields else str(event.get("type"))


def legal_text(legal: Sequence[Data]) -> str:
    """The legal actions numbered from 1 (the keys that pick them), with their ranges and choices."""
    parts = []
    for i, a in enumerate(legal, 1):
        text = f"{i}:{a['type']}"
        if a.get("min") is not None and a.get("max") is not None:
            text += f" {a['min']}" if a["min"] == a["max"] else f" {a['min']}..{a['max']}"
        for name, values in _choices(a).items():
            text += f" {name}[{value_text(values)}]"
        parts.append(text)
    return "  ".join(parts)


def _choices(legal: Data) -> dict[str, list[Any]]:
    """The legal action's fields that list values to choose from (``cards`` included)."""
    return {k: v for k, v in legal.items() if k not in ("type", "min", "max") and isinstance(v, list) and v
            and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v)}


def action_from(legal: Data, typed: str) -> Data:
    """The action for the legal action ``legal`` with what was typed (words after
    the type, if any): the amount (default ``min``), the cards (default none),
    a choice (default the first). ValueError, with the message to show, for a
    value out of range or not offered."""
    words = typed.split()
    action: Data = {"type": legal["type"]}
    if legal.get("min") is not None and legal.get("max") is not None:
        numbers = [w for w in words if w.lstrip("-").isdigit()]
        amount = int(numbers[0]) if numbers else legal["min"]
        if not legal["min"] <= amount <= legal["max"]:
            raise ValueError(f"{legal['type']} takes an amount from {legal['min']} to {legal['max']}")
        action["amount"] = amount
        words = [w for w in words if w not in numbers[:1]]
    for name, values in _choices(legal).items():
        offered = {str(v).lower(): v for v in values}
        if name == "cards":
            chosen = [w for w in words if w.lower() in offered]
            action["cards"] = [offered[w.lower()] for w in chosen]
            words = [w for w in words if w not in chosen]
            continue
        picked = next((w for w in words if w.lower() in offered), None)
        action[name] = offered[picked.lower()] if picked is not None else values[0]
    if words:
        raise ValueError(f"{legal['type']}: {' '.join(words)!r} is not offered")
    return action


def parse_action(text: str, legal: Sequence[Data]) -> Data:
    """``"TYPE [values...]"`` typed in the input -> an action of the legal
    actions (:func:`action_from`); ValueError when the type is not legal now."""
    words = text.split()
    if not words:
        raise ValueError("type an action: " + legal_text(legal))
    found = next((a for a in legal if a["type"] == words[0].lower()), None)
    if found is None:
        raise ValueError(f"{words[0]!r} is not legal now: {legal_text(legal)}")
    return action_from(found, " ".join(words[1:]))
