"""One readable line per event for the terminal client's log: players by name,
cards as cards, never a Python value (no ``None``, lists or maps).

``names`` maps a seat to its player's name (``snapshot.info.occupants``, kept
up to date from ``seated`` events); a seat without a name is ``seat N``.
Events of the built-in games are told apart by their fields (Alamo counts
``cards``, Hold'em ``total`` chips, Loco Poker has neither), as the browser's
renderers describe them (``clients/web/js/games/*.js``).

>>> names = {1: "ann", 2: "bot 2"}
>>> event_line({"type": "action", "seat": 2, "action": "raise", "amount": 40, "total": 60}, names)
'bot 2 raises to 60'
>>> event_line({"type": "hand_end", "hand": 1, "stacks": {}, "net": {"1": 44, "2": -44}}, names)
'— hand 1 over: ann +44, bot 2 -44'
>>> event_line({"type": "hand_end", "hand": 3, "result": "all_in_won", "points": {"1": 1, "2": 0}}, names)
'— hand 3 over: the all-in won (points ann 1, bot 2 0)'
>>> event_line({"type": "match_ended", "match": 1, "result": {"winners": [2], "ranking": [[2], [1]]}}, names)
'MATCH OVER: bot 2 wins'
>>> event_line({"type": "turn", "seat": 1}, names) is None
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from cardhall.clients.tui.generic import event_text
from cardhall.clients.tui.text import card, cards

Data = dict[str, Any]
Names = Mapping[int, str]
#: the table's own events (protocol/SPEC.md "Events"): every game's stream has them
TABLE_EVENTS = frozenset({"seated", "left", "presence", "match_started", "match_ended", "rematch", "timeout",
                          "sat_out", "sat_in", "paused", "resumed", "awaiting", "closed", "broken"})
#: Loco Poker's ``hand_end.result`` in words
LOCO_OUTCOMES = {"checked_down": "checked down: no points", "folded_around": "folded around: no points",
                 "uncalled_all_in": "uncalled all-in: a point", "all_in_won": "the all-in won",
                 "all_in_lost": "the all-in lost", "push": "push"}
VERBS = {"fold": "folds", "check": "checks", "call": "calls", "all_in": "goes all-in"}


def who(names: Names, seat: Any) -> str:
    """The name at ``seat`` (an int or a seat-map key), else ``seat N``; ``nobody`` for None."""
    if seat is None:
        return "nobody"
    try:
        return names.get(int(seat)) or f"seat {seat}"
    except (TypeError, ValueError):
        return str(seat)


def who_all(names: Names, seats: Iterable[Any] | None) -> str:
    """Seats as names joined by commas, ``nobody`` for none."""
    return ", ".join(who(names, s) for s in seats or []) or "nobody"


def per_seat(names: Names, m: Mapping[str, Any] | None, signed: bool = False) -> str:
    """A seat map as ``ann 60, bob 40`` (by seat; ``+N`` when ``signed``), ``-`` when empty."""
    items = sorted((m or {}).items(), key=lambda kv: int(kv[0]))
    return ", ".join(f"{who(names, s)} {v:+d}" if signed and isinstance(v, int) else f"{who(names, s)} {v}"
                     for s, v in items) or "-"


def _wins(names: Names, winners: Iterable[Any] | None) -> str:
    seats = list(winners or [])
    return f"{who_all(names, seats)} {'win' if len(seats) > 1 else 'wins'}"


def _action(e: Data, n: Callable[[Any], str]) -> str:
    kind = e.get("action")
    if "cards" in e:  # Alamo: amounts are cards
        verb = {"call": f"calls {e['cards']} cards", "bet": f"bets {e.get('amount')}",
                "raise": f"raises to {e.get('amount')}", "all_in": f"goes all-in ({e['cards']} cards)"}.get(kind)
    else:
        verb = {"call": f"calls {e.get('amount')}", "bet": f"bets {e.get('total', e.get('amount'))}",
                "raise": f"raises to {e.get('total', e.get('amount'))}"}.get(kind) if e.get("amount") else None
    text = f"{n(e.get('seat'))} {verb or VERBS.get(kind, str(kind))}"
    return text + (" (all-in)" if e.get("all_in") and kind != "all_in" else "")


def _hand_end(e: Data, names: Names) -> str:
    head = f"— hand {e.get('hand')} over"
    if "net" in e:
        return f"{head}: {per_seat(names, e['net'], signed=True)}"
    if "winnings" in e:
        return f"{head}: " + ", ".join(f"{who(names, s)} takes {c} cards" for s, c in e["winnings"].items())
    if "result" in e:
        said = LOCO_OUTCOMES.get(e["result"], str(e["result"]).replace("_", " "))
        return f"{head}: {said}" + (f" (points {per_seat(names, e['points'])})" if e.get("points") else "")
    return head


def _award(e: Data, names: Names) -> str:
    if isinstance(e.get("winners"), Mapping):
        won = ", ".join(f"{who(names, s)} wins {c}" for s, c in e["winners"].items())
        return won + (f" with {e['hand']}" if e.get("hand") else "")
    return "; ".join(f"{'side pot ' + str(i) if i else 'pot'} ({p.get('cards')} cards) to {who_all(names, p.get('winners'))}"
                     for i, p in enumerate(e.get("pots", [])))


def _street(e: Data) -> str:
    street = str(e.get("street") or "board")
    return f"{street.capitalize()}: {cards(e.get('cards'))}"


def _option(key: str, value: Any, n: Callable[[Any], str]) -> str:
    """An option's value in words: on/off for a switch, a name for a seat."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return n(value) if key in ("button", "dealer") else str(value)


