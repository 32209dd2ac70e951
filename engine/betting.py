"""One betting round: who acts, what they may do, and what their action does.

Shared by both Hold'em games and by Alamo (RULES AL-5: no-limit counted in
cards, minimum bet 1). Amounts are integers in abstract units: chips for
Hold'em, cards for Alamo. The round is plain data plus pure rules: a
:class:`BettingRound` holds lists indexed by **player index** ``0..n-1`` in
clockwise table order (for Hold'em: the PHH order, index 0 = first seat left of
the button), and a frozen :class:`BettingRules` says how betting works.

Units and shapes
    ``stacks[i]``  chips (or cards) behind, not yet bet.
    ``bets[i]``    what ``i`` put in during this round (blinds included).
    ``folded[i]``  True once ``i`` folded (in this or an earlier round).
    amounts of ``bet``/``raise`` are **raise-to totals** for the round (NL-2).
    ``call`` amounts are what is added.

How betting works (structures, short all-ins) is :class:`BettingRules`
(:mod:`cardhall.engine.betting_rules`); the round below plays by it.

Turn order (every structure): the players to act form a queue, starting at
``first``; players who folded or have nothing behind never act. At the start of
a round a player whose effective stack is 0 (nobody left to bet against) is
skipped, and a lone player who already matches the largest bet does not act. A
bet or raise puts every other player with chips back in the queue in clockwise
order; the round is over when the queue is empty or one player is left.

Typical use (NL 10/20 heads-up preflop; index 0 = big blind, 1 = button/small
blind, who acts first):

>>> r = BettingRound.begin(NO_LIMIT, stacks=[980, 990], bets=[20, 10], first=1, size=20)
>>> r.to_act, [a.to_data() for a in r.legal()]
(1, [{'type': 'fold'}, {'type': 'call', 'min': 10, 'max': 10}, {'type': 'raise', 'min': 40, 'max': 1000}, {'type': 'all_in', 'min': 1000, 'max': 1000, 'as': 'raise'}])
>>> r.act("raise", 60)
Move(player=1, kind='raise', added=50, total=60, all_in=False)
>>> r.act("call")
Move(player=0, kind='call', added=40, total=60, all_in=False)
>>> r.done, r.bets, r.stacks
(True, [60, 60], [940, 940])

Fixed limit, FL-3: 15 over a 10 bet is a full raise; the next raise goes to 25.

>>> r = BettingRound.begin(FIXED_LIMIT, stacks=[100, 15, 100], first=0, size=10, cap=4)
>>> r.act("bet", 10).total, r.act("all_in")
(10, Move(player=1, kind='raise', added=15, total=15, all_in=True))
>>> r.current, r.count, r.legal()[2].to_data()
(15, 2, {'type': 'raise', 'min': 25, 'max': 25})

Less than half a bet does not reopen for a player who already acted (FL-3):

>>> r = BettingRound.begin(FIXED_LIMIT, stacks=[100, 14, 100], first=0, size=10, cap=4)
>>> _ = r.act("bet", 10); _ = r.act("all_in"); _ = r.act("call")
>>> r.to_act, [a.type for a in r.legal()]
(0, ['fold', 'call'])
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from cardhall.engine.base import IllegalAction, LegalAction
from cardhall.engine.betting_rules import (
    FIXED,
    FIXED_LIMIT,
    FIXED_LIMIT_PHH,
    NO_LIMIT,
    NO_LIMIT_PHH,
    REOPEN_MODES,
    UNLIMITED,
    BettingRules,
    Data,
    Move,
    Options,
    Turn,
    legal_list,
)

#: the round, and (from :mod:`cardhall.engine.betting_rules`) the rules it plays by
__all__ = ["BettingRound", "BettingRules", "FIXED", "FIXED_LIMIT", "FIXED_LIMIT_PHH", "Move", "NO_LIMIT",
           "NO_LIMIT_PHH", "Options", "REOPEN_MODES", "Turn", "UNLIMITED"]

#: the legal-action lists built so far, by what decides them (``BettingRound._compute_turn``'s key)
_LEGAL_LISTS: dict[tuple[Any, ...], list[LegalAction]] = {}


def _remember(key: tuple[Any, ...], legal: list[LegalAction]) -> None:
    if len(_LEGAL_LISTS) > 4096:
        _LEGAL_LISTS.clear()
    _LEGAL_LISTS[key] = legal


@functools.lru_cache(maxsize=1024)
def _clockwise(n: int, first: int) -> tuple[int, ...]:
    """Player indices ``first, first + 1, ..., n - 1, 0, ..., first - 1`` (clockwise from ``first``)."""
    return (*range(first, n), *range(first))


@functools.lru_cache(maxsize=1024)
def _others(n: int, i: int) -> tuple[int, ...]:
    """Every player index but ``i``, clockwise from ``i``'s left."""
    return (*range(i + 1, n), *range(i))


