"""High Card: a test-only toy game that proves a game needs only its own files.

Not a real game of ``../shared/seeds``; its rules are these, in full.

Match
    2 to 6 players, ``hands`` hands (option, default 3). Each hand: one
    shuffle of :func:`cardhall.engine.cards.standard_deck` with the match's
    generator (RULES G-2: the only random choice), then one card each, face
    down. Hand ``k`` is dealt and played in seat order starting with the
    ``(k-1) mod n``-th seat of the sorted seats (``order``); ``order[i]``
    gets the deck's ``i``-th card (``D[0]`` is the top).

Decision (each player once per hand, in ``order``)
    ``{"type": "bet", "amount": a}`` with ``1 <= a <= max_bet`` (option,
    default 5; points), or ``{"type": "fold"}``. Legal actions:
    ``{"type": "bet", "min": 1, "max": max_bet}`` and ``{"type": "fold"}``.
    A clock running out folds (G-3).

Settlement
    With two or more bettors their cards are shown (``showdown``) and the
    highest card wins: rank 2..A, equal ranks by suit c < d < h < s (the
    cards are distinct, so there is no tie). The winner gains every other
    bettor's bet; each other bettor loses their own. With one bettor or none
    nothing is shown and nobody scores. Folded cards are never shown.
    After the last hand the match ends: ranking by points, most first.

Events (``Event.data`` public; ``Event.private[seat]`` only for that seat)
    ``match_start``  seats, hands, max_bet.
    ``deal``         hand, order; private[seat]: card.
    ``action``       hand, seat, action (``bet``/``fold``), amount (bet only).
    ``showdown``     hand, cards {seat: card} (the bettors), winner.
    ``hand_end``     hand, winner (seat or None), points {seat: points}.
    ``match_end``    the ``result()`` map.

Dealer steps: ``pending == "hand"`` between hands (``advance()`` deals the next).

>>> from cardhall.engine.base import test_rng
>>> game = HighCard.new([1, 2], {"hands": 1}, test_rng("doc"))
>>> [e.type for e in game.start()], game.to_act, [a.to_data() for a in game.legal_actions()]
(['match_start', 'deal'], 1, [{'type': 'bet', 'min': 1, 'max': 5}, {'type': 'fold'}])
>>> _ = game.apply(1, {"type": "bet", "amount": 2}); [e.type for e in game.apply(2, {"type": "fold"})]
['action', 'hand_end', 'match_end']
>>> game.result()["points"]
{'1': 0, '2': 0}
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Self

from cardhall.engine.base import Data, Engine, Event, IllegalAction, LegalAction
from cardhall.engine.cards import RANKS, SUITS, standard_deck
from cardhall.engine.options import Option, defaults
from cardhall.engine.rng import RandomSource
from cardhall.engine.seats import check_seats

RULE = "high_card"  # the rules are this module's docstring
VERSION = 1


def strength(card: str) -> int:
    """Order of cards: rank first (2..A), then suit (c < d < h < s)."""
    return RANKS.index(card[0]) * 4 + SUITS.index(card[1])


def _keys(mapping: Mapping[int, Any]) -> Data:
    return {str(k): v for k, v in mapping.items()}


class HighCard(Engine):
    """A match of High Card (rules in the module docstring)."""

    game = "high_card"
    title = "High Card (test toy)"
    min_seats = 2
    max_seats = 6
    options_spec = (
        Option("hands", 3, "int", "hands in the match", min=1, max=20),
        Option("max_bet", 5, "int", "the largest bet, points", min=1, max=100),
    )
    default_options = defaults(options_spec)

    def __init__(self, seats: Sequence[int], options: Data, rng: RandomSource) -> None:
        self.seats = sorted(seats)
        self.options = dict(options)
        self.rng = rng
        self.phase = "new"  # new | betting | hand | over
        self.hand_number = 0
        self.order: list[int] = []
        self.cards: dict[int, str] = {}
        self.deck: list[str] = []
        self.queue: list[int] = []
        self.bets: dict[int, int] = {}
        self.folded: list[int] = []
        self.shown: dict[int, str] = {}
        self.points: dict[int, int] = {s: 0 for s in self.seats}
        self.last_record: Data | None = None
        self._result: Data | None = None

    @classmethod
    def new(cls, seats: Sequence[int], options: Mapping[str, Any] | None, rng: RandomSource) -> Self:
        """A match for ``seats`` (2..6 seat numbers); ValueError names a bad seat list or option."""
        return cls(check_seats(seats, cls.min_seats, cls.max_seats), cls.resolve_options(options), rng)

    # -- questions ----------------------------------------------------------
    @property
    def to_act(self) -> int | None:
        return self.queue[0] if self.phase == "betting" else None

    @property
    def pending(self) -> str | None:
        return "hand" if self.phase == "hand" else None

    @property
    def finished(self) -> bool:
        return self.phase == "over"

    def legal_actions(self) -> list[LegalAction]:
        """``bet`` (1..max_bet points) or ``fold`` for the player to act; else empty."""
        if self.phase != "betting":
            return []
        return [LegalAction("bet", 1, self.options["max_bet"]), LegalAction("fold")]

    def result(self) -> Data | None:
        """None until the match ends; then ``{"ranking", "winners", "points", "hands"}``."""
        return copy.deepcopy(self._result)

    def timeout_action(self, seat: int) -> Data:
        """Fold (G-3)."""
        return {"type": "fold"}

    def view(self, viewer: int | None) -> Data:
        """The state for ``viewer``: ``card`` is the viewer's own card this hand
        (None for a spectator or a seat not dealt); the others' cards only once shown."""
        return {
            "game": self.game, "viewer": viewer, "options": dict(self.options), "seats": list(self.seats),
            "hand": self.hand_number, "order": list(self.order), "to_act": self.to_act,
            "bets": _keys(self.bets), "folded": list(self.folded),
            "card": self.cards.get(viewer) if viewer is not None else None,
            "shown": _keys(self.shown), "points": _keys(self.points), "result": self.result(),
        }

    def audit(self) -> Data:
        """Every card of the hand's deck: undealt plus dealt (52)."""
        where = {"deck": len(self.deck), "dealt": len(self.cards)} if self.hand_number else {"box": 52}
        return {"unit": "cards", "expected": 52, "counted": sum(where.values()), "where": where}

    def hand_record(self) -> Data | None:
        """The last finished hand, every card included (hand, order, cards, bets, folded, winner, points)."""
        return copy.deepcopy(self.last_record)

    # -- inputs -------------------------------------------------------------
    def start(self) -> list[Event]:
        """Announce the match and deal hand 1."""
        if self.phase != "new":
            raise IllegalAction("already_started", "the match has already started", RULE)
        start = Event({"type": "match_start", "seats": list(self.seats), "hands": self.options["hands"],
                       "max_bet": self.options["max_bet"]})
        return [start, self._deal()]

    def apply(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """``seat`` bets or folds; IllegalAction (state unchanged) otherwise."""
        if self.phase != "betting" or seat != self.to_act:
            raise IllegalAction("not_your_turn", f"seat {seat} may not act now", RULE)
        kind = action.get("type") if isinstance(action, Mapping) else None
        if kind == "fold" and set(action) == {"type"}:
            self.folded.append(seat)
            event = Event({"type": "action", "hand": self.hand_number, "seat": seat, "action": "fold"})
        elif kind == "bet" and set(action) == {"type", "amount"}:
            amount = action["amount"]
            if type(amount) is not int or not 1 <= amount <= self.options["max_bet"]:
                raise IllegalAction("bad_amount", f"a bet is 1 to {self.options['max_bet']} points", RULE)
            self.bets[seat] = amount
            event = Event({"type": "action", "hand": self.hand_number, "seat": seat, "action": "bet", "amount": amount})
        else:
            raise IllegalAction("illegal_action", "the action is {type: bet, amount} or {type: fold}", RULE)
        self.queue.pop(0)
        return [event] + ([] if self.queue else self._settle())

    def advance(self) -> list[Event]:
        """Deal the next hand (``pending == "hand"``)."""
        if self.phase != "hand":
            raise IllegalAction("nothing_pending", "no dealer step is pending", RULE)
        return [self._deal()]

    # -- the hand -----------------------------------------------------------
    def _deal(self) -> Event:
        deck = standard_deck()
        self.rng.shuffle(deck)
        self.hand_number += 1
        first = (self.hand_number - 1) % len(self.seats)
        self.order = self.seats[first:] + self.seats[:first]
        self.cards = {s: deck[i] for i, s in enumerate(self.order)}
        self.deck = deck[len(self.order):]
        self.queue = list(self.order)
        self.bets, self.folded, self.shown = {}, [], {}
        self.phase = "betting"
        return Event({"type": "deal", "hand": self.hand_number, "order": list(self.order)},
                     {s: {"card": c} for s, c in self.cards.items()})

    def _settle(self) -> list[Event]:
        events: list[Event] = []
        winner: int | None = None
        if len(self.bets) >= 2:
            winner = max(self.bets, key=lambda s: strength(self.cards[s]))
            self.shown = {s: self.cards[s] for s in self.bets}
            for seat, amount in self.bets.items():
                if seat != winner:
                    self.points[seat] -= amount
                    self.points[winner] += amount
            events.append(Event({"type": "showdown", "hand": self.hand_number, "cards": _keys(self.shown), "winner": winner}))
        self.last_record = {"hand": self.hand_number, "order": list(self.order), "cards": _keys(self.cards),
                            "bets": _keys(self.bets), "folded": list(self.folded), "winner": winner,
                            "points": _keys(self.points)}
        events.append(Event({"type": "hand_end", "hand": self.hand_number, "winner": winner, "points": _keys(self.points)}))
        if self.hand_number < self.options["hands"]:
            self.phase = "hand"
            return events
        self.phase = "over"
        levels = sorted(set(self.points.values()), reverse=True)
        ranking = [[s for s in self.seats if self.points[s] == level] for level in levels]
        self._result = {"ranking": ranking, "winners": ranking[0], "points": _keys(self.points), "hands": self.hand_number}
        events.append(Event({"type": "match_end", **copy.deepcopy(self._result)}))
        return events

    # -- persistence --------------------------------------------------------
    def to_data(self) -> Data:
        """The whole match as plain data, the random source included."""
        return {
            "game": self.game, "version": VERSION, "seats": list(self.seats), "options": dict(self.options),
            "rng": self.rng_to_data(self.rng), "phase": self.phase, "hand": self.hand_number, "order": list(self.order),
            "cards": _keys(self.cards), "deck": list(self.deck), "queue": list(self.queue),
            "bets": _keys(self.bets), "folded": list(self.folded), "shown": _keys(self.shown),
            "points": _keys(self.points), "last_record": copy.deepcopy(self.last_record),
            "result": copy.deepcopy(self._result),
        }

    @classmethod
    def from_data(cls, data: Data) -> Self:
        """Inverse of :meth:`to_data`; ValueError on malformed data."""
        try:
            if data["game"] != cls.game or data["version"] != VERSION:
                raise ValueError(f"not a {cls.game} state of version {VERSION}")
            self = cls(data["seats"], dict(data["options"]), cls.rng_from_data(data["rng"]))
            self.phase, self.hand_number, self.order = data["phase"], int(data["hand"]), list(data["order"])
            self.cards = {int(k): v for k, v in data["cards"].items()}
            self.deck, self.queue = list(data["deck"]), list(data["queue"])
            self.bets = {int(k): v for k, v in data["bets"].items()}
            self.folded = list(data["folded"])
            self.shown = {int(k): v for k, v in data["shown"].items()}
            self.points = {int(k): v for k, v in data["points"].items()}
            self.last_record = copy.deepcopy(data["last_record"])
            self._result = copy.deepcopy(data["result"])
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed {cls.game} state: {exc!r}") from exc
        return self
