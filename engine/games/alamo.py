"""Alamo (seed ``000_0060bbfc92e1e945.txt``, RULES AL-1..AL-8, G-1..G-9).

Texas Hold'em played with the cards themselves as the chips: each player's
stack of face-down cards pays the antes and bets, the board is turned from the
face-down cards in the pot, and the match ends when one player holds every
card. The rematch (G-7) is a new engine with option ``dealer`` = the seat after
the previous match's first dealer: nothing is drawn.

Options
    ``jokers``           None (default): by the number of players (AL-1: off for
                         2 players, 52 cards, 26 each; on for 3 players, 54
                         cards, 18 each); True: 2 players play with both jokers
                         (27 each); False with 3 players is refused (54 cards are
                         needed for equal stacks, AL-1).
    ``preflop_betting``  False (default): the first betting round is after the
                         flop; True: a betting round before the flop too (AL-5).
    ``max_hands``        None (default, off) or a positive int: the match ends
                         after that hand in favour of the largest stack (AL-8).
    ``dealer``           None (default): the first dealer is drawn at random
                         (AL-1); a seat: that seat deals first (the rematch, G-7).

Stacks, pot and board as cards (AL-4). A stack is a list of cards, index 0 the
top. An ante or a bet moves cards off the top of the stack, in order, to the
end of the pot's face-down list; an uncalled bet's excess cards (the last ones
that player bet) go back to the top of the stack in their order when the
betting round ends, before the next board card is turned. Hole cards are the
next two cards off the top. Folded hole cards are set aside face down (never
turned, never shown). Side pots are counted in cards by contribution level
(``cardhall.engine.pots.side_pots``, FL-6); the cards of a player eliminated this hand
(AL-7) join the main pot without counting as anyone's contribution.

Randomness (G-2), in this order, all through the injected random source:

1. ``start()``: if ``dealer`` is None, ``randbelow(len(seats))`` indexes the
   sorted seats. Then ``cardhall.engine.cards.standard_deck(jokers)`` (0 or 2 jokers) is
   shuffled; the k-th player clockwise from the dealer's left (the dealer
   last) gets ``deck[k::n]`` as stack, ``deck[k]`` on top.
2. Each board card (AL-3): ``randbelow(len(face_down))`` indexes the pot's
   face-down list (the order cards entered the pot: eliminated players'
   cards, then antes clockwise from the dealer's left, then bets in the order
   made; turned cards leave the list).
3. Settling a hand (AL-4): the *pool* is the board (in turned order) followed
   by the face-down pot cards; the *hole cards* are every player's two hole
   cards, clockwise from the dealer's left. If one player wins everything (all
   others folded, or a single winner of every pot) that player's winnings are
   pool + hole cards. Otherwise the pool is shuffled once; the pots, main pot
   first, take consecutive slices of it of their size; the main pot also takes
   the hole cards (appended); a pot with several winners is shuffled and dealt
   out in consecutive slices by ``cardhall.engine.pots.split`` (odd cards one each from
   the first winner left of the dealer, G-6/AL-8), winners taken clockwise from
   the dealer's left; a winner's winnings are its shares joined in pot order,
   main pot first. Then each winner (a lone winner too), clockwise from the
   dealer's left, shuffles their winnings, which go under their stack
   (appended at the end; AL-4: "each winner shuffles their winnings").
   When a match ends because only one player is left before the ante (AL-7),
   the pot (the eliminated cards) is that player's winnings, shuffled the same way.

Hand flow and ``pending`` (``advance()`` takes the step):
    ``"street"``    before turning the next board card(s): the flop (3), the turn,
                    the river. A betting round follows each when at least two
                    players still in have cards behind (AL-5, AL-6).
    ``"showdown"``  betting is over with two or more players in and either five
                    board cards or no face-down card left (AL-6).
    ``"hand"``      the hand is settled; ``advance()`` starts the next hand, which
                    begins with the elimination check and the ante (AL-7).

Actions (``apply(seat, action)``); amounts are CARDS, raise-to totals for the street (AL-5, NL-2)
    =============================================  =====================================================
    ``{"type": "fold"}``                           give up, on any turn, even when checking is free
                                                   (AL-5; seed: "At any time a player may fold");
                                                   hole cards set aside face down (seed)
    ``{"type": "check"}``                          when nothing is to call
    ``{"type": "call"}``                           match the street's bet (all-in for less allowed);
                                                   ``amount``, if given, must be the cards added
    ``{"type": "bet", "amount": X}``               open the street to X cards (min 1, max the stack)
    ``{"type": "raise", "amount": X}``             raise to X cards in all this street (NL-2, NL-3)
    ``{"type": "all_in"}``                         bet or raise with the whole stack, or a call that
                                                   puts the player all in when raising is closed
                                                   (``amount``, if given, must be the raise-to total)
    =============================================  =====================================================

    ``fold`` and ``check`` take no ``amount``; a non-integer ``amount`` is
    ``bad_amount`` (AL-5). These are the Hold'em engines' action forms.

Legal actions (``legal_actions()``, ``LegalAction.to_data()``): ``fold`` (on
every turn, AL-5), ``check``, ``call`` (``min`` = ``max`` = cards added), ``bet`` /
``raise`` (``min``/``max`` raise-to totals), ``all_in`` (``min`` = ``max`` =
the raise-to total it makes).

Events (``Event.data`` public; "private" fields go only to the seat named).
Face-down pot cards and stack contents are never in any event, only counts.
    ================  ================================================================  =================
    type              public fields                                                     private (to seat)
    ================  ================================================================  =================
    ``match_start``   ``seats``, ``dealer``, ``deck`` (52/54), ``jokers``, ``stacks``   --
    ``eliminated``    ``seat``, ``hand``, ``cards`` (into the main pot, AL-7)           --
    ``hand_start``    ``hand``, ``dealer``, ``players`` (dealt in, clockwise from the    --
                      dealer's left), ``ante`` (cards each), ``stacks``
    ``antes``         ``ante``, ``pot``, ``face_down``, ``stacks``                       --
    ``hole_cards``    ``players`` (each pulled two cards), ``stacks``                   each: ``cards``
    ``board``         ``street``, ``cards`` (turned now), ``board``, ``dealer`` (AL-3),  --
                      ``face_down`` (left in the pot)
    ``turn``          ``seat`` to act, ``to_call`` (cards)                               --
    ``action``        ``seat``, ``action``, ``amount`` (raise-to total for bet/raise/   --
                      all_in), ``cards`` (moved to the pot now), ``bet`` (street total),
                      ``stack``, ``pot``, ``all_in`` (bool)
    ``uncalled``      ``seat``, ``cards`` (count back on top of the stack), ``stack``   --
    ``show``          ``seat``, ``cards`` (hole cards), ``hand`` (category name, None    --
                      before the flop): every hand still in, at the showdown or as
                      soon as no more betting can happen (all in, AL-6)
    ``award``         ``board``, ``pots`` [{``cards``, ``eligible``, ``winners``,        --
                      ``shares``}] main pot first (a pot's ``cards`` exclude, its
                      ``shares`` include the hole cards), ``hole_cards`` (how many
                      go to the main pot's winners, AL-4)
    ``hand_end``      ``hand``, ``winnings`` {seat: cards}, ``stacks``, ``reason``       --
                      (``fold`` / ``showdown``; ``last_player``: AL-7 left one player)
    ``match_end``     ``result`` (see ``result()``)                                      --
    ================  ================================================================  =================

Seat-keyed maps use string keys (``"3"``) so JSON and msgpack carry them alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Self

from cardhall.engine.base import Data, Engine, Event, IllegalAction, LegalAction
from cardhall.engine.betting import UNLIMITED, BettingRound, BettingRules
from cardhall.engine.cards import standard_deck
from cardhall.engine.games.alamo_ranking import hand_name, hand_value
from cardhall.engine.options import MAX_HANDS, Option, defaults
from cardhall.engine.plugins import Example, GameSpec, builtin_rules, builtin_schema
from cardhall.engine.pots import Pot, side_pots, split
from cardhall.engine.rng import RandomSource
from cardhall.engine.seats import check_seats, clockwise, next_seat

STATE_VERSION = 1
STREETS = ("preflop", "flop", "turn", "river")
#: board cards turned at each street after preflop
STREET_CARDS = {"flop": 3, "turn": 1, "river": 1}
HOLE = 2
#: AL-5: no limit in cards, minimum bet 1, raises as NL-2 and NL-3; a player may
#: fold on any turn, checking free or not (seed: "At any time a player may fold").
ALAMO_BETTING = BettingRules(UNLIMITED, "full_raise", free_fold=True, amount_rule="AL-5", reopen_rule="AL-5")
MIN_BET = 1
ACTIONS = ("fold", "check", "call", "bet", "raise", "all_in")


def ante_for(players: int) -> int:
    """Cards each player antes: 1 with three players, 2 with two (seed "Ante Up"; AL-7)."""
    return 1 if players >= 3 else 2


class Alamo(Engine):
    """A match of Alamo for 2 or 3 seats (AL-1). See the module docstring."""

    game = "alamo"
    title = "Alamo"
    min_seats = 2
    max_seats = 3
    options_spec = (
        Option("jokers", None, "bool", "add the two wild jokers; automatic: none for 2 players, both for 3 "
               "(3 players always use them)", "AL-1", nullable=True),
        Option("preflop_betting", False, "bool", "a betting round right after the hole cards, before the flop is turned",
               "AL-5"),
        Option("max_hands", None, "int", "end the match after this many hands, the biggest stack winning; "
               "blank: play until one player has every card",
               "AL-8", min=1, max=MAX_HANDS, nullable=True),
        Option("dealer", None, "seat", "the seat that deals the first hand; automatic: a random seat; a rematch "
               "starts one seat further on (G-7)", "AL-1", nullable=True),
    )
    default_options: ClassVar[Data] = defaults(options_spec)

    # -- construction -------------------------------------------------------
    def __init__(self, seats: Sequence[int], options: Data, rng: RandomSource) -> None:
        self.seats: list[int] = sorted(seats)
        self.options = options
        self.rng = rng
        self.started = False
        self.is_finished = False
        self.result_data: Data | None = None
        self.hand_number = 0
        self.dealer: int | None = None
        #: seat -> the cards of its stack, index 0 the top (hidden from every viewer, AL-4)
        self.piles: dict[int, list[str]] = {s: [] for s in self.seats}
        #: elimination groups in the order they happened (AL-7), each [hand, [seats]]:
        #: the players found short by one elimination check, or busted by one hand
        self.out: list[list[Any]] = []
        self._reset_hand()
        self.record: Data | None = None

    def _reset_hand(self) -> None:
        self.players: list[int] = []
        self.ante = 0
        self.hole: dict[int, list[str]] = {}
        self.folded: list[int] = []
        self.face_down: list[str] = []
        self.board: list[str] = []
        self.contributed: dict[int, int] = {}
        self.dead = 0
        self.street = "preflop"
        self.street_cards: dict[int, list[str]] = {}
        self.betting: BettingRound | None = None
        self.pending_step: str | None = None
        self.shown: list[int] = []
        self.log: list[Data] = []
        self.hand_start: Data = {}

    @classmethod
    def new(cls, seats: Sequence[int], options: Mapping[str, Any] | None, rng: RandomSource) -> Self:
        """A match for 2 or 3 occupied ``seats``; raises ValueError naming a bad option or seat count."""
        opts = cls.resolve_options(options)
        seats = check_seats(seats, cls.min_seats, cls.max_seats)  # 2 or 3 players (AL-1)
        jokers = opts["jokers"]
        if jokers is None:
            opts["jokers"] = len(seats) == 3
        elif len(seats) == 3 and not jokers:
            raise ValueError("jokers: three players play with both jokers, 18 cards each (AL-1)")
        if opts["dealer"] is not None and opts["dealer"] not in seats:
            raise ValueError(f"dealer: {opts['dealer']!r} is not one of the seats {seats}")
        return cls(seats, opts, rng)

    @property
    def deck_size(self) -> int:
        """52, or 54 with jokers (AL-1)."""
        return 54 if self.options["jokers"] else 52

    # -- questions ----------------------------------------------------------
    @property
    def to_act(self) -> int | None:
        if self.betting is None or self.is_finished:
            return None
        index = self.betting.to_act
        return None if index is None else self.players[index]

    @property
    def pending(self) -> str | None:
        return None if self.is_finished else self.pending_step

    @property
    def finished(self) -> bool:
        return self.is_finished

    def in_match(self, seat: int) -> bool:
        """False once ``seat`` is eliminated (AL-7); between hands also when it
        cannot ante and pull two cards for the next one (the check the next
        hand's start runs, without changing anything)."""
        if seat in self.eliminated:
            return False
        if self.pending_step != "hand":
            return True
        live = [s for s in self.seats if s not in self.eliminated]
        while len(live) > 1:
            ante = ante_for(len(live))
            short = [s for s in live if len(self.piles[s]) < ante + HOLE]
            if not short:
                break
            live = [s for s in live if s not in short]
        return seat in live

    def result(self) -> Data | None:
        return self.result_data

    def stacks(self) -> dict[int, int]:
        """Seat -> cards in that seat's stack (behind, during a hand; the same
        question as the Hold'em engines'). The cards themselves are ``piles``."""
        return {s: len(cards) for s, cards in self.piles.items()}

    def stacks_public(self) -> dict[str, int]:
        """:meth:`stacks` with string keys, as events and views carry it."""
        return {str(s): len(c) for s, c in self.piles.items()}

    @property
    def live(self) -> list[int]:
        """Players still in this hand (not folded), clockwise from the dealer's left."""
        return [s for s in self.players if s not in self.folded]

    @property
    def eliminated(self) -> list[int]:
        return [s for _, group in self.out for s in group]

    def legal_actions(self) -> list[LegalAction]:
        if self.to_act is None or self.betting is None:
            return []
        return self.betting.legal()

    def timeout_action(self, seat: int) -> Data:
        """Check when checking is legal, else fold (G-3)."""
        if seat == self.to_act and any(a.type == "check" for a in self.legal_actions()):
            return {"type": "check"}
        return {"type": "fold"}

    def audit(self) -> Data:
        """Card conservation (AL-4): stacks + pot face-down + board + hands + set-aside
        hole cards == the deck (52 or 54). ``counted`` is -1 when the cards are not
        exactly the deck (a duplicate or a stranger), whatever their number."""
        hands = [c for s in self.live for c in self.hole.get(s, [])]
        aside = [c for s in self.folded for c in self.hole.get(s, [])]
        stacks = [c for cards in self.piles.values() for c in cards]
        every = stacks + self.face_down + self.board + hands + aside
        counted = len(every)
        if sorted(every) != sorted(standard_deck(2 if self.options["jokers"] else 0)):
            counted = -1
        return {
            "unit": "cards",
            "expected": self.deck_size,
            "counted": counted,
            "where": {
                "stacks": len(stacks),
                "pot_face_down": len(self.face_down),
                "board": len(self.board),
                "hands": len(hands),
                "set_aside": len(aside),
            },
        }

    # -- inputs -------------------------------------------------------------
    def start(self) -> list[Event]:
        """Draw the first dealer (unless the ``dealer`` option names one), shuffle and deal
        the stacks (AL-1), and start hand 1."""
        if self.started:
            raise IllegalAction("already_started", "the match has already started")
        self.started = True
        dealer = self.options["dealer"]
        if dealer is None:
            dealer = self.seats[self.rng.randbelow(len(self.seats))]
        deck = standard_deck(2 if self.options["jokers"] else 0)
        self.rng.shuffle(deck)
        order = clockwise(self.seats, after=dealer)
        for k, seat in enumerate(order):
            self.piles[seat] = deck[k :: len(order)]
        self.dealer = dealer
        events = [
            Event(
                {
                    "type": "match_start",
                    "seats": list(self.seats),
                    "dealer": dealer,
                    "deck": len(deck),
                    "jokers": self.options["jokers"],
                    "stacks": self.stacks_public(),
                }
            )
        ]
        return events + self._begin_hand()

    def apply(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        """Apply ``seat``'s betting action (the table above; amounts in cards, AL-5)
        and return its events. Raises :class:`IllegalAction` (state unchanged):
        ``bad_action``, ``match_over`` (AL-8), ``not_your_turn``,
        ``unknown_action``, ``bad_amount`` and the betting round's codes (AL-5)."""
        if not isinstance(action, Mapping) or not isinstance(action.get("type"), str):
            raise IllegalAction("bad_action", "an action is a map with a string 'type'")
        if self.is_finished:
            raise IllegalAction("match_over", "the match has ended", "AL-8")
        if self.to_act is None:
            raise IllegalAction("not_your_turn", "nobody is to act now", "AL-5")
        if seat != self.to_act:
            raise IllegalAction("not_your_turn", f"seat {self.to_act} is to act, not seat {seat}", "AL-5")
        assert self.betting is not None
        kind = action["type"]
        if kind not in ACTIONS:
            raise IllegalAction("unknown_action", f"unknown action {kind!r}; one of {', '.join(ACTIONS)}", "AL-5")
        amount = action.get("amount")
        if amount is not None and type(amount) is not int:
            raise IllegalAction("bad_amount", f"amount must be a whole number of cards, not {amount!r}", "AL-5")
        # as in Hold'em: fold and check take no amount; a call's amount, if given,
        # must be the cards it adds, an all-in's the raise-to total it makes
        move = self.betting.act(kind, amount)  # raises IllegalAction, state unchanged
        events: list[Event] = []
        kind = move.kind
        moved = move.added
        if moved:
            cards = self.piles[seat][:moved]
            del self.piles[seat][:moved]
            self.face_down.extend(cards)
            self.street_cards.setdefault(seat, []).extend(cards)
            self.contributed[seat] = self.contributed.get(seat, 0) + moved
        if kind == "fold":
            self.folded.append(seat)
        entry: Data = {"seat": seat, "action": kind}
        if kind in ("bet", "raise"):
            entry["amount"] = move.total
        self.log.append({**entry, "street": self.street, "cards": moved})
        events.append(
            Event(
                {
                    "type": "action",
                    **entry,
                    "cards": moved,
                    "bet": move.total,
                    "stack": len(self.piles[seat]),
                    "pot": len(self.face_down) + len(self.board),
                    "all_in": kind != "fold" and not self.piles[seat],
                }
            )
        )
        if len(self.live) == 1:
            events += self._end_round()
            events += self._settle_fold()
        elif self.betting.done:
            events += self._end_round()
            events += self._next_step()
        else:
            events.append(self._turn_event())
        return events

    def advance(self) -> list[Event]:
        if self.is_finished:
            raise IllegalAction("match_over", "the match has ended", "AL-8")
        step = self.pending_step
        if step == "street":
            return self._turn_street()
        if step == "showdown":
            return self._showdown()
        if step == "hand":
            return self._begin_hand()
        if not self.started:
            raise IllegalAction("not_started", "call start() first")
        raise IllegalAction("nothing_pending", "a player is to act", "AL-5")

    # -- hand flow ------------------------------------------------------------
    def _begin_hand(self) -> list[Event]:
        """Elimination check and ante (AL-7), hole cards (seed "Pull Your Hand")."""
        self._reset_hand()
        self.hand_number += 1
        events: list[Event] = []
        out = set(self.eliminated)
        live = [s for s in self.seats if s not in out]
        while True:
            ante = ante_for(len(live))
            short = [s for s in live if len(self.piles[s]) < ante + HOLE]
            if not short or len(live) <= 1:
                break
            self.out.append([self.hand_number, list(short)])
            for seat in short:
                cards = self.piles[seat]
                self.piles[seat] = []
                self.face_down.extend(cards)
                self.dead += len(cards)
                self.log.append({"eliminated": seat, "cards": len(cards)})
                events.append(Event({"type": "eliminated", "seat": seat, "hand": self.hand_number, "cards": len(cards)}))
            live = [s for s in live if s not in short]
        assert self.dealer is not None
        if self.hand_number > 1 or self.dealer not in live:
            self.dealer = next_seat(self.seats, after=self.dealer, eligible=set(live))
        if len(live) == 1:
            # AL-7: the last player left takes the pot (the eliminated players' cards)
            winner = live[0]
            winnings = list(self.face_down)
            self.face_down = []
            self.rng.shuffle(winnings)
            self.piles[winner].extend(winnings)
            events.append(
                Event(
                    {
                        "type": "hand_end",
                        "hand": self.hand_number,
                        "winnings": {str(winner): len(winnings)},
                        "stacks": self.stacks_public(),
                        "reason": "last_player",
                    }
                )
            )
            return events + self._finish("last_player")
        self.players = clockwise(live, after=self.dealer)
        self.ante = ante
        self.hand_start = {
            "stacks": {str(s): list(self.piles[s]) for s in self.seats},
            "pot_before_ante": list(self.face_down),
        }
        events.append(
            Event(
                {
                    "type": "hand_start",
                    "hand": self.hand_number,
                    "dealer": self.dealer,
                    "players": list(self.players),
                    "ante": ante,
                    "stacks": self.stacks_public(),
                }
            )
        )
        for seat in self.players:
            cards = self.piles[seat][:ante]
            del self.piles[seat][:ante]
            self.face_down.extend(cards)
            self.contributed[seat] = ante
        events.append(
            Event(
                {
                    "type": "antes",
                    "ante": ante,
                    "pot": len(self.face_down),
                    "face_down": len(self.face_down),
                    "stacks": self.stacks_public(),
                }
            )
        )
        for seat in self.players:
            self.hole[seat] = self.piles[seat][:HOLE]
            del self.piles[seat][:HOLE]
        events.append(
            Event(
                {"type": "hole_cards", "players": list(self.players), "stacks": self.stacks_public()},
                {s: {"cards": list(self.hole[s])} for s in self.players},
            )
        )
        if self.options["preflop_betting"] and self._can_bet():
            events += self._open_round()
        else:
            events += self._next_step()
        return events

    def _can_bet(self) -> bool:
        """A betting round happens when at least two players still in have cards behind (AL-6)."""
        return sum(1 for s in self.live if self.piles[s]) >= 2

    def _open_round(self) -> list[Event]:
        self.street_cards = {}
        self.betting = BettingRound.begin(
            ALAMO_BETTING,
            stacks=[len(self.piles[s]) for s in self.players],
            folded=[s in self.folded for s in self.players],
            first=0,  # left of the dealer (AL-5)
            size=MIN_BET,
        )
        if self.betting.done:
            self.betting = None
            return self._next_step()
        self.pending_step = None
        return [self._turn_event()]

    def _turn_event(self) -> Event:
        seat = self.to_act
        assert self.betting is not None and seat is not None
        return Event({"type": "turn", "seat": seat, "to_call": self.betting.options().call})

    def _end_round(self) -> list[Event]:
        """Close the betting round: uncalled bet cards back on top, in order (AL-4)."""
        events: list[Event] = []
        if self.betting is not None:
            returned = self.betting.return_uncalled()
            if returned is not None:
                seat, count = self.players[returned[0]], returned[1]
                cards = self.street_cards[seat][-count:]
                del self.street_cards[seat][-count:]
                for card in cards:
                    self.face_down.remove(card)
                self.piles[seat][:0] = cards
                self.contributed[seat] -= count
                self.log.append({"uncalled": seat, "cards": count})
                events.append(Event({"type": "uncalled", "seat": seat, "cards": count, "stack": len(self.piles[seat])}))
        self.betting = None
        self.street_cards = {}
        return events

    def _next_step(self) -> list[Event]:
        """After a betting round (or none): the next street, or the showdown (AL-6)."""
        events: list[Event] = []
        if len(self.board) >= 5 or not self.face_down:
            self.pending_step = "showdown"
        else:
            self.pending_step = "street"
            if not self._can_bet():
                # no more betting this hand: the hands still in are turned up now (FL-9 spirit, TDA 16)
                events += self._show_all()
        return events

    def _turn_street(self) -> list[Event]:
        street = STREETS[STREETS.index(self.street) + 1]
        want = STREET_CARDS[street]
        turned: list[str] = []
        for _ in range(min(want, len(self.face_down))):
            turned.append(self.face_down.pop(self.rng.randbelow(len(self.face_down))))
        self.board.extend(turned)
        self.street = street
        self.log.append({"street": street, "board": list(turned)})
        events = [
            Event(
                {
                    "type": "board",
                    "street": street,
                    "cards": turned,
                    "board": list(self.board),
                    "dealer": self.dealer,
                    "face_down": len(self.face_down),
                }
            )
        ]
        if len(turned) < want:
            self.pending_step = "showdown"
            return events
        if self._can_bet():
            return events + self._open_round()
        return events + self._next_step()

    def _show_all(self) -> list[Event]:
        events = []
        for seat in self.live:
            if seat in self.shown:
                continue
            self.shown.append(seat)
            cards = list(self.hole[seat])
            name = hand_name(hand_value(cards + self.board)) if len(self.board) >= 3 else None
            events.append(Event({"type": "show", "seat": seat, "cards": cards, "hand": name}))
        return events

    def _showdown(self) -> list[Event]:
        """Best five of hole cards and the board so far (seed "Show Your Hand"; AL-6)."""
        events = self._show_all()
        values = {s: hand_value(self.hole[s] + self.board) for s in self.live}
        pots = self._pots()
        winners: list[list[int]] = []
        for pot in pots:
            best = max(values[s] for s in pot.eligible)
            winners.append([s for s in self.players if s in pot.eligible and values[s] == best])
        return events + self._settle(pots, winners, "showdown")

    def _pots(self) -> list[Pot]:
        pots = side_pots(self.contributed, set(self.live))
        if self.dead:
            first = pots[0]
            pots[0] = Pot(first.amount + self.dead, first.eligible)
        return pots

    def _settle_fold(self) -> list[Event]:
        winner = self.live[0]
        pots = self._pots()
        return self._settle(pots, [[winner] for _ in pots], "fold")

    def _settle(self, pots: list[Pot], winners: list[list[int]], reason: str) -> list[Event]:
        """Hand the pot cards, board cards and set-aside hole cards to the winners (AL-4, AL-8)."""
        pool = self.board + self.face_down
        holes = [c for s in self.players for c in self.hole[s]]
        assert sum(p.amount for p in pots) == len(pool), (pots, len(pool))
        order = self.players  # clockwise from the dealer's left: G-6 order
        winnings: dict[int, list[str]] = {}
        pot_data: list[Data] = []
        single = {s for ws in winners for s in ws}
        if len(single) == 1 and all(len(ws) == 1 for ws in winners):
            (winner,) = single
            winnings[winner] = pool + holes
            for i, pot in enumerate(pots):
                shares = {winner: pot.amount + (len(holes) if i == 0 else 0)}
                pot_data.append(self._pot_data(pot, [winner], shares))
        else:
            self.rng.shuffle(pool)
            start = 0
            for i, (pot, ws) in enumerate(zip(pots, winners)):
                cards = pool[start : start + pot.amount]
                start += pot.amount
                if i == 0:
                    cards = cards + holes
                if len(ws) > 1:
                    self.rng.shuffle(cards)
                shares = split(len(cards), ws, order)
                at = 0
                for seat in order:
                    if seat in shares:
                        winnings.setdefault(seat, []).extend(cards[at : at + shares[seat]])
                        at += shares[seat]
                pot_data.append(self._pot_data(pot, ws, shares))
        for seat in order:
            if seat in winnings:
                self.rng.shuffle(winnings[seat])
                self.piles[seat].extend(winnings[seat])
        events = [
            Event({"type": "award", "board": list(self.board), "pots": pot_data, "hole_cards": len(holes)})
        ]
        # hand record before clearing the table
        self.record = self._make_record(pot_data, winnings, reason)
        won = {str(s): len(c) for s, c in winnings.items()}
        self.face_down = []
        self.board = []
        self.hole = {}
        self.folded = []
        self.betting = None
        events.append(
            Event(
                {
                    "type": "hand_end",
                    "hand": self.hand_number,
                    "winnings": won,
                    "stacks": self.stacks_public(),
                    "reason": reason,
                }
            )
        )
        holders = [s for s in self.seats if self.piles[s]]
        if len(holders) == 1:
            busted = [s for s in self.players if s != holders[0]]
            if busted:
                self.out.append([self.hand_number, busted])
            return events + self._finish("all_cards")
        if self.options["max_hands"] is not None and self.hand_number >= self.options["max_hands"]:
            return events + self._finish("max_hands")
        self.pending_step = "hand"
        return events

    @staticmethod
    def _pot_data(pot: Pot, winners: list[int], shares: Mapping[int, int]) -> Data:
        return {
            "cards": pot.amount,
            "eligible": list(pot.eligible),
            "winners": list(winners),
            "shares": {str(s): n for s, n in shares.items()},
        }

    def _finish(self, reason: str) -> list[Event]:
        """Match end (AL-8): one player holds every card, or ``max_hands`` reached."""
        self.is_finished = True
        self.pending_step = None
        self.betting = None
        out = set(self.eliminated)
        remaining = [s for s in self.seats if s not in out]
        by_size: dict[int, list[int]] = {}
        for s in remaining:
            by_size.setdefault(len(self.piles[s]), []).append(s)
        ranking = [by_size[n] for n in sorted(by_size, reverse=True)]
        ranking += [list(group) for _, group in reversed(self.out)]
        self.result_data = {
            "ranking": ranking,
            "winners": list(ranking[0]),
            "reason": reason,
            "hands": self.hand_number,
            "stacks": self.stacks_public(),
            "eliminated": [[hand, list(group)] for hand, group in self.out],
        }
        return [Event({"type": "match_end", "result": self.result_data})]

    # -- records --------------------------------------------------------------
    def _make_record(self, pots: list[Data], winnings: Mapping[int, list[str]], reason: str) -> Data:
        return {
            "game": self.game,
            "hand": self.hand_number,
            "dealer": self.dealer,
            "ante": self.ante,
            "players": list(self.players),
            "options": dict(self.options),
            "starting_stacks": self.hand_start.get("stacks", {}),
            "pot_before_ante": self.hand_start.get("pot_before_ante", []),
            "eliminated": [e["eliminated"] for e in self.log if "eliminated" in e],
            "hole_cards": {str(s): list(c) for s, c in self.hole.items()},
            "folded": list(self.folded),
            "shown": list(self.shown),
            "actions": [dict(e) for e in self.log],
            "board": list(self.board),
            "pot_face_down": list(self.face_down),
            "pots": pots,
            "winnings": {str(s): list(c) for s, c in winnings.items()},
            "reason": reason,
            "finishing_stacks": {str(s): len(self.piles[s]) for s in self.seats},
        }

    def hand_record(self) -> Data | None:
        """The last completed hand, hidden cards included (stacks at the start, face-down
        pot cards, folded hole cards, which cards each winner took); for the history
        published after the match only (G-2)."""
        return self.record

    # -- views ------------------------------------------------------------------
    def view(self, viewer: int | None) -> Data:
        """What ``viewer`` (a seat, or None for a spectator) may see: counts of every
        stack and of the pot, the board, bets; own hole cards; hands shown. Never
        stack contents or face-down pot cards (AL-3, AL-4)."""
        out: Data = {
            "game": self.game,
            "seat": viewer,
            "seats": list(self.seats),
            "options": dict(self.options),
            "started": self.started,
            "hand": self.hand_number,
            "dealer": self.dealer,
            "players": list(self.players),
            "eliminated": [[hand, list(group)] for hand, group in self.out],
            "ante": self.ante,
            "stacks": self.stacks_public(),
            "pot": len(self.face_down) + len(self.board),
            "face_down": len(self.face_down),
            "board": list(self.board),
            "street": self.street,
            "contributed": {str(s): n for s, n in self.contributed.items()},
            "bets": {str(s): b for s, b in zip(self.players, self.betting.bets)} if self.betting else {},
            "folded": list(self.folded),
            "set_aside": HOLE * len(self.folded),
            "hole_cards": {str(s): HOLE for s in self.live} if self.hole else {},
            "shown": {str(s): list(self.hole[s]) for s in self.shown if s in self.hole},
            "to_act": self.to_act,
            "pending": self.pending,
            "finished": self.is_finished,
            "result": self.result_data,
        }
        if viewer is not None and viewer in self.hole:
            out["my_cards"] = list(self.hole[viewer])
        if viewer is not None and viewer == self.to_act:
            out["legal_actions"] = [a.to_data() for a in self.legal_actions()]
        return out

    # -- persistence ------------------------------------------------------------
    def to_data(self) -> Data:
        return {
            "version": STATE_VERSION,
            "game": self.game,
            "seats": list(self.seats),
            "options": dict(self.options),
            "rng": self.rng.to_data(),
            "started": self.started,
            "finished": self.is_finished,
            "result": self.result_data,
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "stacks": {str(s): list(c) for s, c in self.piles.items()},
            "out": [[hand, list(group)] for hand, group in self.out],
            "players": list(self.players),
            "ante": self.ante,
            "hole": {str(s): list(c) for s, c in self.hole.items()},
            "folded": list(self.folded),
            "face_down": list(self.face_down),
            "board": list(self.board),
            "contributed": {str(s): n for s, n in self.contributed.items()},
            "dead": self.dead,
            "street": self.street,
            "street_cards": {str(s): list(c) for s, c in self.street_cards.items()},
            "betting": self.betting.to_data() if self.betting is not None else None,
            "pending": self.pending_step,
            "shown": list(self.shown),
            "log": [dict(e) for e in self.log],
            "hand_start": self.hand_start,
            "record": self.record,
        }

    @classmethod
    def from_data(cls, data: Data) -> Self:
        try:
            if data["game"] != cls.game or data["version"] != STATE_VERSION:
                raise ValueError(f"not an Alamo state of version {STATE_VERSION}")
            self = cls(data["seats"], dict(data["options"]), cls.rng_from_data(data["rng"]))
            self.started = bool(data["started"])
            self.is_finished = bool(data["finished"])
            self.result_data = data["result"]
            self.hand_number = int(data["hand_number"])
            self.dealer = data["dealer"]
            self.piles = {int(s): list(c) for s, c in data["stacks"].items()}
            self.out = [[hand, list(group)] for hand, group in data["out"]]
            self.players = list(data["players"])
            self.ante = int(data["ante"])
            self.hole = {int(s): list(c) for s, c in data["hole"].items()}
            self.folded = list(data["folded"])
            self.face_down = list(data["face_down"])
            self.board = list(data["board"])
            self.contributed = {int(s): n for s, n in data["contributed"].items()}
            self.dead = int(data["dead"])
            self.street = data["street"]
            self.street_cards = {int(s): list(c) for s, c in data["street_cards"].items()}
            self.betting = BettingRound.from_data(data["betting"]) if data["betting"] is not None else None
            self.pending_step = data["pending"]
            self.shown = list(data["shown"])
            self.log = [dict(e) for e in data["log"]]
            self.hand_start = data["hand_start"]
            self.record = data["record"]
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed Alamo state: {exc!r}") from None
        return self


#: this game's registration (:mod:`cardhall.engine.plugins`)
GAME = GameSpec(
    name="alamo", engine=Alamo, order=30,
    bots={"equity": "cardhall.engine.bots.alamo:AlamoBot"}, default_bot="equity",
    schema=builtin_schema("alamo.json"), rules=builtin_rules("alamo"),
    example=Example(),
    web_renderer="/web/js/games/alamo.js", tui_renderer="cardhall.clients.tui.game_alamo:TUI",
    quick_options={"max_hands": 3},
)
