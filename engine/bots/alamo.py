"""The Alamo ``equity`` bot: showdown odds by Monte Carlo, the rest of the street by expectimax.

The bot sees only what its seat sees (``Alamo.view(seat)`` and the legal
actions as plain data): its hole cards, the board, hands shown, how many cards
each stack, bet and the pot hold. Amounts are cards, bet and raise amounts
raise-to totals for the street (AL-5).

How it decides
    1. **Showdown outcomes.** Every card it has not seen is equally likely to
       be anywhere, so a Monte Carlo over the unseen cards deals random hands
       to the opponents (hands already shown stay as they are) and the board
       cards still to come, ranked with wild jokers (AL-2,
       :mod:`cardhall.engine.games.alamo_ranking`). For each group of opponents it
       records what share of a pot contested with that group this seat wins
       (1, 0, or a split), giving a small table of outcomes and their
       frequencies (:func:`showdown_shares`). The board only grows while
       face-down pot cards remain (AL-6), so there is one table per number of
       cards still to come, which depends on how many cards are bet.
    2. **The rest of the street.** Every opponent is modelled as the
       ``random`` bot: a uniform choice among its legal actions, then a
       uniform amount (a few amounts spread over the range stand for it).
       From the view the bot rebuilds the street (stacks, bets, who still
       acts) and scores each of its own options by expectimax: the average
       over the opponents' choices, its own best reply wherever it acts
       again, to a bounded depth (:class:`Street`).
    3. **The value of an outcome.** At the end of the street the pots are
       formed as the engine forms them (side pots by contribution,
       :func:`cardhall.engine.pots.side_pots`; the hole cards and an eliminated
       player's cards go with the main pot, AL-4, AL-7) and shared by the
       outcome table. The cards the seat then holds count through a concave
       utility, ``(cards / all cards) ** gamma``, and 0 when they are too few
       to ante and pull a hand (AL-7).

Why the utility: a match is won only by taking every card, and the bot wins
far more than its share of the hands it chooses to play, so a coin flip for
its whole stack costs it more than it gains.

Measured against ``random`` (:func:`cardhall.engine.play.win_rate`, ``cardhall bench
engine``): three players, fair share 0.33: 0.57 and 0.53 over two runs of 500
matches (0.49 with ``gamma = 1``, cards alone; 0.47 for the earlier pot-odds
bot); the default 200-match run 0.53, 95% interval [0.46, 0.60]. Heads-up,
fair share 0.5: 0.72 over 500 (the pot-odds bot 0.61); 200 matches 0.705
[0.64, 0.76]. About 5 ms per decision, mostly the Monte Carlo.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import eval7

from cardhall.engine.bots.base import Bot, Data
from cardhall.engine.cards import standard_deck
from cardhall.engine.games.alamo_ranking import wild_value
from cardhall.engine.pots import side_pots
from cardhall.engine.ranking import eval7_cards
from cardhall.engine.rng import FairRandom

SAMPLES = 200
GAMMA = 0.7
HOLE = 2
_EVAL7 = dict(zip(standard_deck(), eval7_cards(standard_deck())))

#: one row of an outcome table: (share won against each group of opponents, frequency)
Outcome = tuple[tuple[float, ...], float]


def _value(cards: Sequence[str]) -> int:
    """Hand value with wild jokers; the jokerless case goes straight to eval7."""
    plain = [c for c in cards if c[0] != "X"]
    if len(plain) == len(cards):
        return eval7.evaluate([_EVAL7[c] for c in plain])
    return wild_value(plain, len(cards) - len(plain))


def opponent_groups(opponents: int) -> list[tuple[int, ...]]:
    """Every non-empty group of opponents (indices), singles first: the
    columns of :func:`showdown_shares`' tables.

    >>> opponent_groups(2)
    [(0,), (1,), (0, 1)]
    """
    return [group for k in range(1, opponents + 1) for group in itertools.combinations(range(opponents), k)]


def showdown_shares(
    hole: Sequence[str],
    board: Sequence[str],
    opponents: Sequence[Sequence[str] | None],
    to_come: Iterable[int],
    samples: int,
    rng: FairRandom,
    unseen: Sequence[str],
) -> dict[int, list[Outcome]]:
    """Monte Carlo outcome tables of ``hole`` against ``opponents`` (AL-2, AL-6).

    ``opponents``: each opponent's hand if shown, else None (a random hand
    from ``unseen``). ``to_come``: the numbers of board cards still to turn
    to tabulate (``len(board) + n`` must be 3 to 5). Returns
    ``{n: [(shares, frequency), ...]}``: ``shares[k]`` is the part of a pot
    contested with the opponents of ``opponent_groups(len(opponents))[k]``
    that ``hole`` wins (1, 0, or 1/k for a k-way tie); frequencies add up to
    1. Each sample deals the most cards asked for; fewer cards to come use the
    first of them. Raises ValueError when ``unseen`` is too small or a
    showdown would have fewer than five cards per player.
    """
    counts = sorted(set(to_come))
    full = counts[-1]
    if len(board) + counts[0] + len(hole) < 5 or len(board) + full > 5:
        raise ValueError("a showdown needs five to seven cards per player")
    hidden = sum(1 for hand in opponents if hand is None)
    need = full + HOLE * hidden
    pool = list(unseen)
    n = len(pool)
    if need > n:
        raise ValueError(f"{need} unseen cards needed, {n} left")
    evaluate: Callable[[list[str]], int] = _value
    if not any(c[0] == "X" for c in [*pool, *hole, *board]):
        evaluate = _plain_value
    groups = opponent_groups(len(opponents))
    tables: dict[int, Counter[tuple[float, ...]]] = {t: Counter() for t in counts}
    mine_fixed, shown = list(hole) + list(board), list(board)
    randbelow = rng.randbelow
    for _ in range(samples):
        # partial Fisher-Yates: pool[:need] becomes a uniform random draw
        for i in range(need):
            j = i + randbelow(n - i)
            pool[i], pool[j] = pool[j], pool[i]
        extra = pool[:full]
        hands, k = [], full
        for hand in opponents:
            if hand is None:
                hands.append(pool[k : k + HOLE])
                k += HOLE
            else:
                hands.append(list(hand))
        for t in counts:
            turned = extra[:t]
            mine = evaluate(mine_fixed + turned)
            values = [evaluate(hand + shown + turned) for hand in hands]
            tables[t][tuple(_share(mine, [values[i] for i in group]) for group in groups)] += 1
    return {t: [(shares, count / samples) for shares, count in table.items()] for t, table in tables.items()}


def _plain_value(cards: list[str]) -> int:
    return eval7.evaluate([_EVAL7[c] for c in cards])


def _share(mine: int, theirs: list[int]) -> float:
    best = max(theirs)
    if mine != best:
        return 1.0 if mine > best else 0.0
    return 1.0 / (1 + theirs.count(best))


def alamo_equity(
    hole: Sequence[str],
    board: Sequence[str],
    opponents: int,
    to_come: int,
    samples: int,
    rng: FairRandom,
    unseen: Sequence[str],
) -> float:
    """Monte Carlo showdown share of ``hole`` in ``[0, 1]`` against ``opponents``
    random hands (ties count 1/k; 0 opponents give 1.0).

    ``board``: the board so far (3 to 5 cards, or none preflop); ``to_come``:
    board cards still to turn (``len(board) + to_come`` must reach 3 and be at
    most 5); ``unseen``: the cards those hands and the rest of the board come
    from (may hold jokers: AL-2). Raises ValueError when ``unseen`` is too small.
    """
    if opponents <= 0:
        return 1.0
    table = showdown_shares(hole, board, [None] * opponents, [to_come], samples, rng, unseen)[to_come]
    return sum(shares[-1] * frequency for shares, frequency in table)


class Street:
    """The betting street as one seat sees it, and the value of each way it can end.

    Built from the seat's ``view`` and legal actions (:meth:`from_view`);
    :meth:`value` scores one of the seat's actions by expectimax over the
    rest of the street, every opponent choosing as the ``random`` bot does.
    Seats are table seats; amounts are cards.
    """

    #: total raise-to of a random raise, as fractions of its range from min to max
    raise_points = (0.25, 0.75)
    #: actions after which the street is scored as it stands
    max_depth = 7

    def __init__(
        self,
        me: int,
        players: list[int],
        live: list[int],
        behind: dict[int, int],
        bets: dict[int, int],
        contributed: dict[int, int],
        extra: int,
        face_down: int,
        board: int,
        pending: list[int],
        min_raise: int,
        utility: Callable[[float], float],
        tables: Mapping[int, list[Outcome]],
        groups: Mapping[frozenset[int], int],
    ) -> None:
        self.me = me
        self.players = players  # clockwise from the dealer's left: the order of play
        self.live = live
        self.behind = behind
        self.bets = bets
        self.contributed = contributed
        self.extra = extra  # cards the main pot's winner takes besides the bets: hole cards, eliminated stacks
        self.face_down = face_down
        self.board = board
        self.pending = pending  # seats still to act after this seat as things stand
        self.min_raise = min_raise
        self.utility = utility
        self.tables = tables
        self.groups = groups
        self._ends: dict[Any, float] = {}

    @classmethod
    def from_view(cls, view: Mapping[str, Any], legal: Sequence[Data], samples: int, rng: FairRandom, gamma: float) -> Street:
        """The street of ``view``'s seat, with its outcome tables drawn by ``rng``."""
        me = view["seat"]
        players = list(view["players"])
        folded = set(view["folded"])
        live = [s for s in players if s not in folded]
        behind = {s: view["stacks"][str(s)] for s in players}
        street_bets = view.get("bets") or {}
        bets = {s: street_bets.get(str(s), 0) for s in players}
        contributed = {s: view["contributed"].get(str(s), 0) for s in players}
        # the pot holds every bet and ante plus an eliminated player's cards (AL-7)
        extra = view["pot"] - sum(contributed.values()) + HOLE * len(players)
        current = max(bets.values())
        wager = next((a for a in legal if a["type"] in ("bet", "raise")), None)
        min_raise = max(1, wager["min"] - current) if wager else 1
        # still to act after this seat: whoever has a bet to match, and before
        # any bet the players later in the order (the first is left of the dealer)
        mine = players.index(me)
        after = players[mine + 1 :] + players[:mine]
        pending = [s for s in after if s in live and behind[s] > 0
                   and (bets[s] < current or (current == 0 and players.index(s) > mine))]
        board = len(view["board"])
        face_down = view["face_down"]
        opponents = [s for s in live if s != me]
        shown = {int(s): list(cards) for s, cards in (view.get("shown") or {}).items()}
        hole = list(view["my_cards"])
        seen = set(hole) | set(view["board"]) | {c for s, cards in shown.items() if s != me for c in cards}
        unseen = [c for c in standard_deck(2 if view["options"].get("jokers") else 0) if c not in seen]
        total = len(unseen) + len(seen)
        low = min(5 - board, max(face_down, 3 - board))
        tables = showdown_shares(hole, view["board"], [shown.get(s) for s in opponents], range(low, 5 - board + 1),
                                 samples, rng, unseen)
        groups = {frozenset(opponents[i] for i in group): k for k, group in enumerate(opponent_groups(len(opponents)))}
        floor = view.get("ante", 1) + HOLE

        def utility(cards: float) -> float:
            return 0.0 if cards < floor else (cards / total) ** gamma

        return cls(me, players, live, behind, bets, contributed, extra, face_down, board, pending, min_raise,
                   utility, tables, groups)

    # -- the seat's options ----------------------------------------------------------
    def value(self, action: Data) -> float:
        """Expected utility of this seat's ``action`` (a legal action map)."""
        me, bets, behind = self.me, self.bets, self.behind
        current = max(bets.values())
        kind = action["type"]
        if kind == "fold":
            return self._node(self.pending, bets, behind, frozenset({me}), current, self.min_raise, 0)
        if kind == "check":
            return self._node(self.pending, bets, behind, frozenset(), current, self.min_raise, 0)
        if kind == "call":
            total = min(current, bets[me] + behind[me])
        elif kind == "all_in":
            total = bets[me] + behind[me]
        else:
            total = action["amount"]
        return self._after(me, total, self.pending, bets, behind, frozenset(), current, self.min_raise, 0)

    # -- expectimax --------------------------------------------------------------------
    def _after(self, seat: int, total: int, queue: list[int], bets: dict[int, int], behind: dict[int, int],
               folded: frozenset[int], current: int, min_raise: int, depth: int) -> float:
        """Value once ``seat`` has brought its bet for the street to ``total``."""
        behind = {**behind, seat: behind[seat] - (total - bets[seat])}
        bets = {**bets, seat: total}
        if total > current:  # a bet or raise: everyone else with cards acts again (NL-2)
            min_raise = max(min_raise, total - current)
            i = self.players.index(seat)
            order = self.players[i + 1 :] + self.players[:i]
            queue = [s for s in order if s in self.live and s not in folded and behind[s] > 0]
            current = total
        return self._node(queue, bets, behind, folded, current, min_raise, depth + 1)

    def _node(self, queue: list[int], bets: dict[int, int], behind: dict[int, int], folded: frozenset[int],
              current: int, min_raise: int, depth: int) -> float:
        """Value with ``queue`` still to act: this seat's best option, an
        opponent's average over its legal options (the ``random`` bot)."""
        queue = [s for s in queue if s not in folded and behind[s] > 0]
        if not queue or depth >= self.max_depth or sum(1 for s in self.live if s not in folded) <= 1:
            return self._end(bets, behind, folded)
        seat, rest = queue[0], queue[1:]
        values = []
        for kind, totals in self._options(seat, bets, behind, folded, current, min_raise):
            if kind == "fold":
                values.append(self._node(rest, bets, behind, folded | {seat}, current, min_raise, depth + 1))
            else:
                outcomes = [self._after(seat, t, rest, bets, behind, folded, current, min_raise, depth) for t in totals]
                values.append(max(outcomes) if seat == self.me else sum(outcomes) / len(outcomes))
        return max(values) if seat == self.me else sum(values) / len(values)

    def _options(self, seat: int, bets: dict[int, int], behind: dict[int, int], folded: frozenset[int],
                 current: int, min_raise: int) -> list[tuple[str, list[int]]]:
        """``seat``'s legal options as the engine lists them (fold on any turn,
        AL-5; check or call, a bet or raise and all-in when raising is open, or
        all-in as a call that takes the whole stack), each with the raise-to
        totals that stand for it. This seat itself never weighs a fold when
        checking is free: it gains nothing over the check."""
        stack, bet = behind[seat], bets[seat]
        owed = current - bet
        allin = bet + stack
        options: list[tuple[str, list[int]]] = [("fold", [])] if owed > 0 or seat != self.me else []
        options.append(("call", [bet + min(owed, stack)]))
        reopened = any(s != seat and s not in folded and behind[s] + bets[s] > current for s in self.live)
        if stack > owed and reopened:
            low = min(current + min_raise if current else 1, allin)
            if seat == self.me:
                totals = [low]
            else:
                totals = sorted({low + round(q * (allin - low)) for q in self.raise_points})
            options.append(("raise", totals))
            options.append(("all_in", [allin]))
        elif owed > 0 and stack <= owed:
            options.append(("all_in", [allin]))
        return options

    def _end(self, bets: dict[int, int], behind: dict[int, int], folded: frozenset[int]) -> float:
        """Expected utility of the hand ending with these street bets: the pots
        (AL-4) shared by the outcome table for the board cards the bets let turn (AL-6)."""
        me = self.me
        if me in folded:
            return self.utility(behind[me])
        key = (tuple(bets.values()), folded)
        if key in self._ends:
            return self._ends[key]
        live = [s for s in self.live if s not in folded]
        contributed = {s: self.contributed[s] + bets[s] - self.bets[s] for s in self.players}
        if len(live) == 1:
            value = self.utility(behind[me] + sum(contributed.values()) + self.extra)
        else:
            shares = []  # (cards, column of the outcome table or None when uncontested)
            for k, pot in enumerate(side_pots(contributed, set(live))):
                if me in pot.eligible:
                    others = frozenset(pot.eligible) - {me}
                    shares.append((pot.amount + (self.extra if k == 0 else 0), self.groups[others] if others else None))
            added = sum(bets.values()) - sum(self.bets.values())
            to_come = min(5 - self.board, max(self.face_down + added, 3 - self.board))
            value = 0.0
            for row, frequency in self.tables[to_come]:
                won = sum(cards * (1.0 if column is None else row[column]) for cards, column in shares)
                value += frequency * self.utility(behind[me] + won)
        self._ends[key] = value
        return value


