"""The terminal client's actions from keys and typed text, and their words:
what a key plays from the legal actions, what the legal line and the status
line say (never a Python value).

>>> legal = [{"type": "fold"}, {"type": "call", "min": 40, "max": 40}, {"type": "all_in", "min": 40, "max": 40, "as": "call"}]
>>> legal_line(legal)
'fold  call 40 (all-in)'
>>> choose("bet_raise", [{"type": "raise", "min": 40, "max": 200}], "")
{'type': 'raise', 'amount': 40}
>>> action_words({"type": "raise", "amount": 60}), action_words({"type": "play", "rank": "T", "count": 2})
('raise to 60', 'play 2 × 10')
"""

from __future__ import annotations

from typing import Any

from cardhall.clients.tui.games import OUTCOME_TEXT, RANKS, outcome

Frame = dict[str, Any]


def rank_label(rank: str) -> str:
    """``"T"`` -> ``"10"``, ``"X"`` -> ``"joker"``, others as they are."""
    return {"T": "10", "X": "joker"}.get(rank, rank)


def parse_play(text: str, groups: dict[str, int]) -> Frame:
    """An Avalanche ``play`` action from the typed ``RANK [COUNT]`` (``"9 2"``, ``"10"`` or ``"t"``
    for a ten) and the legal action's ``groups`` (rank -> cards of that rank held).

    Nothing typed: one card of the lowest rank held. A rank that is unknown or not held, or a
    count that is not a number, raises ValueError with the message to show: nothing is guessed.
    The server checks the rest (counts too large or a play that does not beat the pile).

    >>> parse_play("10 2", {"T": 2, "4": 1})
    {'type': 'play', 'rank': 'T', 'count': 2}
    >>> parse_play("", {"T": 2, "4": 1})
    {'type': 'play', 'rank': '4', 'count': 1}
    """
    words = text.upper().split()
    if not words:
        return {"type": "play", "rank": min(groups, key=RANKS.index), "count": 1}
    rank = "T" if words[0] == "10" else words[0]
    held = " ".join(sorted(groups, key=RANKS.index))
    if len(rank) != 1 or rank not in RANKS:
        raise ValueError(f"unknown rank {words[0]!r}: type one of {held} (10 or T for a ten)")
    if rank not in groups:
        raise ValueError(f"no {words[0]} in your hand: you can play {held}")
    if len(words) > 1 and not words[1].isdigit():
        raise ValueError(f"the count must be a number, not {words[1]!r}")
    return {"type": "play", "rank": rank, "count": int(words[1]) if len(words) > 1 else 1}


def play_preview(text: str, legal: list[Frame], avalanche: list[Frame]) -> str:
    """What the typed Avalanche play does to the avalanche on the table (grow, stop, fall), as
    the browser's preview says it; the reason when the typing is not a play; empty without a legal play.

    >>> play_preview("9 2", [{"type": "play", "groups": {"9": 2}}], [{"seat": 2, "cards": ["8h"], "rank": "8", "count": 1}])
    'play 2 × 9: grows the avalanche'
    """
    play = next((a for a in legal if a["type"] == "play" and "groups" in a), None)
    if play is None:
        return ""
    try:
        action = parse_play(text, play["groups"])
    except ValueError as exc:
        return str(exc)
    if action["count"] > play["groups"][action["rank"]]:
        return f"you hold only {play['groups'][action['rank']]} × {rank_label(action['rank'])}"
    said = OUTCOME_TEXT[outcome(avalanche, action["count"], action["rank"])]
    return f"{action_words(action)}: {said}"


def choose(what: str, legal: list[Frame], typed: str) -> Frame | None:
    """The action for key ``what`` (``fold``, ``check_call``, ``bet_raise``, ``all_in``, ``play``,
    ``snowfall``, ``continue``, ``rematch``) from the legal actions and the text typed, or None when
    it is not possible now; ValueError (with the message to show) for a typed play or amount that
    is not one (:func:`parse_play`)."""
    kinds = {a["type"]: a for a in legal}
    if what in ("continue", "rematch"):
        return {"type": what}
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
    if what == "play" and "play" in kinds:
        return parse_play(typed, kinds["play"]["groups"])
    return {"type": what} if what in kinds else None


def _one(a: Frame, calls_all_in: bool) -> str:
    if "groups" in a:
        return "play " + " ".join(f"{rank_label(r)}×{n}" for r, n in sorted(a["groups"].items(), key=lambda kv: RANKS.index(kv[0])))
    if a["type"] == "call" and a.get("min") is not None:
        return f"call {a['min']}" + (" (all-in)" if calls_all_in else "")
    if a["type"] == "all_in" and a.get("min") is not None:
        return f"all-in {a['min']}"
    if a.get("min") is not None and a.get("min") != a.get("max"):
        return f"{a['type']} {a['min']}..{a['max']}"
    if a.get("min") is not None:
        return f"{a['type']} {a['min']}"
    return str(a["type"]).replace("_", "-")


def legal_line(legal: list[Frame]) -> str:
    """The legal actions in words; a call that puts the player all in is one entry, ``call N (all-in)``."""
    all_in = next((a for a in legal if a["type"] == "all_in"), None)
    call = next((a for a in legal if a["type"] == "call"), None)
    calls_all_in = bool(all_in and call and all_in.get("as") == "call")
    return "  ".join(_one(a, calls_all_in) for a in legal if not (calls_all_in and a is all_in))


def action_words(action: Frame) -> str:
    """An action sent, in words: ``fold``, ``raise to 60``, ``play 2 × 9``."""
    kind = str(action.get("type"))
    if kind in ("bet", "raise") and "amount" in action:
        return f"{kind} {'to ' if kind == 'raise' else ''}{action['amount']}"
    if kind == "play" and "rank" in action:
        return f"play {action.get('count', 1)} × {rank_label(action['rank'])}"
    extra = " ".join(str(v) if not isinstance(v, list) else " ".join(map(str, v))
                     for k, v in action.items() if k != "type")
    return f"{kind.replace('_', '-')} {extra}".strip()
