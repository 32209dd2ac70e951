"""Texas Hold'em: the hand flow and the match loop shared by both games.

Fixed-limit (seed ``001_7f6c515034116f6f.txt``, RULES FL-1..FL-9) and no-limit
(seed ``004_5ca5ee4fb1c7c81a.txt``, NL-1..NL-7) subclass :class:`HoldemEngine`
(``cardhall.engine.games.fixed_limit_holdem``, ``cardhall.engine.games.no_limit_holdem``). The
betting itself is :mod:`cardhall.engine.betting`; button and blinds :mod:`cardhall.engine.blinds`;
side pots and odd chips :mod:`cardhall.engine.pots`; hand values :mod:`cardhall.engine.ranking`.

Match
    Hand after hand until one player holds every chip. Each hand the big blind
    moves on (dead button, FL-1/NL-4); players left with no chips are out.
    Blinds double every ``blind_levels`` hands when that option is set (NL-7).
    A rematch (G-7) is a new engine with ``button`` = the next seat.

Options (defaults per RULES; ``ValueError`` names a bad one)
    ==================  =======================================================
    ``starting_stacks`` int (every seat) or list of ints in seat order; FL 500, NL 1000
    ``small_blind``     FL 5, NL 10 (chips)
    ``big_blind``       FL 10, NL 20
    ``ante``            each player, default 0; ``big_blind_ante`` (paid by the
                        big blind, default 0). Antes are posted before blinds.
    ``small_bet``       FL only: 10 (preflop, flop); ``big_bet`` 20 (turn, river)
    ``cap``             FL only: counted bets per round, 4 (FL-2)
    ``min_bet``         NL only: None = the big blind (NL-2)
    ``button``          first button seat; None: FL the lowest seat (seat 1,
                        FL-1), NL drawn at random (NL-4)
    ``profile``         ``"table"`` (RULES.md) or ``"phh"`` (pokerkit 0.7.7's
                        semantics, for hand-history replay)
    ``ante_trimming``   phh only: pokerkit's ``ante_trimming_status``
    ``blind_levels``    hands per level, stakes doubling each level; NL 15, FL None
    ``dead_small_blind`` first hand only, 3+ players: the small blind is dead
                        (its player busted last hand, FL-1), so the first seat
                        left of the button posts the big blind and nobody the
                        small blind; for replaying hands recorded after a
                        bust-out (PHH ``blinds_or_straddles = [bb, 0, ...]``)
    ``item_stakes``     free text shown to everyone, awarded to the winner (NL-6)
    ==================  =======================================================

The two profiles differ only here:

* ``table``: FL-2 (the big blind is the first of the 4 capped bets preflop),
  FL-3 half-bet rule (FL) / NL-3 full-raise rule (NL), FL-4 (a short big
  blind still leaves the full big blind to call), antes count in side pots
  like any chip (FL-6), odd chips one each to the lowest-numbered winners
  (FL-7) or clockwise from the button's left (G-6), showdown order FL-9.
* ``phh``: pokerkit 0.7.7 exactly: the cap counts 4 raises over the blind, the
  amount to call is the largest bet posted, short all-ins as pokerkit counts
  them (:mod:`cardhall.engine.betting`), folding when checking is free is allowed,
  antes go into the main pot (or are trimmed to the second-largest ante when
  ``ante_trimming``), the whole odd-chip remainder of a pot goes to the first
  winner in PHH order, and showdown order starts at the last aggressor of the
  final betting round, else at its first player to act.

Randomness and the deal (G-2, FL-5), in this order: if ``button`` is None
(NL) the first button is ``sorted(seats)[rng.randbelow(len(seats))]``; then
for each hand ``deck = engine.cards.standard_deck()``, ``rng.shuffle(deck)``,
``deck[0]`` is the top. With ``P1..Pn`` the players of the hand clockwise
from the first left of the button (the PHH order; heads-up ``P1`` is the big
blind), ``Pk`` gets ``deck[k-1]`` and ``deck[n+k-1]``; then burn ``deck[2n]``,
flop ``deck[2n+1..2n+3]``, burn, turn ``deck[2n+5]``, burn, river
``deck[2n+7]``, in that order even when the board is run out (FL-8).

Actions (``apply(seat, action)``), amounts in chips
    ============================================  ================================
    ``{"type": "fold"}``                          only facing a bet (``phh``: always)
    ``{"type": "check"}``                         nothing to call
    ``{"type": "call"}``                          match the bet (or all-in for less)
    ``{"type": "bet", "amount": X}``              open; X = total for the street
    ``{"type": "raise", "amount": X}``            X = raise-to total (NL-2); fixed
                                                  limit: X omitted or the fixed total
    ``{"type": "all_in"}``                        the largest bet/raise when that is
                                                  all-in, or a call that is all-in
    ============================================  ================================

    Controls (``control(seat, action)``, any time before the showdown while the
    seat is in the hand): ``{"type": "show"}`` shows the hand at showdown even
    if it cannot win; ``{"type": "muck"}`` (the default) mucks such a hand
    (FL-9). A hand that can win is always shown.

    Errors: :class:`cardhall.engine.base.IllegalAction` with ``code`` and the rule;
    the state is unchanged. Codes: ``not_started``, ``already_started``,
    ``match_over``, ``not_your_turn``, ``bad_action``, ``unknown_action``,
    ``check_available``, ``cannot_check``, ``nothing_to_call``, ``use_bet``,
    ``use_raise``, ``amount_required``, ``bad_amount``, ``amount_too_small``,
    ``amount_too_large``, ``amount_not_fixed``, ``covered``,
    ``nobody_to_raise``, ``cap_reached``, ``not_reopened``,
    ``all_in_not_allowed``, ``nothing_pending``, ``not_in_hand``.

Dealer steps (``pending``; the server pauses, then calls ``advance()``, G-4)
    ``"street"``    a betting round is over (or a run-out street was dealt,
                    FL-8): deal the next street.
    ``"showdown"``  the board is complete and two or more players are in:
                    show (FL-9) and award the pots.
    ``"hand"``      the hand is over: start the next one.

Events (``Event.data`` public; private fields only to the seat named).
Seat-keyed maps use string keys (``"3"``).

    ===============  ==========================================================  ===============
    type             public fields                                               private
    ===============  ==========================================================  ===============
    ``match_start``  ``game``, ``seats``, ``stacks``, ``button``, ``stakes``,      --
                     ``blind_levels``, ``profile``, ``item_stakes``
    ``blind_level``  ``level`` (0 first), ``stakes`` (NL-7), ``hand``            --
    ``hand_start``   ``hand``, ``button``, ``small_blind`` (seat or null: dead),  --
                     ``big_blind``, ``players`` (seats, PHH order), ``stacks``,
                     ``stakes``
    ``blinds``       ``posts``: list of ``{seat, kind (ante, small_blind,        --
                     big_blind, ante_returned (phh ante trimming)), amount,
                     all_in}``, ``stacks`` after
    ``hole_cards``   ``seats`` (dealt, in order), ``count`` (2)                  each seat:
                                                                                 ``cards``
    ``turn``         ``seat`` to act, ``street``                                 --
    ``action``       ``seat``, ``action`` (fold/check/call/bet/raise),           --
                     ``amount`` (chips added), ``total`` (street bet after),
                     ``stack`` (after), ``all_in``, ``pot`` (all chips in the
                     middle, bets included)
    ``uncalled``     ``seat``, ``amount`` returned (FL-6), ``stack``             --
    ``pots``         ``street`` just closed, ``pots``: list of                   --
                     ``{amount, eligible}`` (FL-6)
    ``board``        ``street``, ``cards`` (new), ``board`` (all)                --
    ``show``         ``seat``, ``cards``, ``hand`` (category once the board is   --
                     complete, else null), ``reason`` (``showdown``,
                     ``all_in`` (TDA 16), ``chose``)
    ``muck``         ``seat`` (cards stay hidden, G-2)                           --
    ``award``        ``pot`` (index), ``amount``, ``winners`` {seat: chips},     --
                     ``hand`` (winning category, null uncontested)
    ``hand_end``     ``hand``, ``stacks``, ``net`` {seat: chips won or lost}     --
    ``bust``         ``seats`` out this hand, ``place`` (shared)                 --
    ``match_end``    ``ranking``, ``winners``, ``item_stakes``                   --
    ===============  ==========================================================  ===============
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Self

from cardhall.engine.base import Data, Engine, Event, IllegalAction, LegalAction
from cardhall.engine.betting import BettingRound, BettingRules
from cardhall.engine.blinds import Positions, first_positions, next_positions
from cardhall.engine.cards import CardError, standard_deck, validate
from cardhall.engine.options import MAX_CHIPS, Option
from cardhall.engine.phh import burned_cards
from cardhall.engine.pots import Pot, side_pots, split
from cardhall.engine.ranking import hand_name, hand_value
from cardhall.engine.rng import RandomSource
from cardhall.engine.seats import check_seats

STREETS = ("preflop", "flop", "turn", "river")
_DECK = tuple(standard_deck())
STATE_VERSION = 1
PROFILES = ("table", "phh")

#: options both games share (``Engine.options_spec``); each game adds its stakes, structure and defaults
COMMON_OPTIONS: tuple[Option, ...] = (
    Option("ante", 0, "int", "chips each player antes every hand", min=0, max=MAX_CHIPS),
    Option("big_blind_ante", 0, "int", "chips the big blind antes for everyone every hand", min=0,
           max=MAX_CHIPS),
    Option("button", None, "seat", "the first button's seat; null: the game's rule (FL-1 lowest seat, NL-4 drawn)",
           "FL-1", nullable=True),
    Option("profile", "table", "choice", "'phh': pokerkit 0.7.7 semantics, for hand-history replay",
           choices=PROFILES),
    Option("ante_trimming", False, "bool", "pokerkit's ante trimming (phh profile only)"),
    Option("item_stakes", None, "text", "free text shown to everyone and awarded to the winner; null: none",
           "NL-6", max=200, nullable=True),
    Option("dead_small_blind", False, "bool",
           "first hand, 3+ players: the small blind is dead (replaying hands recorded after a bust-out)", "FL-1"),
)


def holdem_options(*structure: Option) -> tuple[Option, ...]:
    """A Hold'em game's ``options_spec``: stacks and blinds, ``structure``
    (the game's betting options and its ``blind_levels``), then
    :data:`COMMON_OPTIONS`."""
    return structure + COMMON_OPTIONS

_HAND_FIELDS = (
    "number", "players", "button", "small_blind", "big_blind", "stakes", "blinds", "antes_nominal",
    "start", "stacks", "folded", "contrib", "antes", "hole", "deck", "next_card", "board", "street",
    "shown", "show_pref", "revealed", "actions", "aggressor", "finish", "over",
)


class Hand:
    """One hand's state, indexed by PHH player index (0 = first left of the
    button). ``stacks``/``contrib`` are settled at the end of each betting
    round; during a round :attr:`round` holds the live stacks and bets."""

    __slots__ = _HAND_FIELDS + ("round",)

    number: int
    players: list[int]
    button: int
    small_blind: int | None
    big_blind: int
    stakes: Data
    blinds: list[int]
    antes_nominal: list[int]
    start: list[int]
    stacks: list[int]
    folded: list[bool]
    contrib: list[int]
    antes: list[int]
    hole: list[list[str]]
    deck: list[str]
    next_card: int
    board: list[str]
    street: int
    shown: list[bool]
    show_pref: list[bool]
    revealed: bool
    actions: list[str]
    aggressor: int | None
    finish: list[int] | None
    over: bool
    round: BettingRound | None

    def to_data(self, copy: bool = True) -> Data:
        """Plain data; ``copy=False`` shares the hand's lists (``Engine.state_data``)."""
        if not copy:
            out: Data = {name: getattr(self, name) for name in _HAND_FIELDS}
            out["round"] = self.round.to_data(False) if self.round is not None else None
            return out
        out = {}
        for name in _HAND_FIELDS:
            value = getattr(self, name)
            if isinstance(value, list):
                value = [list(v) if isinstance(v, list) else v for v in value]
            elif isinstance(value, dict):
                value = dict(value)
            out[name] = value
        out["round"] = self.round.to_data() if self.round is not None else None
        return out

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Hand:
        self = cls.__new__(cls)
        for name in _HAND_FIELDS:
            value = data[name]
            if isinstance(value, (list, tuple)):
                value = [list(v) if isinstance(v, (list, tuple)) else v for v in value]
            elif isinstance(value, Mapping):
                value = dict(value)
            setattr(self, name, value)
        self.round = BettingRound.from_data(data["round"]) if data["round"] is not None else None
        return self


