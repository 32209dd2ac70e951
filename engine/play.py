"""Whole matches played by bots: the one driver that simulations, benchmarks,
bot evaluations and property tests share.

Each bot decides from exactly its own seat's ``view`` and the legal actions
as plain data (what a remote client would see); dealer steps are taken at once
with ``advance()`` (no pauses: pacing is the server's business, G-4).

>>> from cardhall.engine.rng import FairRandom
>>> run = play_match(new_match("avalanche", 3, FairRandom(b"doc")), seat_bots("avalanche", 3, FairRandom(b"bots")))
>>> run.finished, run.result["winners"] != []
(True, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cardhall.engine.base import Engine
from cardhall.engine.bots.base import Bot
from cardhall.engine.bots.registry import DEFAULT, make_bot
from cardhall.engine.registry import engine_class
from cardhall.engine.rng import FairRandom, RandomSource

#: a match taking more engine steps than this is reported as unfinished.
MAX_STEPS = 500_000


@dataclass
class MatchRun:
    """One whole match: the ``engine`` at its end, its ``result()`` (None when
    unfinished after ``max_steps``), ``hands`` played (where the engine counts
    them, else None), ``steps`` (decisions + dealer steps) and ``decisions``."""

    engine: Engine
    result: dict[str, Any] | None
    hands: int | None
    steps: int
    decisions: int

    @property
    def finished(self) -> bool:
        return self.result is not None


def new_match(game: str, players: int | Sequence[int], rng: RandomSource,
              options: Mapping[str, Any] | None = None) -> Engine:
    """A new, unstarted engine of ``game`` for seats ``1..players`` (or the given seats)."""
    seats = list(range(1, players + 1)) if isinstance(players, int) else list(players)
    return engine_class(game).new(seats, options, rng)


def seat_bots(game: str, players: int | Sequence[int], rng: FairRandom, name: str | None = "random",
              overrides: Mapping[int, str | None] | None = None) -> dict[int, Bot]:
    """Seat -> bot: ``name`` everywhere (None: the game's default strategy) except
    ``overrides`` (seat -> name); each bot gets its own generator spawned from ``rng``."""
    seats = list(range(1, players + 1)) if isinstance(players, int) else list(players)
    overrides = overrides or {}
    return {seat: make_bot(game, overrides.get(seat, name), rng.spawn(f"bot/{seat}")) for seat in seats}


def play_match(engine: Engine, bots: Mapping[int, Bot], max_steps: int = MAX_STEPS,
               observe: Callable[[Engine], None] | None = None) -> MatchRun:
    """Start ``engine`` and play it to the end with ``bots`` (seat -> bot).

    ``observe(engine)`` is called after the start and after every step (for
    conservation audits). Raises IllegalAction if a bot returns an illegal
    action, RuntimeError if the engine stalls (nobody to act, nothing pending,
    not finished).
    """
    engine.start()
    if observe:
        observe(engine)
    steps = decisions = 0
    while not engine.finished and steps < max_steps:
        seat = engine.to_act
        if seat is not None:
            legal = [a.to_data() for a in engine.legal_actions()]
            engine.apply(seat, bots[seat].choose(engine.view(seat), legal))
            decisions += 1
        elif engine.pending is not None:
            engine.advance()
        else:
            raise RuntimeError(f"{engine.game}: nobody to act, nothing pending, and the match is not finished")
        steps += 1
        if observe:
            observe(engine)
    hands = getattr(engine, "hand_number", None)
    return MatchRun(engine, engine.result() if engine.finished else None,
                    hands if isinstance(hands, int) else None, steps, decisions)


@dataclass
class WinRate:
    """A strategy bot's record against ``opponent`` bots: ``rate`` (share of
    matches won, shared wins counted 1/k), ``low``/``high`` (95% Wilson
    interval), ``share`` (the fair share 1/players), ``unfinished`` matches
    (not counted as wins)."""

    game: str
    bot: str
    opponent: str
    players: int
    matches: int
    rate: float
    low: float
    high: float
    share: float
    unfinished: int


def wilson(successes: float, trials: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def win_rate(game: str, players: int, matches: int, seed: str = "win-rate", bot: str | None = None,
             opponent: str = "random", options: Mapping[str, Any] | None = None) -> WinRate:
    """Seat one ``bot`` (default: the game's default strategy) against
    ``players - 1`` ``opponent`` bots for ``matches`` whole matches and count
    its wins from ``result()["winners"]``. The bot sits at seat ``m % players + 1``
    in match ``m``; every generator derives from ``seed``, so a run is repeatable."""
    name = bot or DEFAULT[game]
    root = FairRandom(f"cardhall/win-rate/{seed}/{game}".encode())
    won = 0.0
    unfinished = 0
    for m in range(matches):
        hero = m % players + 1
        bots = seat_bots(game, players, root.spawn(f"bots/{m}"), opponent, {hero: name})
        run = play_match(new_match(game, players, root.spawn(f"match/{m}"), options), bots)
        if run.result is None:
            unfinished += 1
        elif hero in run.result["winners"]:
            won += 1 / len(run.result["winners"])
    low, high = wilson(won, matches)
    return WinRate(game, name, opponent, players, matches, won / matches, low, high, 1 / players, unfinished)
