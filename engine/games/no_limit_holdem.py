"""No-limit Texas Hold'em (seed ``004_5ca5ee4fb1c7c81a.txt``, RULES NL-1..NL-7).

2 to 9 players, stacks 1000, blinds 10/20 (NL-1); amounts are raise-to totals,
the minimum bet is the big blind and a raise adds at least the last full bet
or raise (NL-2); short all-ins by TDA 47A (NL-3); the first button is drawn at
random, then the dead-button rule (NL-4, FL-1); blinds double every 15 hands
unless ``blind_levels`` is None (NL-7); ``item_stakes`` is free text awarded to
the winner (NL-6); odd chips clockwise from the button's left (G-6). The hand
flow, options, actions and events are :mod:`cardhall.engine.holdem`'s.

>>> from cardhall.engine.base import test_rng
>>> m = NoLimitHoldem.new([1, 2], {"button": 2}, test_rng())
>>> _ = m.start(); m.to_act, [a.to_data() for a in m.legal_actions()]
(2, [{'type': 'fold'}, {'type': 'call', 'min': 10, 'max': 10}, {'type': 'raise', 'min': 40, 'max': 1000}, {'type': 'all_in', 'min': 1000, 'max': 1000, 'as': 'raise'}])
"""

from __future__ import annotations

from typing import ClassVar

from cardhall.engine.base import Data
from cardhall.engine.betting import NO_LIMIT, NO_LIMIT_PHH, BettingRules
from cardhall.engine.holdem import Hand, HoldemEngine, holdem_options
from cardhall.engine.options import MAX_CHIPS, MAX_HANDS, Option, defaults
from cardhall.engine.plugins import Example, GameSpec, builtin_rules, builtin_schema


class NoLimitHoldem(HoldemEngine):
    """No-limit Hold'em match (see the module docstring)."""

    game = "no_limit_holdem"
    variant: ClassVar[str] = "NT"
    fixed: ClassVar[bool] = False
    min_seats = 2
    max_seats = 9
    title = "No-limit Hold'em"
    options_spec = holdem_options(
        Option("starting_stacks", 1000, "int", "chips each player starts with", "NL-1", min=1, max=MAX_CHIPS,
               per_seat=True),
        Option("small_blind", 10, "int", "small blind, chips (at most the big blind)", "NL-1", min=0, max=MAX_CHIPS),
        Option("big_blind", 20, "int", "big blind, chips", "NL-1", min=1, max=MAX_CHIPS),
        Option("min_bet", None, "int", "the smallest bet allowed, chips; empty: the big blind", "NL-2", min=1,
               max=MAX_CHIPS, nullable=True),
        Option("blind_levels", 15, "int", "how many hands between each doubling of blinds, antes and the smallest bet; "
               "empty: they never rise",
               "NL-7", min=1, max=MAX_HANDS, nullable=True),
    )
    default_options: ClassVar[Data] = defaults(options_spec)

    def _betting_rules(self) -> BettingRules:
        return NO_LIMIT_PHH if self.phh else NO_LIMIT

    def _round_size(self, street: int, stakes: Data) -> int:
        return stakes["min_bet"]

    def _structure_stakes(self, multiple: int) -> Data:
        o = self.options
        return {"min_bet": (o["min_bet"] if o["min_bet"] is not None else o["big_blind"]) * multiple}

    def _record_stakes(self, hand: Hand) -> Data:
        return {"min_bet": hand.stakes["min_bet"]}


#: this game's registration (:mod:`cardhall.engine.plugins`)
GAME = GameSpec(
    name="no_limit_holdem", engine=NoLimitHoldem, order=20,
    bots={"equity": "cardhall.engine.bots.holdem:HoldemBot"}, default_bot="equity",
    schema=builtin_schema("holdem.json"), rules=builtin_rules("no_limit_holdem"),
    example=Example({"starting_stacks": 200}),
    web_renderer="/web/js/games/holdem.js", tui_renderer="cardhall.clients.tui.game_holdem:TUI",
    quick_options={"starting_stacks": 200},
)