class HoldemEngine(Engine):
    """A Hold'em match (see the module docstring). Subclasses set ``game``,
    ``variant`` (PHH ``"FT"``/``"NT"``), ``max_seats``, ``default_options`` and
    the betting-structure hooks."""

    variant: ClassVar[str]
    fixed: ClassVar[bool]

    def __init__(self, seats: Sequence[int], options: Data, rng: RandomSource) -> None:
        self.seats: list[int] = sorted(seats)
        self.options = options
        self.rng = rng
        self.phh = options["profile"] == "phh"
        self.rules: BettingRules = self._betting_rules()
        self.chips: dict[int, int] = dict(zip(self.seats, options["starting_stacks"]))
        self.total_chips = sum(self.chips.values())
        self.hand_number = 0
        self.first_button: int | None = options["button"]
        self.positions: Positions | None = None
        self.level = 0
        self.eliminated: list[list[int]] = []
        self.started = False
        self.is_finished = False
        self._pending: str | None = None
        self.hand: Hand | None = None

    # -- hooks for the two games --------------------------------------------
    def _betting_rules(self) -> BettingRules:
        raise NotImplementedError

    def _round_size(self, street: int, stakes: Data) -> int:
        """The fixed bet (FL) or minimum bet (NL) of ``street``."""
        raise NotImplementedError

    def _cap(self) -> int | None:
        return None

    def _preflop_count(self) -> int:
        """Bets counted toward the cap when preflop betting opens (FL-2)."""
        return 0

    def _odd_chip_order(self, hand: Hand) -> list[int]:
        """Seats in the order odd chips are handed out (G-6 by default)."""
        return list(hand.players)

    def _stakes(self, level: int) -> Data:
        """The stakes at blind ``level`` (0 first): every amount doubled per level
        (NL-7), chips. A doubled amount stops rising at twice the chips in play
        (or at its level-0 value, when that is more): a blind, ante or bet of
        that size already takes every stack all-in and no all-in reaches half
        of it (FL-3), so play is the same as with the amount doubled further,
        and the numbers stay bounded however long a match lasts."""
        o = self.options
        limit = 2 * self.total_chips
        m = 1 << min(level, limit.bit_length() + 1)  # past this, any amount of 1 chip or more is over ``limit``
        stakes = {name: o[name] * m for name in ("small_blind", "big_blind", "ante", "big_blind_ante")}
        stakes.update(self._structure_stakes(m))
        if level:
            base = self._stakes(0)
            stakes = {name: min(amount, max(base[name], limit)) for name, amount in stakes.items()}
        return stakes

    def _structure_stakes(self, multiple: int) -> Data:
        """The betting structure's amounts at ``multiple`` times the options'."""
        raise NotImplementedError

    def _record_stakes(self, hand: Hand) -> Data:
        raise NotImplementedError

    # -- construction ---------------------------------------------------------
    @classmethod
    def new(cls, seats: Sequence[int], options: Mapping[str, Any] | None, rng: RandomSource) -> Self:
        """A match for ``seats`` (distinct numbers >= 1, ``min_seats``..``max_seats``).
        Raises ValueError naming the option at fault."""
        opts = cls.resolve_options(options)
        seat_list = check_seats(seats, cls.min_seats, cls.max_seats)
        stacks = opts["starting_stacks"]  # checked by resolve_options: an int >= 1 or a list of them
        if isinstance(stacks, int):
            stacks = [stacks] * len(seat_list)
        if len(stacks) != len(seat_list):
            raise ValueError("starting_stacks: a positive int or one positive int per seat, in seat order")
        opts["starting_stacks"] = list(stacks)

        if opts["small_blind"] > opts["big_blind"]:
            raise ValueError("small_blind: must not exceed big_blind")
        if opts["button"] is not None and opts["button"] not in seat_list:
            raise ValueError("button: must be one of the seats or None")
        if opts["ante_trimming"] and opts["profile"] != "phh":
            raise ValueError("ante_trimming: only under the phh profile")
        return cls(seat_list, opts, rng)

    # -- inputs ---------------------------------------------------------------
    def start(self) -> list[Event]:
        """Choose the first button (NL-4: at random unless given), deal hand 1."""
        if self.started:
            raise IllegalAction("already_started", "the match has already started", "G-9")
        self.started = True
        if self.first_button is None:
            self.first_button = self._default_button()
        events = [
            Event(
                {
                    "type": "match_start",
                    "game": self.game,
                    "seats": list(self.seats),
                    "stacks": {str(s): c for s, c in self.chips.items()},
                    "button": self.first_button,
                    "stakes": self._stakes(0),
                    "blind_levels": self.options["blind_levels"],
                    "profile": self.options["profile"],
                    "item_stakes": self.options["item_stakes"],
                }
            )
        ]
        events += self._start_hand()
        return events

    def _default_button(self) -> int:
        return self.seats[self.rng.randbelow(len(self.seats))]

    def apply(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """Apply ``seat``'s betting action (module docstring); raises
        :class:`IllegalAction` with the state unchanged."""
        hand = self.hand
        r = hand.round if hand is not None else None
        if r is None or r.to_act is None or self._pending is not None:
            self._no_turn()
        assert hand is not None and r is not None
        i = r.queue[0]
        if seat != hand.players[i]:
            raise IllegalAction("not_your_turn", f"it is seat {hand.players[i]}'s turn, not seat {seat}'s", "G-1")
        if type(action) is not dict and not isinstance(action, Mapping):
            raise IllegalAction("bad_action", "an action is a map with a string 'type'")
        kind = action.get("type")
        if type(kind) is not str:
            raise IllegalAction("bad_action", "an action is a map with a string 'type'")
        amount = action.get("amount")
        if amount is not None and type(amount) is not int:
            raise IllegalAction("bad_amount", f"amount must be a whole number of chips, not {amount!r}", self.rules.amount_rule)
        move = r.act(kind, amount)
        kind = move.kind
        if kind == "fold":
            hand.actions.append(f"p{i + 1} f")
        elif kind == "check" or kind == "call":
            hand.actions.append(f"p{i + 1} cc")
        else:
            hand.actions.append(f"p{i + 1} cbr {move.total}")
        events = [
            Event(
                {
                    "type": "action",
                    "seat": seat,
                    "action": kind,
                    "amount": move.added,
                    "total": move.total,
                    "stack": r.stacks[i],
                    "all_in": move.all_in,
                    "pot": sum(hand.contrib) + sum(r.bets),
                }
            )
        ]
        if r.queue:
            events.append(Event({"type": "turn", "seat": hand.players[r.queue[0]], "street": STREETS[hand.street]}))
        else:
            events += self._close_round()
        return events

    def _no_turn(self) -> None:
        if not self.started:
            raise IllegalAction("not_started", "the match has not started", "G-9")
        if self.is_finished:
            raise IllegalAction("match_over", "the match is over", "G-7")
        raise IllegalAction("not_your_turn", f"nobody is to act (waiting for the dealer: {self._pending})", "G-4")

    def advance(self) -> list[Event]:
        """Deal the next street, run the showdown, or start the next hand."""
        pending = self._pending
        if pending is None:
            raise IllegalAction("nothing_pending", "there is no dealer step to take", "G-4")
        self._pending = None
        if pending == "hand":
            return self._start_hand()
        if pending == "street":
            return self._deal_street()
        return self._showdown()

    def control(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """``{"type": "show"}`` / ``{"type": "muck"}``: whether ``seat`` shows a
        hand that cannot win at this hand's showdown (FL-9). Returns no events
        (the choice is private until the showdown)."""
        if not isinstance(action, Mapping) or action.get("type") not in ("show", "muck"):
            raise IllegalAction("unknown_action", "controls are {'type': 'show'} and {'type': 'muck'}", "FL-9")
        hand = self.hand
        if hand is None or hand.over or not self.started:
            raise IllegalAction("not_in_hand", "no hand is in progress", "FL-9")
        if seat not in hand.players:
            raise IllegalAction("not_in_hand", f"seat {seat} is not dealt in", "FL-9")
        i = hand.players.index(seat)
        if self._folded(i):
            raise IllegalAction("not_in_hand", f"seat {seat} has folded", "FL-9")
        hand.show_pref[i] = action["type"] == "show"
        return []

    # -- questions --------------------------------------------------------------
    @property
    def to_act(self) -> int | None:
        hand = self.hand
        if hand is None or hand.round is None or self._pending is not None or self.is_finished:
            return None
        i = hand.round.to_act
        return None if i is None else hand.players[i]

    @property
    def pending(self) -> str | None:
        return self._pending

    @property
    def finished(self) -> bool:
        return self.is_finished

    def in_match(self, seat: int) -> bool:
        """False once ``seat`` busted (no chips at a hand's end)."""
        return not any(seat in group for group in self.eliminated)

    @property
    def button(self) -> int | None:
        """The current hand's button seat (None before the first hand)."""
        return self.positions.button if self.positions else None

    def legal_actions(self) -> list[LegalAction]:
        """What ``to_act`` may do (amounts: raise-to totals for bet/raise/all_in,
        chips added for call); empty when nobody is to act."""
        if self.to_act is None:
            return []
        assert self.hand is not None and self.hand.round is not None
        return self.hand.round.legal()

    def stacks(self) -> dict[int, int]:
        """Seat -> chips behind (during a hand: not counting chips already bet)."""
        out = dict(self.chips)
        hand = self.hand
        if hand is not None and not hand.over:
            live = hand.round.stacks if hand.round is not None else hand.stacks
            for i, s in enumerate(hand.players):
                out[s] = live[i]
        return out

    def result(self) -> Data | None:
        """None until finished; then ``ranking`` (groups of seats, best first;
        players out in the same hand share a place), ``winners``, ``loser`` (the
        first out), ``hands`` played, ``item_stakes`` (NL-6)."""
        if not self.is_finished:
            return None
        alive = [s for s in self.seats if self.chips[s] > 0]
        ranking = [alive] + [list(g) for g in reversed(self.eliminated)]
        out: Data = {
            "ranking": ranking,
            "winners": list(alive),
            "hands": self.hand_number,
            "item_stakes": self.options["item_stakes"],
        }
        if self.eliminated:
            out["loser"] = list(self.eliminated[0])
        return out

    def timeout_action(self, seat: int) -> Data:
        """RULES G-3: check when checking is free, else fold. Raises
        IllegalAction if ``seat`` is not to act."""
        if self.to_act != seat:
            if self.to_act is None:
                self._no_turn()
            raise IllegalAction("not_your_turn", f"it is seat {self.to_act}'s turn, not seat {seat}'s", "G-1")
        types = {a.type for a in self.legal_actions()}
        return {"type": "check"} if "check" in types else {"type": "fold"}

    def view(self, viewer: int | None) -> Data:
        """The table as ``viewer`` (a seat, or None for a spectator) sees it:
        stacks, bets this street, pots, board, positions, stakes, whose turn,
        the street, cards shown at showdown, and the viewer's own hole cards.
        Never the deck, burns, or hole cards not shown (mucked cards stay
        hidden, G-2)."""
        hand = self.hand
        data: Data = {
            "game": self.game,
            "seats": list(self.seats),
            "started": self.started,
            "finished": self.is_finished,
            "hand": self.hand_number,
            "level": self.level,
            "stakes": self._stakes(self.level),
            "blind_levels": self.options["blind_levels"],
            "item_stakes": self.options["item_stakes"],
            "to_act": self.to_act,
            "pending": self._pending,
            "stacks": {str(s): c for s, c in self.stacks().items()},
            "eliminated": [list(g) for g in self.eliminated],
            "result": self.result(),
        }
        if hand is None:
            return data
        r = hand.round
        n = len(hand.players)
        bets = r.bets if r is not None else [0] * n
        stacks = r.stacks if r is not None else hand.stacks
        folded = [self._folded(i) for i in range(n)]
        data.update(
            {
                "button": hand.button,
                "small_blind": hand.small_blind,
                "big_blind": hand.big_blind,
                "players": list(hand.players),
                "street": None if hand.over else STREETS[hand.street],
                "board": list(hand.board),
                "bets": {str(s): bets[i] for i, s in enumerate(hand.players)},
                "folded": [s for i, s in enumerate(hand.players) if folded[i]],
                "all_in": [s for i, s in enumerate(hand.players) if not folded[i] and stacks[i] == 0],
                "pots": [] if hand.over else [_pot_data(p, hand.players) for p in self._pots(hand, hand.contrib)],
                "pot": 0 if hand.over else sum(hand.contrib) + sum(bets),
                "shown": {str(s): list(hand.hole[i]) for i, s in enumerate(hand.players) if hand.shown[i]},
            }
        )
        if viewer in hand.players:
            i = hand.players.index(viewer)
            data["hole"] = list(hand.hole[i])
            data["show"] = hand.show_pref[i]
        if viewer is not None and viewer == self.to_act:
            data["legal"] = [a.to_data() for a in self.legal_actions()]
        return data

    def audit(self) -> Data:
        """Chip conservation: stacks behind + bets this round + the pot equal the
        chips the match started with."""
        hand = self.hand
        where = {"stacks": 0, "bets": 0, "pot": 0}
        if hand is None or hand.over:
            where["stacks"] = sum(self.chips.values())
        else:
            r = hand.round
            where["stacks"] = sum(self.stacks().values())
            where["bets"] = sum(r.bets) if r is not None else 0
            where["pot"] = sum(hand.contrib)
        return {"unit": "chips", "expected": self.total_chips, "counted": sum(where.values()), "where": where}

    # -- the hand ---------------------------------------------------------------
    def _start_hand(self) -> list[Event]:
        events: list[Event] = []
        alive = [s for s in self.seats if self.chips[s] > 0]
        alive_set = set(alive)
        dead_small_blind = False
        if self.positions is None:
            assert self.first_button is not None
            positions = first_positions(alive, self.first_button)
            if self.options["dead_small_blind"] and len(alive) >= 3:
                # FL-1: the dead small blind's position lies between the button and
                # the big blind, so the next hand's button (the seat that "had the
                # small blind") deals from the same place: record the button there
                dead_small_blind = True
                positions = Positions(positions.button, positions.button, positions.small_blind)
        else:
            positions = next_positions(self.seats, self.positions, alive_set)
        self.positions = positions
        self.hand_number += 1
        levels = self.options["blind_levels"]
        level = (self.hand_number - 1) // levels if levels else 0
        stakes = self._stakes(level)
        if level != self.level:
            self.level = level
            events.append(Event({"type": "blind_level", "level": level, "stakes": stakes, "hand": self.hand_number}))
        players = positions.order(alive_set, self.seats)
        n = len(players)
        index = {s: i for i, s in enumerate(players)}
        bb_i = index[positions.big_blind]
        sb_i = None if dead_small_blind or positions.small_blind not in alive_set else index[positions.small_blind]
        hand = Hand.__new__(Hand)
        hand.number = self.hand_number
        hand.players = players
        hand.button = positions.button
        hand.small_blind = None if sb_i is None else positions.small_blind
        hand.big_blind = positions.big_blind
        hand.stakes = stakes
        start = [self.chips[s] for s in players]
        hand.start = start
        stacks = list(start)
        # antes first (pokerkit's order), then blinds: each at most what is left
        ante = stakes["ante"]
        antes_nominal = [ante] * n
        antes_nominal[bb_i] += stakes["big_blind_ante"]
        antes = [a if a < s else s for a, s in zip(antes_nominal, stacks)]
        # phh ante trimming (pokerkit): an ante above the second-largest is cut
        # back to it, but each blind is still limited by the stack left after
        # the untrimmed ante
        trimmed = antes
        if self.options["ante_trimming"]:
            cutoff = sorted(antes)[-2]
            trimmed = [a if a < cutoff else cutoff for a in antes]
        blinds = [0] * n
        if sb_i is not None:
            blinds[sb_i] = stakes["small_blind"]
        blinds[bb_i] = stakes["big_blind"]
        posted = [0] * n
        posts: list[Data] = []
        for i in range(n):
            a = antes[i]
            if a:
                stacks[i] -= a
                posts.append({"seat": players[i], "kind": "ante", "amount": a, "all_in": stacks[i] == 0})
        for i in ([sb_i] if sb_i is not None else []) + [bb_i]:
            b = blinds[i] if blinds[i] < stacks[i] else stacks[i]
            posted[i] = b
            stacks[i] -= b
            posts.append(
                {"seat": players[i], "kind": "small_blind" if i == sb_i else "big_blind", "amount": b, "all_in": stacks[i] == 0}
            )
        if trimmed is not antes:
            for i in range(n):
                back = antes[i] - trimmed[i]
                if back:
                    stacks[i] += back
                    posts.append({"seat": players[i], "kind": "ante_returned", "amount": back, "all_in": False})
            antes = trimmed
        hand.blinds = blinds
        hand.antes_nominal = antes_nominal
        hand.antes = antes
        hand.contrib = list(antes)
        hand.stacks = stacks
        hand.folded = [False] * n
        deck = list(_DECK)  # engine.cards.standard_deck(), canonical order
        self.rng.shuffle(deck)
        hand.deck = deck
        hand.hole = [[deck[i], deck[n + i]] for i in range(n)]
        hand.next_card = 2 * n
        hand.board = []
        hand.street = 0
        hand.shown = [False] * n
        hand.show_pref = [False] * n
        hand.revealed = False
        hand.actions = [f"d dh p{i + 1} {c[0]}{c[1]}" for i, c in enumerate(hand.hole)]
        hand.aggressor = None
        hand.finish = None
        hand.over = False
        hand.round = None
        self.hand = hand
        events.append(
            Event(
                {
                    "type": "hand_start",
                    "hand": self.hand_number,
                    "button": positions.button,
                    "small_blind": hand.small_blind,
                    "big_blind": positions.big_blind,
                    "players": list(players),
                    "stacks": {str(s): c for s, c in zip(players, start)},
                    "stakes": stakes,
                }
            )
        )
        events.append(Event({"type": "blinds", "posts": posts, "stacks": {str(s): c for s, c in zip(players, stacks)}}))
        events.append(
            Event(
                {"type": "hole_cards", "seats": list(players), "count": 2},
                {s: {"cards": list(hand.hole[i])} for i, s in enumerate(players)},
            )
        )
        # preflop: first to act is left of the big blind (heads-up: the button);
        # phh: left of the largest blind posted, as pokerkit opens
        if self.phh:
            top = max(range(n), key=lambda i: (posted[i] if blinds[i] else 0, i))
            first = (top + 1) % n
        else:
            first = (bb_i + 1) % n
        hand.round = BettingRound.begin(
            self.rules,
            stacks,
            posted,
            hand.folded,
            first=first,
            size=self._round_size(0, stakes),
            cap=self._cap(),
            level=stakes["big_blind"],
            count=self._preflop_count(),
        )
        hand.aggressor = None
        if hand.round.queue:
            events.append(Event({"type": "turn", "seat": players[hand.round.queue[0]], "street": "preflop"}))
        else:
            events += self._close_round()
        return events

    def _folded(self, i: int) -> bool:
        hand = self.hand
        assert hand is not None
        return hand.round.folded[i] if hand.round is not None else hand.folded[i]

    def _close_round(self) -> list[Event]:
        hand = self.hand
        assert hand is not None and hand.round is not None
        r = hand.round
        events: list[Event] = []
        back = r.return_uncalled()
        if back is not None:
            i, chips = back
            events.append(Event({"type": "uncalled", "seat": hand.players[i], "amount": chips, "stack": r.stacks[i]}))
        hand.stacks = r.stacks
        hand.folded = r.folded
        contrib = hand.contrib
        for i, b in enumerate(r.bets):
            contrib[i] += b
        hand.aggressor = r.aggressor
        hand.round = None
        live = [i for i, f in enumerate(hand.folded) if not f]
        if len(live) == 1:
            return events + self._win_uncontested(live[0])
        events.append(
            Event({"type": "pots", "street": STREETS[hand.street], "pots": [_pot_data(p, hand.players) for p in self._pots(hand, contrib)]})
        )
        with_chips = sum(1 for i in live if hand.stacks[i])
        all_in = with_chips < len(live)
        if not hand.revealed and all_in and (with_chips <= 1 or hand.street == 3):
            # FL-9 / TDA 16: once a player is all-in and betting is over, all hands face up
            hand.revealed = True
            events += self._reveal_all(self._showdown_order(hand, r, live))
        self._pending = "showdown" if hand.street == 3 else "street"
        return events

    def _deal_street(self) -> list[Event]:
        hand = self.hand
        assert hand is not None
        hand.street += 1
        street = hand.street
        count = 3 if street == 1 else 1
        k = hand.next_card + 1  # FL-5: burn one card first
        cards = hand.deck[k : k + count]
        hand.next_card = k + count
        hand.board.extend(cards)
        hand.actions.append("d db " + "".join(cards))
        events = [Event({"type": "board", "street": STREETS[street], "cards": list(cards), "board": list(hand.board)})]
        live_with_chips = sum(1 for i, f in enumerate(hand.folded) if not f and hand.stacks[i])
        if live_with_chips <= 1:  # FL-8: no betting, run the board out
            self._pending = "showdown" if street == 3 else "street"
            return events
        hand.round = BettingRound.begin(
            self.rules,
            hand.stacks,
            None,
            hand.folded,
            first=0,
            size=self._round_size(street, hand.stakes),
            cap=self._cap(),
        )
        if hand.round.queue:
            events.append(Event({"type": "turn", "seat": hand.players[hand.round.queue[0]], "street": STREETS[street]}))
            return events
        return events + self._close_round()

    def _showdown_order(self, hand: Hand, r: BettingRound, live: list[int]) -> list[int]:
        """FL-9: from the last bettor or raiser of the final betting round, else
        the first left of the button (``phh``: that round's first to act, as
        pokerkit's opener), then clockwise; live players only."""
        n = len(hand.players)
        start = r.aggressor
        if start is None:
            start = 0
            if self.phh and hand.street == 0:
                blinds = hand.blinds
                top = max(range(n), key=lambda i: (r.bets[i] if blinds[i] else 0, i))
                start = (top + 1) % n
        live_set = set(live)
        return [j for j in ((start + k) % n for k in range(n)) if j in live_set]

    def _reveal_all(self, order: list[int]) -> list[Event]:
        hand = self.hand
        assert hand is not None
        events = []
        complete = len(hand.board) == 5
        for i in order:
            hand.shown[i] = True
            cards = hand.hole[i]
            hand.actions.append(f"p{i + 1} sm {cards[0]}{cards[1]}")
            name = hand_name(hand_value(cards + hand.board)) if complete else None
            events.append(Event({"type": "show", "seat": hand.players[i], "cards": list(cards), "hand": name, "reason": "all_in"}))
        return events

    def _pots(self, hand: Hand, contrib: list[int], live: list[int] | None = None) -> list[Pot]:
        """Side pots by contribution level (FL-6) among ``live`` (default: the
        players who have not folded), as player indices; under ``phh`` without
        ante trimming the antes all go to the main pot, open to every live
        player (pokerkit)."""
        if live is None:
            folded = hand.round.folded if hand.round is not None else hand.folded
            live = [i for i, f in enumerate(folded) if not f]
        if not self.phh or self.options["ante_trimming"] or not any(hand.antes):
            return side_pots(dict(enumerate(contrib)), live)
        antes = sum(hand.antes)
        rest = side_pots({i: c - a for i, (c, a) in enumerate(zip(contrib, hand.antes))}, live)
        pots = [Pot(antes, tuple(live))] + rest
        merged: list[Pot] = []
        for pot in pots:
            if merged and merged[-1].eligible == pot.eligible:
                merged[-1] = Pot(merged[-1].amount + pot.amount, pot.eligible)
            else:
                merged.append(pot)
        return merged

    def _win_uncontested(self, winner: int) -> list[Event]:
        hand = self.hand
        assert hand is not None
        amount = sum(hand.contrib)
        hand.stacks[winner] += amount
        seat = hand.players[winner]
        events = [Event({"type": "award", "pot": 0, "amount": amount, "winners": {str(seat): amount}, "hand": None})]
        return events + self._end_hand()

    def _showdown(self) -> list[Event]:
        hand = self.hand
        assert hand is not None
        events: list[Event] = []
        n = len(hand.players)
        live = [i for i in range(n) if not hand.folded[i]]
        board = hand.board
        values = {i: hand_value(hand.hole[i] + board) for i in live}
        pots = self._pots(hand, hand.contrib)
        if not hand.revealed:
            order = self._showdown_order_final(hand, live)
            best: list[int] = [-1] * len(pots)  # best value shown per pot
            for i in order:
                v = values[i]
                can_win = any(i in p.eligible and v >= best[k] for k, p in enumerate(pots))
                seat = hand.players[i]
                if can_win or hand.show_pref[i]:
                    hand.shown[i] = True
                    cards = hand.hole[i]
                    hand.actions.append(f"p{i + 1} sm {cards[0]}{cards[1]}")
                    events.append(
                        Event(
                            {
                                "type": "show",
                                "seat": seat,
                                "cards": list(cards),
                                "hand": hand_name(v),
                                "reason": "showdown" if can_win else "chose",
                            }
                        )
                    )
                    for k, p in enumerate(pots):
                        if i in p.eligible and v > best[k]:
                            best[k] = v
                else:
                    hand.actions.append(f"p{i + 1} sm")
                    events.append(Event({"type": "muck", "seat": seat}))
        if self.phh:
            # pokerkit forms the pots to award after the showdown: mucked hands
            # drop out, then every hand that cannot win a pot is killed, then
            # the pots are formed again among the rest (equal pots merge); the
            # same players give the same pots, so they are formed only on a change
            shown = [i for i in live if hand.shown[i]]
            if shown != live:
                pots = self._pots(hand, hand.contrib, shown)
            best = [max(values[j] for j in p.eligible) for p in pots]
            alive = [i for i in shown if any(i in p.eligible and values[i] == top for p, top in zip(pots, best))]
            if alive != shown:
                pots = self._pots(hand, hand.contrib, alive)
        odd_order = self._odd_chip_order(hand)
        index = {s: i for i, s in enumerate(hand.players)}
        for k, pot in enumerate(pots):
            top = max(values[i] for i in pot.eligible)
            winners = [i for i in pot.eligible if values[i] == top]
            if self.phh:
                share, rest = divmod(pot.amount, len(winners))
                shares = {i: share for i in winners}
                shares[min(winners)] += rest
            else:
                by_seat = split(pot.amount, [hand.players[i] for i in winners], odd_order)
                shares = {index[s]: c for s, c in by_seat.items()}
            for i, c in shares.items():
                hand.stacks[i] += c
            events.append(
                Event(
                    {
                        "type": "award",
                        "pot": k,
                        "amount": pot.amount,
                        "winners": {str(hand.players[i]): c for i, c in sorted(shares.items())},
                        "hand": hand_name(top),
                    }
                )
            )
        return events + self._end_hand()

    def _showdown_order_final(self, hand: Hand, live: list[int]) -> list[int]:
        n = len(hand.players)
        start = hand.aggressor if hand.aggressor is not None else 0
        live_set = set(live)
        return [j for j in ((start + k) % n for k in range(n)) if j in live_set]

    def _end_hand(self) -> list[Event]:
        hand = self.hand
        assert hand is not None
        hand.over = True
        hand.finish = list(hand.stacks)
        for i, s in enumerate(hand.players):
            self.chips[s] = hand.stacks[i]
        events = [
            Event(
                {
                    "type": "hand_end",
                    "hand": hand.number,
                    "stacks": {str(s): self.chips[s] for s in self.seats},
                    "net": {str(s): hand.stacks[i] - hand.start[i] for i, s in enumerate(hand.players)},
                }
            )
        ]
        out = [s for s in hand.players if self.chips[s] == 0]
        alive = [s for s in self.seats if self.chips[s] > 0]
        if out:
            self.eliminated.append(out)
            events.append(Event({"type": "bust", "seats": out, "place": len(alive) + 1}))
        if len(alive) <= 1:
            self.is_finished = True
            self._pending = None
            result = self.result()
            assert result is not None
            events.append(
                Event(
                    {
                        "type": "match_end",
                        "ranking": result["ranking"],
                        "winners": result["winners"],
                        "item_stakes": self.options["item_stakes"],
                    }
                )
            )
        else:
            self._pending = "hand"
        return events

    # -- hand history -------------------------------------------------------------
    def hand_record(self) -> Data | None:
        """The last completed hand as PHH fields (contract: ``variant``,
        ``antes``, ``blinds_or_straddles``, ``small_bet``/``big_bet`` or
        ``min_bet``, ``starting_stacks``, ``actions``, ``finishing_stacks``,
        ``ante_trimming_status``, ``_cardhall_*``), players in PHH order;
        ``antes``/``blinds_or_straddles`` in pokerkit's positional convention
        (heads-up reversed). PHH has no burn action, so the cards burned
        before the flop, turn and river the hand reached (FL-5) are the
        user-defined field ``_cardhall_burns`` (a list of 0 to 3 cards, in
        order). None before a hand has completed."""
        hand = self.hand
        if hand is None or not hand.over:
            return None
        n = len(hand.players)
        blinds = list(hand.blinds)
        antes = list(hand.antes_nominal)
        if n == 2:  # pokerkit: player i posts blinds_or_straddles[not i] heads-up
            blinds.reverse()
            antes.reverse()
        record: Data = {
            "variant": self.variant,
            "ante_trimming_status": bool(self.options["ante_trimming"]),
            "antes": antes,
            "blinds_or_straddles": blinds,
        }
        record.update(self._record_stakes(hand))
        record.update(
            {
                "starting_stacks": list(hand.start),
                "actions": list(hand.actions),
                "finishing_stacks": list(hand.finish or hand.stacks),
                "_cardhall_game": self.game,
                "_cardhall_hand": hand.number,
                "_cardhall_seats": list(hand.players),
                "_cardhall_button": hand.button,
                "_cardhall_burns": burned_cards(hand.deck, n, len(hand.board)),
                "_cardhall_options": self._replay_options(hand),
            }
        )
        return record

    def _replay_options(self, hand: Hand) -> Data:
        """Options that replay this one hand: its stakes fixed, its button, its
        starting stacks per seat (seats = ``_cardhall_seats``, sorted)."""
        opts = {k: v for k, v in self.options.items() if k not in ("starting_stacks", "button", "blind_levels")}
        stakes = hand.stakes
        for k in stakes:
            if k in opts:
                opts[k] = stakes[k]
        by_seat = dict(zip(hand.players, hand.start))
        opts["starting_stacks"] = [by_seat[s] for s in sorted(hand.players)]
        opts["button"] = hand.button if hand.button in hand.players else None
        opts["blind_levels"] = None
        return opts

    # -- persistence --------------------------------------------------------------
    def to_data(self) -> Data:
        return self._data(True)

    def state_data(self) -> Data:
        return self._data(False)

    def _data(self, copy: bool) -> Data:
        """:meth:`to_data` (``copy``) or :meth:`state_data`: the same data, the
        latter sharing the options and the hand's lists instead of copying them."""
        return {
            "game": self.game,
            "version": STATE_VERSION,
            "seats": list(self.seats),
            "options": _copy(self.options) if copy else self.options,
            "rng": self.rng_to_data(self.rng),
            "chips": {str(s): c for s, c in self.chips.items()},
            "hand_number": self.hand_number,
            "first_button": self.first_button,
            "positions": list(self.positions) if self.positions else None,
            "level": self.level,
            "eliminated": [list(g) for g in self.eliminated],
            "started": self.started,
            "finished": self.is_finished,
            "pending": self._pending,
            "hand": self.hand.to_data(copy) if self.hand is not None else None,
        }

    @classmethod
    def from_data(cls, data: Data) -> Self:
        try:
            if data["game"] != cls.game or data["version"] != STATE_VERSION:
                raise ValueError(f"not a {cls.game} state of version {STATE_VERSION}")
            seats = [int(s) for s in data["seats"]]
            self = cls(seats, _copy(data["options"]), cls.rng_from_data(data["rng"]))
            self.chips = {int(s): int(c) for s, c in data["chips"].items()}
            self.hand_number = int(data["hand_number"])
            self.first_button = data["first_button"]
            self.positions = Positions(*data["positions"]) if data["positions"] else None
            self.level = int(data["level"])
            self.eliminated = [[int(s) for s in g] for g in data["eliminated"]]
            self.started = bool(data["started"])
            self.is_finished = bool(data["finished"])
            self._pending = data["pending"]
            self.hand = Hand.from_data(data["hand"]) if data["hand"] is not None else None
            if self.hand is not None:
                for card in self.hand.deck:
                    validate(card)
        except (KeyError, TypeError, AttributeError, CardError) as exc:
            raise ValueError(f"malformed {cls.game} state: {exc!r}") from exc
        if set(self.chips) != set(seats):
            raise ValueError(f"malformed {cls.game} state: chips must cover the seats")
        return self

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.to_data() == other.to_data()


def _pot_data(pot: Pot, players: list[int]) -> Data:
    """A pot as event/view data, eligible players as seats."""
    return {"amount": pot.amount, "eligible": [players[i] for i in pot.eligible]}


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(v) for v in value]
    return value
