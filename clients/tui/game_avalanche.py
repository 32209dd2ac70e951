"""Avalanche in the terminal client (its registration's ``tui_renderer``, :data:`TUI`): the table
from the view, the log's lines for its events, its keys (``s`` snowfall, ``p`` play), a play typed
as ``RANK [COUNT]`` and what it would do to the avalanche (RULES AV-2) shown as it is typed.

>>> outcome([{"seat": 2, "cards": ["9h", "9s"], "rank": "9", "count": 2}], 2, "9"), outcome([], 1, "4")
('grow', 'start')
>>> TUI.words({"type": "play", "rank": "T", "count": 2}), TUI.words({"type": "play", "groups": {"X": 1, "4": 2}})
('play 2 × 10', 'play 4×2 joker×1')
>>> TUI.event({"type": "fallen", "to": 1, "count": 5}, {1: "ann"})
'the avalanche falls on ann: 5 cards stored'
"""

from __future__ import annotations

from typing import Any

from cardhall.clients.tui.events import Names, per_seat, who, wins
from cardhall.clients.tui.game_common import Data, row, seat_list, texts
from cardhall.clients.tui.render import TuiGame
from cardhall.clients.tui.text import card, cards

#: the ranks, lowest to highest (``X`` the joker, RULES AV-1)
RANKS = "23456789TJQKAX"
#: what a play does to the avalanche, as the browser says it
OUTCOME_TEXT = {"start": "starts an avalanche", "grow": "grows the avalanche",
                "stop": "stops it: all to the neutral pile", "fall": "lets it fall on the previous player"}


def avalanche_text(state: Data, you: int | None, names: dict[int, str]) -> str:
    """The table: deck, neutral pile, a row per seat (hand size, stored cards), the avalanche, your hand."""
    plays = state.get("avalanche") or []
    sizes, stored, out = state.get("hand_sizes") or {}, state.get("stored") or {}, state.get("out") or []
    lines = [f"deck {state.get('deck')} cards   neutral pile {state.get('neutral')}   "
             f"dealer {who(names, state.get('dealer'))}"]
    for seat in seat_list({**state, "stacks": sizes}):
        k = str(seat)
        lines.append(row(names, seat, you, [f"hand {sizes.get(k, 0)}", f"stored {stored.get(k, 0)}",
                                            "out" if seat in out else ""]))
    lines.append("avalanche  " + (" | ".join(f"{who(names, p['seat'])}: {cards(p['cards'])}" for p in plays)
                                  or "none: snowfall or start one"))
    if state.get("hand") is not None:
        lines.append(f"your hand  {cards(state['hand'])}")
    return "\n".join(lines)


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


def rank_label(rank: str) -> str:
    """``"T"`` -> ``"10"``, ``"X"`` -> ``"joker"``, others as they are."""
    return {"T": "10", "X": "joker"}.get(rank, rank)


def parse_play(text: str, groups: dict[str, int]) -> Data:
    """A ``play`` action from the typed ``RANK [COUNT]`` (``"9 2"``, ``"10"`` or ``"t"``
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


def _legal_play(legal: list[Data]) -> Data | None:
    return next((a for a in legal if a["type"] == "play" and "groups" in a), None)


def words(action: Data) -> str | None:
    """A legal play (its ``groups``: ``play 4×2 joker×1``) or a play sent (``play 2 × 10``) in
    words; None for any other action (the shared words)."""
    if action.get("type") != "play":
        return None
    if "groups" in action:
        return "play " + " ".join(f"{rank_label(r)}×{n}"
                                  for r, n in sorted(action["groups"].items(), key=lambda kv: RANKS.index(kv[0])))
    if "rank" in action:
        return f"play {action.get('count', 1)} × {rank_label(action['rank'])}"
    return None


def parse(key: str, legal: list[Data], typed: str) -> Data | None:
    """Key ``play`` with the text typed: :func:`parse_play` of the legal play; None for the other
    keys (the shared reading)."""
    play = next((a for a in legal if a["type"] == "play"), None)
    if key != "play" or play is None:
        return None
    return parse_play(typed, play["groups"])


def play_preview(text: str, legal: list[Data], avalanche: list[Data]) -> str:
    """What the typed play does to the avalanche on the table (grow, stop, fall), as the
    browser's preview says it; the reason when the typing is not a play; empty without a legal play.

    >>> play_preview("9 2", [{"type": "play", "groups": {"9": 2}}], [{"seat": 2, "cards": ["8h"], "rank": "8", "count": 1}])
    'play 2 × 9: grows the avalanche'
    """
    play = _legal_play(legal)
    if play is None:
        return ""
    try:
        action = parse_play(text, play["groups"])
    except ValueError as exc:
        return str(exc)
    if action["count"] > play["groups"][action["rank"]]:
        return f"you hold only {play['groups'][action['rank']]} × {rank_label(action['rank'])}"
    said = OUTCOME_TEXT[outcome(avalanche, action["count"], action["rank"])]
    return f"{words(action)}: {said}"


def preview(typed: str, legal: list[Data], state: Data | None) -> str:
    """:func:`play_preview` against the avalanche of the view ``state``."""
    return play_preview(typed, legal, (state or {}).get("avalanche") or [])


def _play_line(e: Data, names: Names) -> str:
    said: dict[Any, str] = {"start": "starts an avalanche", "grow": "grows it", "stop": "stops it", "fall": "lets it fall"}
    return f"{who(names, e.get('seat'))} plays {cards(e.get('cards'))}: " + said.get(str(e.get("outcome")),
                                                                                  str(e.get("outcome")))


EVENTS = texts({
    "deal": lambda e, names: f"you are dealt {cards(e['cards'])}" if e.get("cards") else "ten cards each are dealt",
    "snowfall": lambda e, names: f"{who(names, e.get('seat'))} takes a snowfall"
    + (f": {card(e['card'])}" if e.get("card") else ""),
    "play": _play_line,
    "stopped": lambda e, names: (f"{who(names, e.get('seat'))} stopped the avalanche: {e.get('count')} cards "
                                 "to the neutral pile"),
    "fallen": lambda e, names: f"the avalanche falls on {who(names, e.get('to'))}: {e.get('count')} cards stored",
    "refill": lambda e, names: f"{who(names, e.get('seat'))} draws {e.get('count')} cards"
    + (f": {cards(e['cards'])}" if e.get("cards") else ""),
    "out": lambda e, names: f"{who(names, e.get('seat'))} is out of cards",
    "game_end": lambda e, names: f"game over: {wins(names, e.get('winners'))} (stored {per_seat(names, e.get('stored'))})",
    "game_start": lambda e, names: f"game starts: {who(names, e.get('dealer'))} deals from {e.get('deck_total')} cards",
})

#: what Avalanche's registration names
TUI = TuiGame(text=avalanche_text, event=EVENTS, keys=("snowfall", "play"), preview=preview, parse=parse,
              words=words, hint="RANK [COUNT]")