class AlamoBot(Bot):
    """Monte Carlo showdown odds and an expectimax over the street against
    random opponents, scored by a concave utility of its cards (see the module docstring)."""

    name = "equity"
    costly = True  # Monte Carlo equity: the server thinks it off the event loop
    #: Monte Carlo deals per decision
    samples = SAMPLES
    #: the utility's exponent: (cards / all cards) ** gamma (1: cards alone)
    gamma = GAMMA
    #: bet and raise sizes tried besides the minimum and all-in, as shares of the pot after calling
    sizes = (0.5, 1.0)

    def candidates(self, view: Mapping[str, Any], legal: Sequence[Data]) -> list[Data]:
        """The actions it weighs: each legal action, a bet or raise at its
        minimum and at :attr:`sizes` of the pot (hole cards included, AL-4);
        not a fold when checking is free (AL-5 allows it; it never gains)."""
        out: list[Data] = []
        bets = view.get("bets") or {}
        current = max(bets.values(), default=0)
        call = next((a["min"] for a in legal if a["type"] == "call"), 0)
        pot = view["pot"] + HOLE * len(view["players"]) + call
        free = any(a["type"] == "check" for a in legal)
        for option in legal:
            kind = option["type"]
            if kind == "fold" and free:
                continue
            if kind in ("bet", "raise"):
                low, high = option["min"], option["max"]
                totals = {low} | {min(high, max(low, current + int(f * pot))) for f in self.sizes}
                if any(a["type"] == "all_in" for a in legal):
                    totals.discard(high)  # weighed as the all-in
                out.extend({"type": kind, "amount": t} for t in sorted(totals))
            else:
                out.append({"type": kind})
        return out

    def choose(self, view: Mapping[str, Any], legal: Sequence[Data]) -> Data:
        street = Street.from_view(view, legal, self.samples, self.rng, self.gamma)
        options = self.candidates(view, legal)
        values = [street.value(action) for action in options]
        return options[values.index(max(values))]