def _table_event(e: Data, n: Callable[[Any], str]) -> str | None:
    t = e["type"]
    if t == "seated":
        return f"{e.get('name')} sits at seat {e.get('seat')}" + (" (bot)" if e.get("bot") else "")
    if t == "left":
        return f"seat {e.get('seat')} is free"
    if t == "presence":
        return f"{n(e.get('seat'))} {'connected' if e.get('connected') else 'disconnected'}"
    if t in ("match_started", "rematch"):
        played = ", ".join(f"{k.replace('_', ' ')} {_option(k, v, n)}" for k, v in (e.get("options") or {}).items()
                           if v is not None and not isinstance(v, (list, dict)))
        return (f"match {e.get('match')} (commitment {str(e.get('commitment', ''))[:12]}…)"
                + (f": {played}" if played else ""))
    if t == "timeout":
        action = e.get("action")
        kind = action.get("type") if isinstance(action, Mapping) else action
        return f"{n(e.get('seat'))} ran out of time: {kind}"
    if t == "sat_out":
        return f"{n(e.get('seat'))} sits out ({e.get('reason')})"
    if t == "sat_in":
        return f"{n(e.get('seat'))} is back in"
    return {"paused": "the owner paused the table", "resumed": "the table resumes",
            "closed": f"the table is closed ({e.get('reason')})",
            "broken": "the table failed and is out of service"}.get(t)


def event_line(e: Data, names: Names | None = None, generic: bool = False) -> str | None:
    """One line for the log, or None for events not worth one (turns, pots).
    ``generic``: the game has no renderer of its own, so its events get the
    generic ``type: key value, ...`` line with names for seats (the table's own
    events keep theirs)."""
    names = names or {}
    t = e.get("type")

    def n(seat: Any) -> str:
        return who(names, seat)

    if t == "match_ended" or (t == "match_end" and not generic):
        result = e.get("result") if isinstance(e.get("result"), Mapping) else e
        return f"{'MATCH OVER' if t == 'match_ended' else 'the match is over'}: {_wins(names, result.get('winners'))}"
    if t in TABLE_EVENTS:
        return _table_event(e, n)
    if generic:
        return event_text({k: (n(v) if k == "seat" else v) for k, v in e.items()})
    simple: dict[str, Callable[[], str]] = {
        "action": lambda: _action(e, n),
        "hand_end": lambda: _hand_end(e, names),
        "award": lambda: _award(e, names),
        "board": lambda: _street(e),
        "street": lambda: _street(e),
        "hand_start": lambda: f"— hand {e.get('hand')}" + (
            f": {n(e['button'])} has the button" if "button" in e else f": {n(e['dealer'])} deals" if "dealer" in e else ""),
        "blinds": lambda: "; ".join(f"{n(p['seat'])} posts {str(p['kind']).replace('_', ' ')} {p['amount']}"
                                    for p in e.get("posts", [])),
        "hole_cards": lambda: f"you are dealt {cards(e['cards'])}" if e.get("cards") else "hole cards are dealt",
        "uncalled": lambda: (f"{e['cards']} cards" if "cards" in e else str(e.get("amount")))
        + f" uncalled back to {n(e.get('seat'))}",
        "show": lambda: f"{n(e.get('seat'))} shows {cards(e.get('cards'))}" + (f" ({e['hand']})" if e.get("hand") else ""),
        "muck": lambda: f"{n(e.get('seat'))} mucks",
        "showdown": lambda: "showdown: " + ", ".join(f"{n(h['seat'])} {cards(h['cards'])} ({h['hand']})"
                                                   for h in e.get("hands", [])),
        "bust": lambda: f"{who_all(names, e.get('seats'))} busted",
        "eliminated": lambda: f"{n(e.get('seat'))} is eliminated ({e.get('cards')} cards into the pot)",
        "loco": lambda: f"¡Loco! {who_all(names, e.get('seats'))} led after the turn and lost",
        "point": lambda: f"{n(e.get('seat'))} scores a point ({e.get('points')})",
        "knocked_out": lambda: f"{who_all(names, e.get('seats'))} knocked out",
        "blind_level": lambda: f"blinds go up: {e['stakes']['small_blind']}/{e['stakes']['big_blind']}",
        "deal": lambda: f"you are dealt {cards(e['cards'])}" if e.get("cards") else "ten cards each are dealt",
        "snowfall": lambda: f"{n(e.get('seat'))} takes a snowfall" + (f": {card(e['card'])}" if e.get("card") else ""),
        "play": lambda: f"{n(e.get('seat'))} plays {cards(e.get('cards'))}: "
        + {"start": "starts an avalanche", "grow": "grows it", "stop": "stops it",
           "fall": "lets it fall"}.get(str(e.get("outcome")), str(e.get("outcome"))),
        "stopped": lambda: f"{n(e.get('seat'))} stopped the avalanche: {e.get('count')} cards to the neutral pile",
        "fallen": lambda: f"the avalanche falls on {n(e.get('to'))}: {e.get('count')} cards stored",
        "refill": lambda: f"{n(e.get('seat'))} draws {e.get('count')} cards" + (f": {cards(e['cards'])}" if e.get("cards") else ""),
        "out": lambda: f"{n(e.get('seat'))} is out of cards",
        "game_end": lambda: f"game over: {_wins(names, e.get('winners'))} (stored {per_seat(names, e.get('stored'))})",
        "match_start": lambda: "the match starts",
        "game_start": lambda: f"game starts: {n(e.get('dealer'))} deals from {e.get('deck_total')} cards",
    }
    line = simple.get(str(t))
    return line() if line else None