_FIELDS = (
    "stacks", "bets", "folded", "queue", "current", "size", "cap", "count",
    "full_level", "min_raise", "acted", "shorts", "aggressor",
)


class BettingRound:
    """The state of one betting round (plain data) and its rules.

    Fields (lists are indexed by player index, clockwise):

    ``stacks``, ``bets``, ``folded``: as in the module docstring.
    ``queue``: player indices still to act, front first (``to_act`` is
    ``queue[0]``). ``current``: the total a player must reach to stay in
    (normally the largest bet; FL-4 keeps it at the full big blind preflop).
    ``size``: fixed limit: the bet of this round; no limit: the minimum bet.
    ``cap``: counted bets allowed this round (None: no cap). ``count``: bets
    and raises counted so far (FL-2: the big blind counts as one preflop at
    the tables). ``full_level``: the total of the last full bet (``half_bet``).
    ``min_raise``: the last full raise (``full_raise``) or pokerkit's
    completion amount (``pokerkit``). ``acted``: per player, the ``current``
    when they last acted, -1 if they have not (``pokerkit``: 1/0 for
    pokerkit's acted set). ``shorts``: pokerkit's consecutive short all-in
    increments. ``aggressor``: the last player to bet or raise, or None.

    Build one with :meth:`begin`; never mutate the fields from outside.
    """

    __slots__ = ("rules", "_turn") + _FIELDS

    rules: BettingRules
    stacks: list[int]
    bets: list[int]
    folded: list[bool]
    queue: list[int]
    current: int
    size: int
    cap: int | None
    count: int
    full_level: int
    min_raise: int
    acted: list[int]
    shorts: list[int]
    aggressor: int | None
    _turn: Turn | None

    # -- construction -----------------------------------------------------
    @classmethod
    def begin(
        cls,
        rules: BettingRules,
        stacks: Sequence[int],
        bets: Sequence[int] | None = None,
        folded: Sequence[bool] | None = None,
        *,
        first: int,
        size: int,
        cap: int | None = None,
        level: int | None = None,
        count: int = 0,
    ) -> BettingRound:
        """Open a round.

        ``stacks``: chips behind per player; ``bets``: what each already put in
        this round (blinds; default zeros); ``folded``: default all False.
        ``first``: index of the first player to act (preflop: left of the big
        blind, or the button heads-up; later: first left of the button).
        ``size``: the fixed bet (fixed limit) or minimum bet (no limit), > 0.
        ``cap``: counted bets allowed (fixed limit; None = no cap). ``level``:
        the amount to call at the start (default the largest bet; FL-4 passes
        the full big blind). ``count``: bets already counted (FL-2 passes 1
        preflop at the tables, the big blind being the opening bet).
        The lists are copied. Raises ValueError on inconsistent input.
        """
        n = len(stacks)
        if n < 2:
            raise ValueError("a betting round needs at least two players")
        if size <= 0:
            raise ValueError("size must be positive")
        self = cls()
        self.rules = rules
        self.stacks = stacks = list(stacks)
        self.bets = bets = list(bets) if bets is not None else [0] * n
        self.folded = folded = list(folded) if folded is not None else [False] * n
        if len(bets) != n or len(folded) != n or not 0 <= first < n:
            raise ValueError("stacks, bets, folded and first disagree")
        if min(stacks) < 0 or min(bets) < 0:
            raise ValueError("negative stack or bet")
        top = max(bets)
        pokerkit = rules.reopen == "pokerkit"
        self.current = current = top if (level is None or pokerkit or level < top) else level
        self.size = size
        self.cap = cap
        self.count = 0 if pokerkit else count
        self.full_level = current if self.count else 0
        self.min_raise = 0 if pokerkit else size
        self.acted = [0 if pokerkit else -1] * n
        self.shorts = []
        self.aggressor = None
        self._turn = None
        # the queue: live players with chips, from `first`, whose effective
        # stack is positive (pokerkit's rule, also ours: nobody to bet against)
        totals = sorted([stacks[i] + bets[i] for i in range(n) if not folded[i]])
        live = len(totals)
        second = totals[-2] if live > 1 else 0
        queue = [i for i in _clockwise(n, first) if not folded[i] and stacks[i] and bets[i] < second]
        if live <= 1 or (len(queue) == 1 and bets[queue[0]] >= current):
            queue = []
        self.queue = queue
        return self

    # -- questions --------------------------------------------------------
    @property
    def to_act(self) -> int | None:
        """Index of the player to act, or None when the round is over."""
        return self.queue[0] if self.queue else None

    @property
    def done(self) -> bool:
        """True when nobody is left to act."""
        return not self.queue

    @property
    def live(self) -> list[int]:
        """Indices of players who have not folded."""
        return [i for i, f in enumerate(self.folded) if not f]

    def options(self) -> Options:
        """The choices of :attr:`to_act`; raises IllegalAction if the round is over."""
        _, call, low, high, closed, _ = self.turn()
        return Options(call, low, high, closed)

    def turn(self) -> Turn:
        """Everything the player to act may do, computed once per state: the
        ``Turn`` tuple ``(player, call, raise_min, raise_max, closed_by,
        legal)`` (the fields of :class:`Options`, then the
        :meth:`legal` list, shared: never change it). :meth:`legal`,
        :meth:`options` and :meth:`act` all answer from it. Raises
        IllegalAction if the round is over."""
        turn = self._turn
        if turn is None:
            turn = self._turn = self._compute_turn()
        return turn

    def _compute_turn(self) -> Turn:
        queue = self.queue
        if not queue:
            raise IllegalAction("not_your_turn", "nobody is to act in this betting round")
        i = queue[0]
        stack, bet = self.stacks[i], self.bets[i]
        rules = self.rules
        current = self.current
        owed = current - bet if current > bet else 0
        call = owed if owed < stack else stack
        allin = stack + bet
        fold = bool(call) or rules.free_fold
        closed = self._raise_closed(i, call)
        if closed:
            key: tuple[Any, ...] = (fold, call, allin if call and call == stack else -1)
            legal = _LEGAL_LISTS.get(key)
            if legal is None:
                legal = legal_list(fold, call, allin if call and call == stack else -1, None, None, "call")
                _remember(key, legal)
            return (i, call, None, None, closed, legal)
        if rules.reopen == "pokerkit":
            target = (self.min_raise if self.min_raise > self.size else self.size) + current
        elif rules.limit == FIXED:
            target = self.full_level + self.size
        else:
            target = current + self.min_raise
        low = target if target < allin else allin
        high = low if rules.limit == FIXED else allin
        kind = "raise" if current else "bet"
        key = (fold, call, allin if high == allin else -1, low, high, kind)
        legal = _LEGAL_LISTS.get(key)
        if legal is None:
            legal = legal_list(fold, call, allin if high == allin else -1, low, high, kind)
            _remember(key, legal)
        return (i, call, low, high, None, legal)

    def _raise_closed(self, i: int, call: int) -> str | None:
        stack, bet = self.stacks[i], self.bets[i]
        current = self.current
        if stack <= current - bet:
            return "covered"  # calling takes everything: no raise
        stacks, bets, folded = self.stacks, self.bets, self.folded
        for j in range(len(stacks)):
            if j != i and not folded[j] and stacks[j] + bets[j] > current:
                break
        else:
            return "nobody_to_raise"  # everyone else folded or is all-in
        if self.cap is not None and self.count >= self.cap:
            return "cap_reached"
        mode = self.rules.reopen
        if mode == "pokerkit":
            if call < self.min_raise:
                return "not_reopened"
            if self.shorts and sum(self.shorts) < self.min_raise and self.acted[i]:
                return "not_reopened"
            return None
        acted = self.acted[i]
        if acted < 0:
            return None
        raised = current - acted
        if mode == "half_bet":
            return None if 2 * raised >= self.size else "not_reopened"
        return None if raised >= self.min_raise else "not_reopened"

    def legal(self) -> list[LegalAction]:
        """The legal actions of :attr:`to_act` (empty when the round is over).

        ``fold`` (when facing a bet, or always if ``free_fold``); ``check`` or
        ``call`` (min = max = chips added); ``bet`` (nothing to call yet) or
        ``raise`` with raise-to totals; ``all_in`` when going all-in is one of
        those (min = max = the street total afterwards, ``extra["as"]`` its
        kind).
        """
        turn = self._turn
        if turn is None:
            if not self.queue:
                return []
            turn = self._turn = self._compute_turn()
        return list(turn[5])

    def uncalled(self) -> tuple[int, int] | None:
        """``(player, chips)`` of a bet nobody matched (the excess of the largest
        bet over the second largest, folded players' bets included; FL-6),
        or None."""
        bets = self.bets
        second, top = sorted(bets)[-2:]
        return (bets.index(top), top - second) if top > second else None

    # -- the one input ----------------------------------------------------
    def act(self, kind: str, amount: int | None = None) -> Move:
        """Apply the action of :attr:`to_act` and return what it did.

        ``kind``: ``fold``, ``check``, ``call``, ``bet``, ``raise`` (``amount``
        = raise-to total; optional in fixed limit, where it must equal the
        fixed total) or ``all_in`` (``amount`` optional, must equal the all-in
        total). Raises :class:`IllegalAction` naming the rule and leaves the
        state unchanged.
        """
        return Move(*self.step(kind, amount))

    def step(self, kind: str, amount: int | None = None) -> tuple[int, str, int, int, bool]:
        """:meth:`act` as a plain tuple ``(player, kind, added, total, all_in)``
        (the fields of :class:`Move`): the engines' per-decision path. The
        action is checked against :meth:`turn`; a refused one leaves the state
        (and the computed turn) unchanged."""
        turn = self._turn
        if turn is None:
            turn = self._turn = self._compute_turn()
        i, call, low, high, closed, _ = turn
        rules = self.rules
        # the common actions, checked and applied in place
        if amount is None:
            if kind == "call":
                if call:
                    self._turn = None
                    return self._call(i, call)
            elif kind == "check":
                if not call:
                    self._turn = None
                    self._acted(i)
                    self.queue.pop(0)
                    return (i, "check", 0, self.bets[i], False)
            elif kind == "fold":
                if call or rules.free_fold:
                    self._turn = None
                    self.folded[i] = True
                    self._acted(i)
                    self.queue.pop(0)
                    if self.folded.count(False) <= 1:
                        self.queue = []
                    return (i, "fold", 0, self.bets[i], False)
        elif low is not None and high is not None and type(amount) is int and low <= amount <= high and (
            kind == "raise" if self.current else kind == "bet"
        ):
            self._turn = None
            return self._raise(i, amount, kind)
        # everything else, with the rule each refusal names
        return self._act(i, call, low, high, closed, kind, amount)

    def _act(self, i: int, call: int, low: int | None, high: int | None, closed: str | None, kind: str,
             amount: int | None) -> tuple[int, str, int, int, bool]:
        rules = self.rules
        if amount is not None and kind in ("fold", "check"):
            raise IllegalAction("bad_amount", f"a {kind} takes no amount", rules.amount_rule)
        if kind == "fold":
            raise IllegalAction("check_available", "folding is not allowed when checking is free; check instead", rules.amount_rule)
        if kind == "check":
            raise IllegalAction("cannot_check", f"there is a bet to call ({call})", rules.amount_rule)
        if kind == "call":
            if not call:
                raise IllegalAction("nothing_to_call", "there is no bet to call; check instead", rules.amount_rule)
            if amount != call:
                raise IllegalAction("bad_amount", f"a call here adds exactly {call}", rules.amount_rule)
            self._turn = None
            return self._call(i, call)
        if kind == "all_in":
            allin = self.stacks[i] + self.bets[i]
            if amount is not None and (type(amount) is not int or amount != allin):
                raise IllegalAction("bad_amount", f"an all-in here is a total of {allin}", rules.amount_rule)
            if high == allin:
                self._turn = None
                return self._raise(i, allin, "raise" if self.current else "bet")
            if call and call == self.stacks[i]:
                self._turn = None
                return self._call(i, call)
            raise IllegalAction(
                "all_in_not_allowed",
                self._closed_message(closed) if low is None else "going all-in is not a legal amount here",
                self._closed_rule(closed) if low is None else rules.amount_rule,
            )
        if kind in ("bet", "raise"):
            if kind == "bet" and self.current:
                raise IllegalAction("use_raise", f"there is already a bet of {self.current}; raise instead", rules.amount_rule)
            if kind == "raise" and not self.current:
                raise IllegalAction("use_bet", "there is no bet to raise; bet instead", rules.amount_rule)
            if low is None:
                raise IllegalAction(closed or "raise_closed", self._closed_message(closed), self._closed_rule(closed))
            assert high is not None
            if amount is None:
                if rules.limit != FIXED:
                    raise IllegalAction("amount_required", f"a {kind} needs a raise-to amount", rules.amount_rule)
                amount = low
            if type(amount) is not int:
                raise IllegalAction("bad_amount", f"amount must be a whole number, not {amount!r}", rules.amount_rule)
            if amount < low:
                raise IllegalAction(
                    "amount_too_small", f"the smallest {kind} here is to {low}, not {amount}", rules.amount_rule
                )
            if amount > high:
                if rules.limit == FIXED:
                    raise IllegalAction("amount_not_fixed", f"in fixed limit a {kind} here is to exactly {low}", rules.amount_rule)
                raise IllegalAction(
                    "amount_too_large", f"the largest {kind} here is to {high} (all-in), not {amount}", rules.amount_rule
                )
            self._turn = None
            return self._raise(i, amount, kind)
        raise IllegalAction("unknown_action", f"unknown betting action {kind!r}")

    def _closed_message(self, closed: str | None) -> str:
        return {
            "covered": "calling takes all your chips; you cannot raise",
            "nobody_to_raise": "every other player is all-in or folded; you may only call or fold",
            "cap_reached": f"the betting is capped at {self.cap} bets this round",
            "not_reopened": "a short all-in did not reopen the betting for you; call or fold",
        }.get(closed or "", "raising is closed")

    def _closed_rule(self, closed: str | None) -> str:
        if closed == "cap_reached":
            return self.rules.cap_rule
        if closed == "not_reopened":
            return self.rules.reopen_rule
        return self.rules.amount_rule

    def _acted(self, i: int) -> None:
        if self.rules.reopen == "pokerkit":
            self.acted[i] = 1
        else:
            self.acted[i] = self.current

    def _call(self, i: int, chips: int) -> tuple[int, str, int, int, bool]:
        stacks, bets = self.stacks, self.bets
        stacks[i] -= chips
        bets[i] += chips
        self._acted(i)
        self.queue.pop(0)
        return (i, "call", chips, bets[i], stacks[i] == 0)

    def _raise(self, i: int, total: int, kind: str) -> tuple[int, str, int, int, bool]:
        stacks = self.stacks
        added = total - self.bets[i]
        stacks[i] -= added
        self.bets[i] = total
        all_in = stacks[i] == 0
        previous = self.current
        increment = total - previous
        mode = self.rules.reopen
        if mode == "pokerkit":
            if increment >= self.min_raise:
                self.acted = [0] * len(self.acted)
            self.acted[i] = 1
            if increment > self.min_raise:
                self.min_raise = increment
            self.count += 1
            if all_in:
                self.shorts.append(increment)
                if sum(self.shorts) >= self.min_raise:
                    self.shorts.clear()
            else:
                self.shorts.clear()
        elif mode == "half_bet":
            if 2 * (total - self.full_level) >= self.size:  # FL-3: at least half a bet is full
                self.full_level = total
                self.count += 1
            self.acted[i] = total
        else:
            if increment >= self.min_raise:  # NL-2 / NL-3: a full bet or raise
                self.min_raise = increment
            self.acted[i] = total
        self.current = total
        self.aggressor = i
        folded = self.folded
        self.queue = [j for j in _others(len(stacks), i) if not folded[j] and stacks[j]]
        return (i, kind, added, total, all_in)

    def _close_if_alone(self) -> None:
        if self.folded.count(False) <= 1:
            self.queue = []

    # -- settling ---------------------------------------------------------
    def return_uncalled(self) -> tuple[int, int] | None:
        """Give an unmatched bet back to its owner (FL-6) and return
        ``(player, chips)``, or None. Call once the round is over."""
        out = self.uncalled()
        if out:
            i, chips = out
            self._turn = None
            self.bets[i] -= chips
            self.stacks[i] += chips
        return out

    # -- persistence ------------------------------------------------------
    def to_data(self, copy: bool = True) -> Data:
        """Plain data (msgpack/JSON-able); :meth:`from_data` restores it exactly.
        ``copy=False`` shares this round's lists (``Engine.state_data``)."""
        out: Data = {"rules": self.rules.to_data()}
        for name in _FIELDS:
            value = getattr(self, name)
            out[name] = list(value) if copy and isinstance(value, list) else value
        return out

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> BettingRound:
        """Inverse of :meth:`to_data`; raises ValueError on malformed data."""
        self = cls()
        self._turn = None
        try:
            self.rules = BettingRules.from_data(data["rules"])
            for name in _FIELDS:
                value = data[name]
                setattr(self, name, list(value) if isinstance(value, (list, tuple)) else value)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed betting round: {exc}") from exc
        return self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BettingRound) and self.to_data() == other.to_data()

    def __repr__(self) -> str:
        return f"BettingRound(to_act={self.to_act}, current={self.current}, bets={self.bets}, stacks={self.stacks})"
