"""The ``threshold`` bot for Loco Poker, and its benchmark against ``random``.

:class:`LocoBot` decides from its seat's view and legal actions only (the
data a remote client gets), by comparing Monte Carlo equity
(:func:`engine.bots.equity.equity`) with thresholds:

* no all-in pending: go all-in when the equity against every opponent still
  in is at least ``allin_base + allin_share / (opponents + 1)``, else check
  (checking is free, so it never folds here);
* facing an all-in: call when the heads-up equity against the all-in player
  is at least ``call_threshold`` (the all-in range is stronger than a random
  hand, so this is well above one half), else fold. Being the last to answer,
  with no caller yet, an all-in player who would reach ``points_to_win`` with
  an uncalled all-in lowers the threshold to ``desperate_call`` (0: always
  call), since folding would hand them the match.

:func:`win_rate` plays whole matches of one ``LocoBot`` against ``random``
bots; ``python -m engine.bots.loco_poker`` prints win rates and timings.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from engine.base import Engine
from engine.bots.base import Bot, Data
from engine.bots.equity import equity
from engine.bots.random_bot import RandomBot
from engine.games.loco_poker import LocoPoker
from engine.rng import FairRandom
from engine.seats import clockwise


class LocoBot(Bot):
    """Equity-threshold strategy for Loco Poker (see the module docstring)."""

    name = "threshold"

    #: Monte Carlo deals per decision (about a millisecond at 200)
    samples = 200
    allin_base = 0.2
    allin_share = 0.85
    call_threshold = 0.65
    desperate_call = 0.0

    def choose(self, view: Data, legal: Sequence[Data]) -> Data:
        """``{"type": ...}``, one of ``legal`` (LO-2)."""
        types = [a["type"] for a in legal]
        hole = view.get("hole_cards")
        if not hole:  # nothing to judge by: the safe choice
            return {"type": "check" if "check" in types else "fold"}
        board = view.get("board") or []
        if "call" in types:
            shooter = view["all_in"]
            eq = equity(hole, board, 1, self.samples, self.rng)
            return {"type": "call" if eq >= self._call_needed(view, shooter) else "fold"}
        opponents = max(len(view.get("in_hand") or []) - 1, 1)
        eq = equity(hole, board, opponents, self.samples, self.rng)
        if "all_in" in types and eq >= self.allin_base + self.allin_share / (opponents + 1):
            return {"type": "all_in"}
        return {"type": "check" if "check" in types else types[0]}

    def _call_needed(self, view: Data, shooter: int) -> float:
        """The equity needed to call ``shooter``'s all-in."""
        me = view["viewer"]
        points = view.get("points", {})
        to_win = view.get("options", {}).get("points_to_win", 3)
        in_hand = view.get("in_hand") or []
        after_me = clockwise(in_hand, after=me) if me in in_hand else []
        last_to_answer = bool(after_me) and after_me[0] == shooter
        if last_to_answer and not view.get("callers") and points.get(str(shooter), 0) + 1 >= to_win:
            return self.desperate_call
        return self.call_threshold


def play_match(engine: Engine, bots: Mapping[int, Bot]) -> Data:
    """Start ``engine`` and play it to the end with ``bots`` (seat -> bot),
    taking every dealer step at once; returns ``engine.result()``.

    Raises IllegalAction if a bot returns an illegal action.
    """
    engine.start()
    while not engine.finished:
        seat = engine.to_act
        if seat is None:
            engine.advance()
            continue
        legal = [a.to_data() for a in engine.legal_actions()]
        engine.apply(seat, bots[seat].choose(engine.view(seat), legal))
    result = engine.result()
    assert result is not None
    return result


def win_rate(players: int, matches: int, seed: str = "loco-benchmark", options: Mapping[str, Any] | None = None) -> float:
    """Share of ``matches`` won by one :class:`LocoBot` against ``players - 1``
    :class:`~engine.bots.random_bot.RandomBot` s (2 <= players <= 8).

    Match ``m`` seats the LocoBot at seat ``m % players + 1`` and uses
    generators derived from ``seed`` (match, first dealer at random, bots), so
    a call is deterministic. ``options``: Loco Poker table options.
    """
    if matches < 1:
        raise ValueError("matches must be >= 1")
    seats = list(range(1, players + 1))
    wins = 0
    for m in range(matches):
        hero = m % players + 1
        engine = LocoPoker.new(seats, options, FairRandom(f"{seed}/match/{m}".encode()))
        bots: dict[int, Bot] = {}
        for seat in seats:
            rng = FairRandom(f"{seed}/bot/{m}/{seat}".encode())
            bots[seat] = LocoBot(rng) if seat == hero else RandomBot(rng)
        if hero in play_match(engine, bots)["winners"]:
            wins += 1
    return wins / matches


def benchmark(matches: int = 200) -> None:
    """Print LocoBot's win rate against random bots at 2, 4 and 6 players,
    with milliseconds per match, and the same for random bots alone."""
    for players in (2, 4, 6):
        start = time.perf_counter()
        rate = win_rate(players, matches)
        ms = (time.perf_counter() - start) * 1000 / matches
        print(f"{players} players: threshold bot wins {rate:.3f} (fair share {1 / players:.3f}), {ms:.1f} ms/match")
    for players in (2, 6):
        seats = list(range(1, players + 1))
        start = time.perf_counter()
        for m in range(matches):
            engine = LocoPoker.new(seats, None, FairRandom(f"bench/{m}".encode()))
            play_match(engine, {s: RandomBot(FairRandom(f"bench/{m}/{s}".encode())) for s in seats})
        ms = (time.perf_counter() - start) * 1000 / matches
        print(f"{players} random bots: {ms:.2f} ms/match")


if __name__ == "__main__":
    benchmark()
