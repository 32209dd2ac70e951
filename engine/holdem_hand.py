"""Hold'em: one hand's state and the dealer's steps that build it.

:class:`Hand` is the state of the hand in progress (plain lists indexed by
PHH player index, 0 = first left of the button); :class:`HoldemBase` is the
engine's shared core: its fields, the hooks each game fills in
(``cardhall.engine.games.fixed_limit_holdem``, ``.no_limit_holdem``), the
stakes per blind level (NL-7), and the dealer: a hand's start (positions
FL-1/NL-4, antes and blinds, the deal FL-5/G-2) and each later street's
cards (FL-5, FL-8). The betting decisions are :mod:`cardhall.engine.holdem_turns`,
the showdown :mod:`cardhall.engine.holdem_showdown`; the whole engine is
:class:`cardhall.engine.holdem.HoldemEngine`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from cardhall.engine.base import Data, Engine, Event
from cardhall.engine.betting import BettingRound, BettingRules
from cardhall.engine.blinds import Positions, first_positions, next_positions
from cardhall.engine.cards import standard_deck
from cardhall.engine.pots import Pot
from cardhall.engine.rng import RandomSource

STREETS = ("preflop", "flop", "turn", "river")
_DECK = tuple(standard_deck())

_HAND_FIELDS = (
    "number", "players", "button", "small_blind", "big_blind", "stakes", "blinds", "antes_nominal",
    "start", "stacks", "folded", "contrib", "antes", "hole", "deck", "next_card", "board", "street",
    "shown", "show_pref", "revealed", "actions", "aggressor", "finish", "over",
)


class Hand:
    """One hand's state, indexed by PHH player index (0 = first left of the
    button). ``stacks``/``contrib`` (chips) are settled at the end of each
    betting round; during a round :attr:`round` holds the live stacks and bets."""

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
        """Inverse of :meth:`to_data` (KeyError/TypeError on malformed data)."""
        self = cls()
        for name in _HAND_FIELDS:
            value = data[name]
            if isinstance(value, (list, tuple)):
                value = [list(v) if isinstance(v, (list, tuple)) else v for v in value]
            elif isinstance(value, Mapping):
                value = dict(value)
            setattr(self, name, value)
        self.round = BettingRound.from_data(data["round"]) if data["round"] is not None else None
        return self


class HoldemBase(Engine):
    """The fields and hooks every part of the Hold'em engine shares, and the
    dealer's steps. Amounts are chips; ``hand`` lists are indexed by PHH
    player index, seats are table seat numbers."""

    variant: ClassVar[str]
    fixed: ClassVar[bool]

    seats: list[int]
    phh: bool
    rules: BettingRules
    chips: dict[int, int]
    total_chips: int
    hand_number: int
    first_button: int | None
    positions: Positions | None
    level: int
    eliminated: list[list[int]]
    started: bool
    is_finished: bool
    _pending: str | None
    hand: Hand | None
    _stakes_by_level: dict[int, Data]
    _pot_memo: dict[tuple[int, ...], list[Pot]]

    def _init_fields(self, seats: list[int], options: Data, rng: RandomSource) -> None:
        """A match before its first hand: ``seats`` sorted, ``options`` resolved."""
        self.seats = seats
        self.options = options
        self.rng = rng
        self.phh = options["profile"] == "phh"
        self.rules = self._betting_rules()
        self.chips = dict(zip(seats, options["starting_stacks"]))
        self.total_chips = sum(self.chips.values())
        self.hand_number = 0
        self.first_button = options["button"]
        self.positions = None
        self.level = 0
        self.eliminated = []
        self.started = False
        self.is_finished = False
        self._pending = None
        self.hand = None
        self._stakes_by_level = {}  # _stakes() results: options and chips in play never change
        self._pot_memo = {}  # _pots() results of the current hand

    # -- hooks for the two games --------------------------------------------
    def _betting_rules(self) -> BettingRules:
        raise NotImplementedError

    def _round_size(self, street: int, stakes: Data) -> int:
        """The fixed bet (FL) or minimum bet (NL) of ``street``, chips."""
        raise NotImplementedError

    def _cap(self) -> int | None:
        return None

    def _preflop_count(self) -> int:
        """Bets counted toward the cap when preflop betting opens (FL-2)."""
        return 0

    def _odd_chip_order(self, hand: Hand) -> list[int]:
        """Seats in the order odd chips are handed out (G-6 by default)."""
        return list(hand.players)

    def _structure_stakes(self, multiple: int) -> Data:
        """The betting structure's amounts at ``multiple`` times the options'."""
        raise NotImplementedError

    def _record_stakes(self, hand: Hand) -> Data:
        raise NotImplementedError

    # -- the other parts' steps (holdem_turns, holdem_showdown) -----------------
    def _close_round(self) -> list[Event]:
        raise NotImplementedError

    def _folded(self, i: int) -> bool:
        raise NotImplementedError

    def _win_uncontested(self, winner: int) -> list[Event]:
        raise NotImplementedError

    def _reveal_all(self, order: list[int]) -> list[Event]:
        raise NotImplementedError

    def _showdown_order(self, hand: Hand, r: BettingRound, live: list[int]) -> list[int]:
        raise NotImplementedError

    def _pots(self, hand: Hand, contrib: list[int], live: list[int] | None = None) -> list[Pot]:
        raise NotImplementedError

    def _end_hand(self) -> list[Event]:
        raise NotImplementedError

    # -- stakes ----------------------------------------------------------------
    def _stakes(self, level: int) -> Data:
        """A fresh copy of :meth:`_level_stakes` (``level``), computed once per level."""
        stakes = self._stakes_by_level.get(level)
        if stakes is None:
            stakes = self._stakes_by_level[level] = self._level_stakes(level)
        return dict(stakes)

    def _level_stakes(self, level: int) -> Data:
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

    # -- the dealer --------------------------------------------------------------
    def _start_hand(self) -> list[Event]:
        """The next hand: positions (FL-1 dead button, NL-4), blind level
        (NL-7), antes then blinds, the deal (G-2, FL-5), the preflop round."""
        events: list[Event] = []
        chips = self.chips
        seats = self.seats
        options = self.options
        alive = [s for s in seats if chips[s] > 0]
        dead_small_blind = False
        if self.positions is None:
            assert self.first_button is not None
            positions = first_positions(alive, self.first_button)
            if options["dead_small_blind"] and len(alive) >= 3:
                # FL-1: the dead small blind's position lies between the button and
                # the big blind, so the next hand's button (the seat that "had the
                # small blind") deals from the same place: record the button there
                dead_small_blind = True
                positions = Positions(positions.button, positions.button, positions.small_blind)
        else:
            positions = next_positions(seats, self.positions, set(alive))
        self.positions = positions
        self.hand_number = number = self.hand_number + 1
        levels = options["blind_levels"]
        level = (number - 1) // levels if levels else 0
        stakes = self._stakes(level)
        if level != self.level:
            self.level = level
            events.append(Event({"type": "blind_level", "level": level, "stakes": stakes, "hand": number}))
        button, small_seat, big_seat = positions
        # the PHH order (Positions.order): the seats dealt in, clockwise from the button's left
        players = [s for s in alive if s > button] + [s for s in alive if s <= button]
        n = len(players)
        bb_i = players.index(big_seat)
        sb_i = None if dead_small_blind or small_seat not in alive else players.index(small_seat)
        if self._pot_memo:
            self._pot_memo.clear()
        hand = Hand()
        hand.number = number
        hand.players = players
        hand.button = button
        hand.small_blind = None if sb_i is None else small_seat
        hand.big_blind = big_seat
        hand.stakes = stakes
        start = [chips[s] for s in players]
        hand.start = start
        stacks = list(start)
        # antes first (pokerkit's order), then blinds: each at most what is left
        ante = stakes["ante"]
        antes_nominal = [ante] * n
        antes_nominal[bb_i] += stakes["big_blind_ante"]
        posts: list[Data] = []
        if ante or antes_nominal[bb_i]:
            antes = [a if a < s else s for a, s in zip(antes_nominal, stacks)]
            for i in range(n):
                a = antes[i]
                if a:
                    stacks[i] -= a
                    posts.append({"seat": players[i], "kind": "ante", "amount": a, "all_in": stacks[i] == 0})
        else:
            antes = [0] * n
        blinds = [0] * n
        posted = [0] * n
        if sb_i is not None:
            blinds[sb_i] = small = stakes["small_blind"]
            b = small if small < stacks[sb_i] else stacks[sb_i]
            posted[sb_i] = b
            stacks[sb_i] -= b
            posts.append({"seat": small_seat, "kind": "small_blind", "amount": b, "all_in": stacks[sb_i] == 0})
        blinds[bb_i] = big = stakes["big_blind"]
        b = big if big < stacks[bb_i] else stacks[bb_i]
        posted[bb_i] = b
        stacks[bb_i] -= b
        posts.append({"seat": big_seat, "kind": "big_blind", "amount": b, "all_in": stacks[bb_i] == 0})
        if options["ante_trimming"]:
            # phh ante trimming (pokerkit): an ante above the second-largest is cut
            # back to it, but each blind is still limited by the stack left after
            # the untrimmed ante
            cutoff = sorted(antes)[-2]
            trimmed = [a if a < cutoff else cutoff for a in antes]
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
        hand.folded = folded = [False] * n
        deck = list(_DECK)  # engine.cards.standard_deck(), canonical order
        self.rng.shuffle(deck)
        hand.deck = deck
        hand.hole = hole = [[deck[i], deck[n + i]] for i in range(n)]
        hand.next_card = 2 * n
        hand.board = []
        hand.street = 0
        hand.shown = [False] * n
        hand.show_pref = [False] * n
        hand.revealed = False
        hand.actions = [f"d dh p{i + 1} {c[0]}{c[1]}" for i, c in enumerate(hole)]
        hand.aggressor = None
        hand.finish = None
        hand.over = False
        hand.round = None
        self.hand = hand
        keys = [str(s) for s in players]
        events.append(Event({"type": "hand_start", "hand": number, "button": button, "small_blind": hand.small_blind,
                             "big_blind": big_seat, "players": list(players), "stacks": dict(zip(keys, start)),
                             "stakes": stakes}))
        events.append(Event({"type": "blinds", "posts": posts, "stacks": dict(zip(keys, stacks))}))
        events.append(Event({"type": "hole_cards", "seats": list(players), "count": 2},
                            {s: {"cards": list(hole[i])} for i, s in enumerate(players)}))
        # preflop: first to act is left of the big blind (heads-up: the button);
        # phh: left of the largest blind posted (the last such player), as pokerkit opens
        if self.phh:
            top, most = 0, -1
            for i in range(n):
                b = posted[i] if blinds[i] else 0
                if b >= most:
                    top, most = i, b
            first = (top + 1) % n
        else:
            first = (bb_i + 1) % n
        hand.round = r = BettingRound.begin(self.rules, stacks, posted, folded, first=first,
                                            size=self._round_size(0, stakes), cap=self._cap(),
                                            level=big, count=self._preflop_count())
        if r.queue:
            events.append(Event({"type": "turn", "seat": players[r.queue[0]], "street": "preflop"}))
        else:
            events += self._close_round()
        return events

    def _deal_street(self) -> list[Event]:
        """The next street's cards after one burn (FL-5), then its betting
        round, or none when at most one player has chips left (FL-8)."""
        hand = self.hand
        assert hand is not None
        hand.street = street = hand.street + 1
        k = hand.next_card + 1  # FL-5: burn one card first
        end = k + 3 if street == 1 else k + 1
        cards = hand.deck[k:end]
        hand.next_card = end
        board = hand.board
        board += cards
        hand.actions.append("d db " + "".join(cards))
        name = STREETS[street]
        events = [Event({"type": "board", "street": name, "cards": cards, "board": list(board)})]
        stacks, folded = hand.stacks, hand.folded
        live_with_chips = 0
        for i in range(len(stacks)):
            if stacks[i] and not folded[i]:
                live_with_chips += 1
        if live_with_chips <= 1:  # FL-8: no betting, run the board out
            self._pending = "showdown" if street == 3 else "street"
            return events
        hand.round = r = BettingRound.begin(self.rules, stacks, None, folded, first=0,
                                            size=self._round_size(street, hand.stakes), cap=self._cap())
        if r.queue:
            events.append(Event({"type": "turn", "seat": hand.players[r.queue[0]], "street": name}))
            return events
        return events + self._close_round()
