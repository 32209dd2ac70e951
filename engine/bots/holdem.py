"""The ``equity`` bot for both Hold'em games: hand strength against random
hands, and pot odds.

It decides from its seat's view and the legal actions only, as plain data
(the same a remote client gets: ``Engine.view(seat)`` and
``LegalAction.to_data()``), so it cannot cheat:

1. **Strength**: the Monte Carlo share of the pot its hole cards win at
   showdown against one random hand per opponent still in, the rest of the
   board dealt at random (:func:`cardhall.engine.bots.equity.equity`, ``samples``
   deals, the bot's own generator).
2. **Pot odds**: facing a call of ``c`` chips into a pot of ``p`` (bets
   included), calling pays when the strength is at least ``c / (p + c)``.
3. **Aggression**: with a strength well above its fair share (``1 / players
   in``) it bets or raises: fixed limit the fixed amount; no limit about
   three quarters of the pot, or all-in when very strong or when the raise
   would commit most of its stack anyway.
4. Otherwise it checks when checking is free, calls with the odds, and folds.

:func:`win_rate` plays whole matches of this bot against ``random`` bots.

>>> from cardhall.engine.rng import FairRandom
>>> bot = HoldemBot(FairRandom(b"doc"))
>>> view = {"to_act": 1, "hole": ["Ah", "Ad"], "board": [], "players": [1, 2], "folded": [],
...         "pot": 30, "bets": {"1": 10, "2": 20}, "stacks": {"1": 990, "2": 980}}
>>> legal = [{"type": "fold"}, {"type": "call", "min": 10, "max": 10},
...          {"type": "raise", "min": 40, "max": 1000}, {"type": "all_in", "min": 1000, "max": 1000, "as": "raise"}]
>>> bot.choose(view, legal)["type"]
'raise'
>>> view["hole"] = ["7c", "2d"]; legal[1] = {"type": "call", "min": 980, "max": 980}
>>> view["bets"] = {"1": 10, "2": 1000}; view["pot"] = 1010
>>> bot.choose(view, legal)
{'type': 'fold'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cardhall.engine.bots.base import Bot, Data
from cardhall.engine.bots.equity import equity
from cardhall.engine.rng import FairRandom


class HoldemBot(Bot):
    """Equity-and-pot-odds strategy (see the module docstring)."""

    name = "equity"
    costly = True  # Monte Carlo equity: the server thinks it off the event loop
    #: Monte Carlo deals per decision (about a millisecond against one opponent).
    samples = 200
    #: bet or raise when strength exceeds the fair share by this much.
    edge = 0.15
    #: go all-in (no limit) at or above this strength.
    shove = 0.85
    #: no-limit raise size as a fraction of the pot after calling.
    fraction = 0.75
    #: extra strength needed to call with the whole stack at risk (scaled down for smaller calls).
    caution = 0.25

    def choose(self, view: Mapping[str, Any], legal: Sequence[Data]) -> Data:
        options = {a["type"]: a for a in legal}
        to_call = options["call"]["min"] if "call" in options else 0
        hole = view.get("hole")
        if not hole:  # not dealt in (cannot happen at the table): the timeout rule
            return {"type": "check"} if "check" in options else {"type": "fold"}
        me = view["to_act"]
        folded = set(view.get("folded", ()))
        opponents = sum(1 for s in view.get("players", ()) if s != me and s not in folded)
        strength = equity(hole, view.get("board", []), max(1, opponents), self.samples, self.rng)
        pot = view.get("pot", 0)
        fair = 1 / (opponents + 1)
        raise_kind = "raise" if "raise" in options else "bet" if "bet" in options else None
        if raise_kind and strength >= fair + self.edge:
            return self._raise(raise_kind, options, view, me, pot, to_call, strength)
        if not to_call:
            return {"type": "check"}
        # pot odds, plus a margin that grows with the share of the stack at risk:
        # a match is won by surviving, so big calls need more than a coin flip
        stack = view.get("stacks", {}).get(str(me), 0)
        risk = to_call / (stack or to_call)
        if strength >= to_call / (pot + to_call) + self.caution * min(1.0, risk):
            return {"type": "call"}
        return {"type": "fold"}

    def _raise(
        self, kind: str, options: Mapping[str, Data], view: Mapping[str, Any], me: int, pot: int, to_call: int, strength: float
    ) -> Data:
        option = options[kind]
        low, high = option["min"], option["max"]
        if low == high:
            return {"type": kind, "amount": low}
        if strength >= self.shove:
            return {"type": kind, "amount": high}
        mine = view.get("bets", {}).get(str(me), 0)
        level = mine + to_call  # the bet to match
        target = level + int(self.fraction * (pot + to_call))
        if target >= 0.6 * high:  # most of the stack anyway: all of it
            target = high
        return {"type": kind, "amount": max(low, min(high, target))}


def win_rate(
    game: str = "no_limit_holdem",
    matches: int = 100,
    players: int = 2,
    seed: str = "holdem-bot",
    options: Mapping[str, Any] | None = None,
    max_steps: int = 200_000,
) -> float:
    """Share of ``matches`` whole matches of ``game`` (``"no_limit_holdem"`` or
    ``"fixed_limit_holdem"``, default options unless ``options``) that one
    :class:`HoldemBot` wins against ``players - 1`` ``random`` bots; the bot's
    seat cycles (seat ``m % players + 1`` in match ``m``) so position evens
    out. Every generator derives from ``seed`` (repeatable). A match still
    running after ``max_steps`` engine steps counts as lost. The fair share
    is ``1 / players``."""
    from cardhall.engine.bots.random_bot import RandomBot
    from cardhall.engine.registry import engine_class

    cls = engine_class(game)
    root = FairRandom(f"holdem-win-rate/{seed}/{game}/{players}".encode())
    won = 0
    for m in range(matches):
        hero = m % players + 1
        bots: dict[int, Bot] = {
            s: (HoldemBot if s == hero else RandomBot)(root.spawn(f"bot/{m}/{s}")) for s in range(1, players + 1)
        }
        engine = cls.new(sorted(bots), options, root.spawn(f"match/{m}"))
        engine.start()
        for _ in range(max_steps):
            if engine.finished:
                break
            seat = engine.to_act
            if seat is None:
                engine.advance()
                continue
            legal = [a.to_data() for a in engine.legal_actions()]
            engine.apply(seat, bots[seat].choose(engine.view(seat), legal))
        result = engine.result()
        if result is not None and hero in result["winners"]:
            won += 1
    return won / matches
