"""The ``threshold`` bot for Loco Poker, and its benchmark against ``random``.

:class:`LocoBot` decides from its seat's view and legal actions only (the
data a remote client gets), by comparing Monte Carlo equity
(:func:`cardhall.engine.bots.equity.equity`) with thresholds:

* no all-in pending: go all-in when the equity against every opponent still
  in is at least ``allin_base + allin_share / (opponents + 1)``, else check
  (checking is free, so it never folds here);
* facing an all-in: call when the heads-up equity against the all-in player
  is at least ``call_threshold`` (the all-in range is stronger than a random
  hand, so this is well above one half), else fold. Being the last to answer,
  with no caller yet, an all-in player who would reach ``points_to_win`` with
  an uncalled all-in lowers the threshold to ``desperate_call`` (0: always
  call), since folding would hand them the match.

:func:`cardhall.engine.play.win_rate` measures it against ``random`` bots
(``cardhall bench engine`` prints it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cardhall.engine.bots.base import Bot, Data
from cardhall.engine.bots.equity import equity
from cardhall.engine.seats import clockwise


class LocoBot(Bot):
    """Equity-threshold strategy for Loco Poker (see the module docstring)."""

    name = "threshold"
    costly = True  # Monte Carlo equity: the server thinks it off the event loop

    #: Monte Carlo deals per decision (about a millisecond at 200)
    samples = 200
    allin_base = 0.2
    allin_share = 0.85
    call_threshold = 0.65
    desperate_call = 0.0

    def choose(self, view: Mapping[str, Any], legal: Sequence[Data]) -> Data:
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

    def _call_needed(self, view: Mapping[str, Any], shooter: int) -> float:
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
