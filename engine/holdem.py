"""Texas Hold'em: the hand flow and the match loop shared by both games.

Fixed-limit (seed ``001_7f6c515034116f6f.txt``, RULES FL-1..FL-9) and no-limit
(seed ``004_5ca5ee4fb1c7c81a.txt``, NL-1..NL-7) subclass :class:`HoldemEngine`
(``cardhall.engine.games.fixed_limit_holdem``, ``cardhall.engine.games.no_limit_holdem``). The
betting itself is :mod:`cardhall.engine.betting`; button and blinds :mod:`cardhall.engine.blinds`;
side pots and odd chips :mod:`cardhall.engine.pots`; hand values :mod:`cardhall.engine.ranking`.

The engine is assembled here from parts with one job each: the hand's state
and the dealer (:mod:`cardhall.engine.holdem_hand`), the betting decisions
(:mod:`cardhall.engine.holdem_turns`), pots and showdown
(:mod:`cardhall.engine.holdem_showdown`), views and records
(:mod:`cardhall.engine.holdem_views`) and the stored state
(:mod:`cardhall.engine.holdem_state`); every public name is importable from
this module.

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
from typing import Any, Self

from cardhall.engine.base import Data, Event, IllegalAction
from cardhall.engine.holdem_hand import STREETS, Hand, HoldemBase
from cardhall.engine.holdem_showdown import HoldemShowdown, pot_data
from cardhall.engine.holdem_state import STATE_VERSION, HoldemState
from cardhall.engine.holdem_turns import HoldemTurns
from cardhall.engine.holdem_views import HoldemViews
from cardhall.engine.options import MAX_CHIPS, Option, OptionError
from cardhall.engine.rng import RandomSource
from cardhall.engine.seats import check_seats

__all__ = [
    "COMMON_OPTIONS", "PROFILES", "STATE_VERSION", "STREETS", "Hand", "HoldemBase", "HoldemEngine",
    "holdem_options", "pot_data",
]

#: per engine class, the option values :meth:`HoldemEngine.resolve_options` has accepted:
#: ``(name, type, value)``, or ``(name, element)`` for an int in a per-seat list
_ACCEPTED: dict[type, set[tuple[Any, ...]]] = {}
_ACCEPTED_MAX = 4096
_SCALARS = (int, str, bool, type(None))
PROFILES = ("table", "phh")

#: options both games share (``Engine.options_spec``); each game adds its stakes, structure and defaults
COMMON_OPTIONS: tuple[Option, ...] = (
    Option("ante", 0, "int", "chips every player puts into the pot before each hand; 0: none", min=0, max=MAX_CHIPS),
    Option("big_blind_ante", 0, "int", "chips the big blind's player puts in for the whole table each hand; 0: none",
           min=0, max=MAX_CHIPS),
    Option("button", None, "seat", "seat of the first dealer button; automatic: the lowest seat in fixed-limit, "
           "a random seat in no-limit", "FL-1", nullable=True),
    Option("profile", "table", "choice", "leave at 'table' to play; 'phh' follows pokerkit 0.7.7, only to replay "
           "recorded hands", choices=PROFILES),
    Option("ante_trimming", False, "bool", "leave off to play; only to replay recorded hands (profile 'phh'): "
           "cuts uneven antes"),
    Option("item_stakes", None, "text", "a prize for the match's winner, in words, e.g. 'a round of coffee' "
           "(shown to all, not paid out); empty: none", "NL-6", max=200, nullable=True),
    Option("dead_small_blind", False, "bool",
           "leave off to play; only to replay recorded hands: no small blind in the first hand (3+ players)", "FL-1"),
)


def holdem_options(*structure: Option) -> tuple[Option, ...]:
    """A Hold'em game's ``options_spec``: stacks and blinds, ``structure``
    (the game's betting options and its ``blind_levels``), then
    :data:`COMMON_OPTIONS`."""
    return structure + COMMON_OPTIONS

class HoldemEngine(HoldemTurns, HoldemShowdown, HoldemViews, HoldemState):
    """A Hold'em match (see the module docstring). Subclasses set ``game``,
    ``variant`` (PHH ``"FT"``/``"NT"``), ``max_seats``, ``default_options`` and
    the betting-structure hooks (:class:`cardhall.engine.holdem_hand.HoldemBase`)."""

    def __init__(self, seats: Sequence[int], options: Data, rng: RandomSource) -> None:
        self._init_fields(sorted(seats), options, rng)

    # -- construction ---------------------------------------------------------
    @classmethod
    def resolve_options(cls, options: Mapping[str, Any] | None) -> Data:
        """``Engine.resolve_options``, the same values and the same first
        :class:`OptionError`, with every (option, value) already accepted
        remembered: each option's check depends on the value alone, and a
        benchmark or a replay builds an engine per hand."""
        merged = dict(cls.default_options)
        for name, value in (options or {}).items():
            if name not in merged:
                raise OptionError(name, f"not an option of {cls.game}")
            merged[name] = value
        accepted = _ACCEPTED.setdefault(cls, set())
        if len(accepted) > _ACCEPTED_MAX:
            accepted.clear()
        spec = None
        for name, value in merged.items():
            kind = type(value)
            if kind is list:  # per-seat values: each element is checked alone
                if value and all(type(v) is int and (name, v) in accepted for v in value):
                    continue
            elif kind in _SCALARS and (name, kind, value) in accepted:
                continue
            if spec is None:
                spec = {o.name: o for o in cls.options_spec}
            option = spec.get(name)
            if option is None:
                continue
            option.check(value)
            if kind is list:
                accepted.update((name, v) for v in value if type(v) is int)
            elif kind in _SCALARS:
                accepted.add((name, kind, value))
        return merged

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

    @property
    def pending(self) -> str | None:
        return self._pending

    @property
    def finished(self) -> bool:
        return self.is_finished

