"""Loco Poker: Hold'em cards, no chips, only check / fold / all-in.

Rules: seed ``002_4b30a22f310a1e26.txt`` and RULES LO-1..LO-7 (with G-1 seat
numbering, G-2 randomness, G-3 timeouts, FL-5 burns through LO-1).

Match
    2 to 8 players (LO-1). Hand after hand until one player has
    ``points_to_win`` points or every other player is knocked out (LO-6).
    The dealer passes clockwise among players still in (LO-1).

Options (``LocoPoker.new(seats, options, rng)``; ValueError names a bad one)
    ``points_to_win``  int >= 1, default 3 (LO-6).
    ``multi_call``     ``"best_hand"`` (default) or ``"duels"`` (LO-4).
    ``dealer``         the first dealer's seat, or None (default): chosen at
                       random (LO-1). A rematch passes the seat after the
                       previous match's first dealer (G-7): nothing is drawn.

Randomness (G-2): the match's generator is used for nothing but this, in
this order: when ``dealer`` is None, the first dealer is
``sorted(seats)[rng.randbelow(len(seats))]``; then, for every hand in order,
one ``rng.shuffle`` of ``cardhall.engine.cards.standard_deck()``.

Dealing order (so a client can check every card from the revealed seed): let
``D`` be the shuffled deck (``D[0]`` is the top) and ``P1..Pn`` the ``n``
players of the hand clockwise starting left of the dealer (the dealer is
``Pn``). Hole cards go one at a time, two rounds: ``Pk`` gets ``D[k-1]`` and
``D[n+k-1]``. Then, when the hand reaches them: burn ``D[2n]``, flop
``D[2n+1..2n+3]``; burn ``D[2n+4]``, turn ``D[2n+5]``; burn ``D[2n+6]``,
river ``D[2n+7]`` (FL-5 burns). Streets the hand never reaches stay undealt.

Turn order (LO-1, LO-2)
    On every street the first to act is the first player still in left of
    the dealer; each player still in acts once per street. After an all-in,
    each other player still in, in turn from the all-in player's left
    (players who checked earlier included), calls or folds; nobody else acts
    in that hand. Only one all-in per hand.

Actions (maps with ``type`` and no other key)
    ======================  ===================  =====================================
    action                  legal when           effect
    ======================  ===================  =====================================
    ``{"type": "check"}``   no all-in pending    pass; the street ends once every
                                                 player still in has acted
    ``{"type": "fold"}``    any turn (LO-3)      out of the hand; cards never shown
    ``{"type": "all_in"}``  no all-in pending    the others call or fold (LO-2)
    ``{"type": "call"}``    an all-in pending    join the showdown against it
    ======================  ===================  =====================================

    Errors (:class:`cardhall.engine.base.IllegalAction`, state unchanged):
    ``not_started``, ``match_over``, ``not_your_turn`` (wrong seat, or a
    dealer step is pending), ``bad_action`` (not a map with a string ``type``
    and nothing else), ``unknown_action`` (not one of the game's action
    types), ``illegal_action`` (a type not legal now), all rule
    ``LO-2``; ``advance()`` with nothing pending: ``nothing_pending``;
    ``start()`` twice: ``already_started``.

Dealer steps (``pending``; the server calls ``advance()`` after its pause, G-4)
    ``"street"``    deal the next street: after a street everyone checked, or,
                    once an all-in is called, each remaining street in turn.
    ``"showdown"``  a called all-in with the board complete: show and settle.
    ``"hand"``      the hand is over: pass the dealer and deal the next hand.

Outcomes of a hand (LO-3..LO-6)
    * Everyone checks through the river: nobody scores (``checked_down``);
      no hand is shown.
    * All but one fold with no all-in: nobody scores (``folded_around``).
    * All-in, every other player folds: the all-in player scores 1 point
      (``uncalled_all_in``); the board is not dealt further, nothing shown.
    * All-in called: the board is dealt out, the all-in player and every
      caller show. ``best_hand``: one showdown among them; the all-in player
      alone best: every caller knocked out (``all_in_won``); a caller best:
      the all-in player knocked out, the other callers survive
      (``all_in_lost``); the all-in player tied for best: push (LO-5).
      ``duels``: the all-in player against each caller in call order; each
      caller who loses is knocked out, the all-in player is knocked out if
      any caller beats them, a tied duel is a push. Result ``all_in_lost`` if
      the all-in player is out, else ``all_in_won`` if any caller is out,
      else ``push``. A called all-in never scores a point.
    * Knocked out: out of the match, points lost (reset to 0). The match
      ends when a player reaches ``points_to_win`` (that player wins) or one
      player is left (LO-6). The first players knocked out (all of one hand)
      share the match's loss.

"Loco!" (LO-7)
    At a called all-in's showdown, the *best hand after the turn* is, among
    the players in the showdown, the highest value of the best five of six
    cards: the two hole cards plus the first four board cards (flop and
    turn), whatever street the all-in came on. The players holding that value
    are the turn leaders (several when tied). A ``loco`` event goes to
    everyone when every turn leader loses the showdown: ``best_hand``, when no
    turn leader holds the best seven-card hand (alone or shared); ``duels``,
    when each turn leader loses its own duel with the all-in player (a caller
    beaten by the all-in player; the all-in player beaten by a caller; a tied
    duel is not lost). ``beaten_by``: the seats holding the best hand
    (``best_hand``), or those that beat a leader in its duel (``duels``).

Events (``Event.data`` is public; ``Event.private[seat]`` is laid over it
for that seat only)
    ``match_start``  seats, dealer, points_to_win, multi_call.
    ``hand_start``   hand (number from 1), dealer, players (dealing order).
    ``hole_cards``   hand, counts {seat: 2}; private[seat]: cards [c1, c2].
    ``action``       hand, street, seat, action (check/fold/all_in/call).
    ``street``       hand, street (flop/turn/river), cards (new), board (all).
    ``showdown``     hand, board, hands [{seat, cards, hand (category name)}]
                     (all-in player first, then callers in call order), best
                     [seats holding the best hand].
    ``loco``         hand, seats (turn leaders beaten), beaten_by [seats].
    ``point``        hand, seat, points (new total).
    ``knocked_out``  hand, seats.
    ``hand_end``     hand, result, scored (seat or None), knocked_out [seats],
                     duels [{seat, winner (seat or None)}] (duels mode),
                     points {seat: points}.
    ``match_end``    the ``result()`` map.
    Seat keys of maps are strings (plain data for msgpack and JSON).

``view(viewer)``: see :meth:`LocoPoker.view`.

>>> from cardhall.engine.base import test_rng
>>> game = LocoPoker.new([1, 2, 3], {"dealer": 3}, test_rng("doc"))
>>> [e.type for e in game.start()]
['match_start', 'hand_start', 'hole_cards']
>>> game.to_act, [a.type for a in game.legal_actions()]
(1, ['check', 'fold', 'all_in'])
>>> [e.type for e in game.apply(1, {"type": "all_in"})], game.to_act
(['action'], 2)
>>> game.apply(2, {"type": "fold"}) and [e.data for e in game.apply(3, {"type": "fold"})][-2:]  # doctest: +NORMALIZE_WHITESPACE
[{'type': 'point', 'hand': 1, 'seat': 1, 'points': 1},
 {'type': 'hand_end', 'hand': 1, 'result': 'uncalled_all_in', 'scored': 1, 'knocked_out': [],
  'points': {'1': 1, '2': 0, '3': 0}}]
>>> game.pending
'hand'
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

from cardhall.engine.base import Data, Engine, Event, IllegalAction, LegalAction
from cardhall.engine.cards import standard_deck
from cardhall.engine.options import Option, defaults
from cardhall.engine.plugins import Example, GameSpec, builtin_rules, builtin_schema
from cardhall.engine.ranking import hand_name, hand_value
from cardhall.engine.rng import RandomSource
from cardhall.engine.seats import clockwise, next_seat

#: the most points a match may be played to (``points_to_win``)
MAX_POINTS = 1000

RULE = "LO-2"
#: every action type of the game (LO-2): which are legal now is the turn's ``legal``
ACTION_TYPES = ("check", "fold", "all_in", "call")
STREETS = ("preflop", "flop", "turn", "river")
#: cards put on the board when each street is dealt
STREET_CARDS = {"flop": 3, "turn": 1, "river": 1}
MULTI_CALL = ("best_hand", "duels")
STATE_VERSION = 1

#: phase -> what ``pending`` reports
_PENDING = {"street": "street", "showdown": "showdown", "hand": "hand"}


def _keys(mapping: Mapping[int, Any]) -> Data:
    """Seat-keyed map -> string-keyed plain data (copied lists)."""
    return {str(k): list(v) if isinstance(v, list) else v for k, v in mapping.items()}


def _seats(mapping: Mapping[str, Any]) -> dict[int, Any]:
    """Inverse of :func:`_keys`."""
    return {int(k): list(v) if isinstance(v, list) else v for k, v in mapping.items()}


@dataclass(slots=True)
class _Hand:
    """One hand's state. ``players``: dealing order (clockwise from left of
    the dealer); ``deck``: undealt cards, top first; ``in_hand``: players not
    folded, in dealing order; ``queue``: seats still to act this street (or to
    answer the all-in), the first is to act."""

    number: int
    dealer: int
    players: list[int]
    deck: list[str]
    hole: dict[int, list[str]]
    board: list[str] = field(default_factory=list)
    burns: list[str] = field(default_factory=list)
    street: str = "preflop"
    in_hand: list[int] = field(default_factory=list)
    folded: list[int] = field(default_factory=list)
    queue: list[int] = field(default_factory=list)
    all_in: int | None = None
    callers: list[int] = field(default_factory=list)
    actions: list[Data] = field(default_factory=list)
    shown: dict[int, list[str]] = field(default_factory=dict)
    outcome: Data | None = None

    def to_data(self) -> Data:
        return {
            "number": self.number,
            "dealer": self.dealer,
            "players": list(self.players),
            "deck": list(self.deck),
            "hole": _keys(self.hole),
            "board": list(self.board),
            "burns": list(self.burns),
            "street": self.street,
            "in_hand": list(self.in_hand),
            "folded": list(self.folded),
            "queue": list(self.queue),
            "all_in": self.all_in,
            "callers": list(self.callers),
            "actions": copy.deepcopy(self.actions),
            "shown": _keys(self.shown),
            "outcome": copy.deepcopy(self.outcome),
        }

    @classmethod
    def from_data(cls, data: Data) -> _Hand:
        return cls(
            number=int(data["number"]),
            dealer=int(data["dealer"]),
            players=[int(s) for s in data["players"]],
            deck=[str(c) for c in data["deck"]],
            hole=_seats(data["hole"]),
            board=list(data["board"]),
            burns=list(data["burns"]),
            street=str(data["street"]),
            in_hand=[int(s) for s in data["in_hand"]],
            folded=[int(s) for s in data["folded"]],
            queue=[int(s) for s in data["queue"]],
            all_in=None if data["all_in"] is None else int(data["all_in"]),
            callers=[int(s) for s in data["callers"]],
            actions=copy.deepcopy(list(data["actions"])),
            shown=_seats(data["shown"]),
            outcome=copy.deepcopy(data["outcome"]),
        )


class LocoPoker(Engine):
    """A Loco Poker match (see the module docstring for the full rules,
    actions, events and dealing order)."""

    game = "loco_poker"
    min_seats = 2
    max_seats = 8
    title = "Loco Poker"
    options_spec = (
        Option("points_to_win", 3, "int", "points that win the match", "LO-6", min=1, max=MAX_POINTS),
        Option("multi_call", "best_hand", "choice", "when several players call an all-in: one showdown for all, or a "
               "duel with each caller",
               "LO-4", choices=MULTI_CALL),
        Option("dealer", None, "seat", "the seat that deals the first hand; automatic: a random seat; a rematch "
               "starts one seat further on (G-7)", "LO-1", nullable=True),
    )
    default_options = defaults(options_spec)

    def __init__(self, seats: Sequence[int], options: Data, rng: RandomSource) -> None:
        self.seats: list[int] = sorted(seats)
        self.options: Data = dict(options)
        self.rng = rng
        #: new | betting | calling | street | showdown | hand | over
        self.phase = "new"
        self.alive: list[int] = list(self.seats)
        self.points: dict[int, int] = {s: 0 for s in self.seats}
        #: [{"hand": n, "seats": [...]}] in the order players were knocked out
        self.knockouts: list[Data] = []
        self.dealer: int | None = None
        self.hand_number = 0
        self.hand: _Hand | None = None
        self.last_record: Data | None = None
        self._result: Data | None = None

    # -- construction -------------------------------------------------------
    @classmethod
    def new(cls, seats: Sequence[int], options: Mapping[str, Any] | None, rng: RandomSource) -> Self:
        """A match for ``seats`` (2 to 8 distinct seat numbers >= 1, LO-1).

        Raises ValueError naming ``seats`` or the bad option.
        """
        seat_list = list(seats)
        if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in seat_list):
            raise ValueError("seats must be seat numbers >= 1 (G-1)")
        if len(set(seat_list)) != len(seat_list):
            raise ValueError("seats must be distinct")
        if not cls.min_seats <= len(seat_list) <= cls.max_seats:
            raise ValueError(f"seats: loco_poker takes {cls.min_seats} to {cls.max_seats} players (LO-1)")
        opts = cls.resolve_options(options)
        dealer = opts["dealer"]
        if dealer is not None and dealer not in seat_list:
            raise ValueError("dealer must be one of the seats, or None for a random first dealer (LO-1)")
        return cls(seat_list, opts, rng)

    # -- questions ----------------------------------------------------------
    @property
    def to_act(self) -> int | None:
        if self.phase in ("betting", "calling") and self.hand is not None:
            return self.hand.queue[0]
        return None

    @property
    def pending(self) -> str | None:
        return _PENDING.get(self.phase)

    @property
    def finished(self) -> bool:
        return self.phase == "over"

    def in_match(self, seat: int) -> bool:
        """False once ``seat`` is knocked out (LO-6)."""
        return seat in self.alive

    def legal_actions(self) -> list[LegalAction]:
        """``check``/``fold``/``all_in`` with no all-in pending, ``call``/``fold``
        against one (LO-2, LO-3); empty when nobody is to act."""
        if self.phase == "betting":
            return [LegalAction("check"), LegalAction("fold"), LegalAction("all_in")]
        if self.phase == "calling":
            return [LegalAction("call"), LegalAction("fold")]
        return []

    def result(self) -> Data | None:
        """None until finished; then ``{"ranking": [[seat, ...], ...] best first,
        "winners": [seat], "loser": [seats knocked out first] (absent when
        nobody was knocked out), "points": {seat: points}, "hands": n}``.

        Ranking: the winner; the other players still in by points, most first
        (equal points share a place); then the knocked-out players, the last
        knocked out first (those of one hand share a place) (LO-6).
        """
        return copy.deepcopy(self._result)

    def timeout_action(self, seat: int) -> Data:
        """Check if ``seat`` may check, else fold (RULES G-3, Loco Poker)."""
        if seat == self.to_act and self.phase == "betting":
            return {"type": "check"}
        return {"type": "fold"}

    def view(self, viewer: int | None) -> Data:
        """The match as ``viewer`` (a seat, or None for a spectator) may see it.

        Everyone: game, options, seats, alive, knocked_out [{hand, seats}],
        points {seat: n}, dealer, hand (number), street, board, players (dealt
        in), in_hand (not folded), folded, cards_in_hand {seat: 2}, all_in
        (seat or None), callers, actions of this hand, shown {seat: cards}
        (hands shown at this hand's showdown), outcome of this hand (once
        over), to_act, pending, finished, result. ``viewer`` and
        ``hole_cards``: the viewer's own hole cards this hand, None for a
        spectator or a player not dealt in. Never the deck, the burns or
        anyone else's unshown cards.
        """
        hand = self.hand
        out: Data = {
            "game": self.game,
            "viewer": viewer,
            "options": dict(self.options),
            "seats": list(self.seats),
            "alive": list(self.alive),
            "knocked_out": copy.deepcopy(self.knockouts),
            "points": _keys(self.points),
            "dealer": self.dealer,
            "hand": self.hand_number,
            "to_act": self.to_act,
            "pending": self.pending,
            "finished": self.finished,
            "result": self.result(),
            "hole_cards": None,
        }
        if hand is None:
            out.update(street=None, board=[], players=[], in_hand=[], folded=[], cards_in_hand={},
                       all_in=None, callers=[], actions=[], shown={}, outcome=None)
            return out
        out.update(
            street=hand.street,
            board=list(hand.board),
            players=list(hand.players),
            in_hand=list(hand.in_hand),
            folded=list(hand.folded),
            cards_in_hand={str(s): len(hand.hole[s]) for s in hand.in_hand},
            all_in=hand.all_in,
            callers=list(hand.callers),
            actions=copy.deepcopy(hand.actions),
            shown=_keys(hand.shown),
            outcome=copy.deepcopy(hand.outcome),
        )
        if viewer is not None and viewer in hand.hole:
            out["hole_cards"] = list(hand.hole[viewer])
        return out

    def audit(self) -> Data:
        """Every card of the 52-card deck is in exactly one place: the undealt
        deck, hole cards (folded ones included), board or burns (LO-1).
        ``counted`` is the number of distinct cards found, so a lost or
        duplicated card shows as ``counted < expected``."""
        hand = self.hand
        if hand is None:
            return {"unit": "cards", "expected": 52, "counted": 52, "where": {"deck": 52}}
        places = {"deck": hand.deck, "hole": [c for cards in hand.hole.values() for c in cards],
                  "board": hand.board, "burns": hand.burns}
        every = [c for cards in places.values() for c in cards]
        distinct = len(set(every))
        counted = distinct - (len(every) - distinct)  # each duplicate counts against
        return {"unit": "cards", "expected": 52, "counted": counted,
                "where": {name: len(cards) for name, cards in places.items()}}

    def hand_record(self) -> Data | None:
        """The last completed hand: hand, dealer, players, hole {seat: cards}
        (folded hands included), burns, board, actions, all_in, callers, shown,
        outcome (as in ``hand_end``), points after the hand. None before the
        first hand ends. Never sent to a client before the match ends."""
        return copy.deepcopy(self.last_record)

    # -- inputs -------------------------------------------------------------
    def start(self) -> list[Event]:
        """Choose the first dealer (option, else at random, LO-1) and deal hand 1."""
        if self.phase != "new":
            raise IllegalAction("already_started", "the match has already started", "LO-1")
        dealer = self.options["dealer"]
        if dealer is None:
            dealer = self.seats[self.rng.randbelow(len(self.seats))]
        self.dealer = dealer
        events = [
            Event({
                "type": "match_start",
                "seats": list(self.seats),
                "dealer": dealer,
                "points_to_win": self.options["points_to_win"],
                "multi_call": self.options["multi_call"],
            })
        ]
        events += self._deal_hand()
        return events

    def apply(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """``seat`` checks, folds, goes all-in or calls (LO-2, LO-3).

        Raises IllegalAction (codes in the module docstring); the state is
        unchanged when it does.
        """
        if self.phase == "new":
            raise IllegalAction("not_started", "the match has not started", RULE)
        if self.phase == "over":
            raise IllegalAction("match_over", "the match is over", RULE)
        if seat != self.to_act:
            who = "nobody" if self.to_act is None else f"seat {self.to_act}"
            raise IllegalAction("not_your_turn", f"seat {seat} may not act now: {who} is to act", RULE)
        if not isinstance(action, Mapping) or not isinstance(action.get("type"), str):
            raise IllegalAction("bad_action", "an action is a map with a string 'type'", RULE)
        extra = set(action) - {"type"}
        if extra:
            raise IllegalAction("bad_action", f"unexpected fields {sorted(map(str, extra))} in a loco_poker action", RULE)
        kind = action["type"]
        if kind not in ACTION_TYPES:
            raise IllegalAction("unknown_action", f"loco_poker has no {kind!r} action: {', '.join(ACTION_TYPES)}", RULE)
        legal = [a.type for a in self.legal_actions()]
        if kind not in legal:
            raise IllegalAction("illegal_action", f"{kind!r} is not legal now; legal: {legal}", RULE)
        hand = self.hand
        assert hand is not None
        hand.queue.pop(0)
        hand.actions.append({"seat": seat, "street": hand.street, "type": kind})
        events = [Event({"type": "action", "hand": hand.number, "street": hand.street, "seat": seat, "action": kind})]
        if kind == "check":
            if not hand.queue:
                events += self._end_street()
        elif kind == "fold":
            hand.in_hand.remove(seat)
            hand.folded.append(seat)
            if self.phase == "calling":
                if not hand.queue:
                    events += self._resolve_all_in()
            elif len(hand.in_hand) == 1:
                events += self._end_hand({"result": "folded_around", "scored": None, "knocked_out": []})
            elif not hand.queue:
                events += self._end_street()
        elif kind == "all_in":
            hand.all_in = seat
            hand.queue = [s for s in clockwise(hand.in_hand, after=seat) if s != seat]
            self.phase = "calling"
        else:  # call
            hand.callers.append(seat)
            if not hand.queue:
                events += self._resolve_all_in()
        return events

    def advance(self) -> list[Event]:
        """Deal the next street, settle the showdown, or deal the next hand
        (whichever ``pending`` names); raises IllegalAction ``nothing_pending``."""
        if self.phase == "street":
            return self._deal_street()
        if self.phase == "showdown":
            return self._showdown()
        if self.phase == "hand":
            assert self.dealer is not None
            self.dealer = next_seat(self.seats, self.dealer, eligible=set(self.alive))
            return self._deal_hand()
        raise IllegalAction("nothing_pending", "no dealer step is pending", "LO-1")

    # -- the hand -----------------------------------------------------------
    def _deal_hand(self) -> list[Event]:
        """Shuffle, deal two hole cards each one at a time from left of the
        dealer (module docstring), open the preflop betting."""
        assert self.dealer is not None
        deck = standard_deck()
        self.rng.shuffle(deck)
        self.hand_number += 1
        players = clockwise(self.alive, after=self.dealer)
        n = len(players)
        hole = {s: [deck[k], deck[n + k]] for k, s in enumerate(players)}
        hand = _Hand(
            number=self.hand_number,
            dealer=self.dealer,
            players=players,
            deck=deck[2 * n :],
            hole=hole,
            in_hand=list(players),
            queue=list(players),
        )
        self.hand = hand
        self.phase = "betting"
        return [
            Event({"type": "hand_start", "hand": hand.number, "dealer": self.dealer, "players": list(players)}),
            Event(
                {"type": "hole_cards", "hand": hand.number, "counts": {str(s): 2 for s in players}},
                {s: {"cards": list(cards)} for s, cards in hole.items()},
            ),
        ]

    def _end_street(self) -> list[Event]:
        """Everyone still in has checked: the next street waits, or, after the
        river, the hand ends with nobody scoring (seed)."""
        assert self.hand is not None
        if self.hand.street == "river":
            return self._end_hand({"result": "checked_down", "scored": None, "knocked_out": []})
        self.phase = "street"
        return []

    def _deal_street(self) -> list[Event]:
        """Burn one, deal the next street (FL-5 via LO-1); then open its betting,
        or, with a called all-in, wait for the next street or the showdown."""
        hand = self.hand
        assert hand is not None
        street = STREETS[STREETS.index(hand.street) + 1]
        hand.burns.append(hand.deck.pop(0))
        count = STREET_CARDS[street]
        cards, hand.deck = hand.deck[:count], hand.deck[count:]
        hand.board += cards
        hand.street = street
        events = [Event({"type": "street", "hand": hand.number, "street": street, "cards": list(cards),
                         "board": list(hand.board)})]
        if hand.all_in is not None:
            self.phase = "showdown" if street == "river" else "street"
        else:
            hand.queue = list(hand.in_hand)
            self.phase = "betting"
        return events

    def _resolve_all_in(self) -> list[Event]:
        """Every other player has answered the all-in (LO-2): uncalled scores a
        point (seed); called runs the board out to a showdown."""
        hand = self.hand
        assert hand is not None and hand.all_in is not None
        if hand.callers:
            self.phase = "showdown" if hand.street == "river" else "street"
            return []
        seat = hand.all_in
        self.points[seat] += 1
        events = [Event({"type": "point", "hand": hand.number, "seat": seat, "points": self.points[seat]})]
        return events + self._end_hand({"result": "uncalled_all_in", "scored": seat, "knocked_out": []})

    def _showdown(self) -> list[Event]:
        """Show the all-in player's and callers' hands and settle (LO-4, LO-5,
        LO-7)."""
        hand = self.hand
        assert hand is not None and hand.all_in is not None
        shooter = hand.all_in
        shown = [shooter, *hand.callers]
        value = {s: hand_value(hand.hole[s] + hand.board) for s in shown}
        top = max(value.values())
        best = [s for s in shown if value[s] == top]
        for s in shown:
            hand.shown[s] = list(hand.hole[s])
        events = [Event({
            "type": "showdown",
            "hand": hand.number,
            "board": list(hand.board),
            "hands": [{"seat": s, "cards": list(hand.hole[s]), "hand": hand_name(value[s])} for s in shown],
            "best": best,
        })]
        loco = self._loco(shooter, shown, value, best)
        if loco is not None:
            events.append(loco)

        outcome: Data = {"scored": None}
        out: list[int]
        if self.options["multi_call"] == "best_hand":
            if shooter not in best:
                out, outcome["result"] = [shooter], "all_in_lost"
            elif len(best) == 1:
                out, outcome["result"] = list(hand.callers), "all_in_won"
            else:
                out, outcome["result"] = [], "push"
        else:
            duels: list[dict[str, int | None]] = []
            out = []
            beaten = False
            for caller in hand.callers:
                if value[caller] < value[shooter]:
                    out.append(caller)
                    duels.append({"seat": caller, "winner": shooter})
                elif value[caller] > value[shooter]:
                    beaten = True
                    duels.append({"seat": caller, "winner": caller})
                else:
                    duels.append({"seat": caller, "winner": None})
            if beaten:
                out.insert(0, shooter)
            outcome["result"] = "all_in_lost" if beaten else "all_in_won" if out else "push"
            outcome["duels"] = duels
        outcome["knocked_out"] = out
        if out:
            events.append(self._knock_out(out))
        return events + self._end_hand(outcome)

    def _loco(self, shooter: int, shown: list[int], value: Mapping[int, Any], best: list[int]) -> Event | None:
        """The ``loco`` event (LO-7), or None: the players holding the best hand
        after the turn (best five of hole cards + flop + turn; several when tied)
        all lose the showdown. ``best_hand``: a leader loses unless it holds the
        best hand at the showdown (alone or shared); ``beaten_by`` = the seats
        holding it. ``duels``: a leader loses only when it loses its own duel: a
        caller, when the all-in player ``shooter`` beats it; the all-in player,
        when a caller beats it (a tied duel is a push, not a loss); ``beaten_by``
        = the seats that beat a leader, in showdown order. ``shown``: the all-in
        player then the callers in call order; ``value``: seat -> seven-card value."""
        hand = self.hand
        assert hand is not None
        at_turn = {s: hand_value(hand.hole[s] + hand.board[:4]) for s in shown}
        turn_top = max(at_turn.values())
        leaders = [s for s in shown if at_turn[s] == turn_top]
        if self.options["multi_call"] == "best_hand":
            if set(leaders) & set(best):
                return None
            beaten_by = list(best)
        else:
            callers = shown[1:]
            beaten_by = []
            for s in leaders:
                if s == shooter:
                    winners = [c for c in callers if value[c] > value[shooter]]
                else:
                    winners = [shooter] if value[shooter] > value[s] else []
                if not winners:
                    return None  # this leader won or pushed its duel
                beaten_by += [w for w in winners if w not in beaten_by]
            beaten_by.sort(key=shown.index)
        return Event({"type": "loco", "hand": hand.number, "seats": leaders, "beaten_by": beaten_by})

    def _knock_out(self, seats: list[int]) -> Event:
        """Remove ``seats`` from the match, points lost (LO-6)."""
        assert self.hand is not None
        for s in seats:
            self.alive.remove(s)
            self.points[s] = 0
        self.knockouts.append({"hand": self.hand.number, "seats": sorted(seats)})
        return Event({"type": "knocked_out", "hand": self.hand.number, "seats": sorted(seats)})

    def _end_hand(self, outcome: Data) -> list[Event]:
        """Record the hand, then wait for the next one or end the match (LO-6)."""
        hand = self.hand
        assert hand is not None
        hand.outcome = outcome
        points = _keys(self.points)
        self.last_record = {
            "hand": hand.number,
            "dealer": hand.dealer,
            "players": list(hand.players),
            "hole": _keys(hand.hole),
            "burns": list(hand.burns),
            "board": list(hand.board),
            "actions": copy.deepcopy(hand.actions),
            "all_in": hand.all_in,
            "callers": list(hand.callers),
            "shown": _keys(hand.shown),
            "outcome": copy.deepcopy(outcome),
            "points": points,
        }
        events = [Event({"type": "hand_end", "hand": hand.number, **copy.deepcopy(outcome), "points": dict(points)})]
        ptw = self.options["points_to_win"]
        champions = [s for s in self.alive if self.points[s] >= ptw]
        if len(self.alive) == 1 or champions:
            winner = champions[0] if champions else self.alive[0]
            self._result = self._final_result(winner)
            self.phase = "over"
            events.append(Event({"type": "match_end", **copy.deepcopy(self._result)}))
        else:
            self.phase = "hand"
        return events

    def _final_result(self, winner: int) -> Data:
        """The ``result()`` map once ``winner`` has won (LO-6)."""
        ranking: list[list[int]] = [[winner]]
        others = [s for s in self.alive if s != winner]
        for level in sorted({self.points[s] for s in others}, reverse=True):
            ranking.append([s for s in others if self.points[s] == level])
        for group in reversed(self.knockouts):
            ranking.append(list(group["seats"]))
        out: Data = {"ranking": ranking, "winners": [winner], "points": _keys(self.points),
                     "hands": self.hand_number}
        if self.knockouts:
            out["loser"] = list(self.knockouts[0]["seats"])
        return out

    # -- persistence --------------------------------------------------------
    def to_data(self) -> Data:
        """The whole match as plain data (string seat keys), the random source
        included; ``from_data`` restores it exactly."""
        return {
            "game": self.game,
            "version": STATE_VERSION,
            "seats": list(self.seats),
            "options": dict(self.options),
            "rng": self.rng_to_data(self.rng),
            "phase": self.phase,
            "alive": list(self.alive),
            "points": _keys(self.points),
            "knockouts": copy.deepcopy(self.knockouts),
            "dealer": self.dealer,
            "hand_number": self.hand_number,
            "hand": None if self.hand is None else self.hand.to_data(),
            "last_record": copy.deepcopy(self.last_record),
            "result": copy.deepcopy(self._result),
        }

    @classmethod
    def from_data(cls, data: Data) -> Self:
        """Inverse of :meth:`to_data`; raises ValueError on malformed data."""
        try:
            if data["game"] != cls.game or data["version"] != STATE_VERSION:
                raise ValueError(f"not a loco_poker state of version {STATE_VERSION}")
            phases = ("new", "betting", "calling", "street", "showdown", "hand", "over")
            if data["phase"] not in phases:
                raise ValueError(f"unknown phase {data['phase']!r}")
            self = cls([int(s) for s in data["seats"]], dict(data["options"]), cls.rng_from_data(data["rng"]))
            self.phase = data["phase"]
            self.alive = [int(s) for s in data["alive"]]
            self.points = _seats(data["points"])
            self.knockouts = copy.deepcopy(list(data["knockouts"]))
            self.dealer = None if data["dealer"] is None else int(data["dealer"])
            self.hand_number = int(data["hand_number"])
            self.hand = None if data["hand"] is None else _Hand.from_data(data["hand"])
            self.last_record = copy.deepcopy(data["last_record"])
            self._result = copy.deepcopy(data["result"])
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed loco_poker state: {exc!r}") from exc
        if self.phase in ("betting", "calling") and (self.hand is None or not self.hand.queue):
            raise ValueError("malformed loco_poker state: a turn with nobody to act")
        return self


#: this game's registration (:mod:`cardhall.engine.plugins`)
GAME = GameSpec(
    name="loco_poker", engine=LocoPoker, order=40,
    bots={"threshold": "cardhall.engine.bots.loco_poker:LocoBot"}, default_bot="threshold",
    schema=builtin_schema("loco_poker.json"), rules=builtin_rules("loco_poker"),
    example=Example({"points_to_win": 2}),
    web_renderer="/web/js/games/loco.js", tui_renderer="cardhall.clients.tui.game_loco:TUI",
    quick_options={"points_to_win": 2},
)
