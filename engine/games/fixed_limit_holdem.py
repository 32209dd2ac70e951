"""Fixed-limit Texas Hold'em (seed ``001_7f6c515034116f6f.txt``, RULES FL-1..FL-9).

2 to 6 players, stacks 500, blinds 5/10, bets 10 preflop and on the flop and
20 on the turn and river, four bets per round (FL-2: the big blind is the
first of them preflop), short all-ins by the half-bet rule (FL-3), the odd
chip to the lowest-numbered tied seat (FL-7). First button: seat 1 in the
table's first match (FL-1); a rematch passes ``button`` = the next seat
(G-7). The hand flow, options, actions and events are
:mod:`cardhall.engine.holdem`'s.

>>> from cardhall.engine.base import test_rng
>>> m = FixedLimitHoldem.new([1, 2, 3], None, test_rng())
>>> _ = m.start(); m.button, m.to_act, [a.to_data() for a in m.legal_actions()]
(1, 1, [{'type': 'fold'}, {'type': 'call', 'min': 10, 'max': 10}, {'type': 'raise', 'min': 20, 'max': 20}])
"""

from __future__ import annotations

from typing import ClassVar

from cardhall.engine.base import Data
from cardhall.engine.betting import FIXED_LIMIT, FIXED_LIMIT_PHH, BettingRules
from cardhall.engine.holdem import Hand, HoldemEngine, holdem_options
from cardhall.engine.options import MAX_CHIPS, MAX_HANDS, Option, defaults
from cardhall.engine.plugins import Example, GameSpec, builtin_rules, builtin_schema

#: the most bets and raises a betting round may allow (``cap``)
MAX_CAP = 100


class FixedLimitHoldem(HoldemEngine):
    """Fixed-limit Hold'em match (see the module docstring)."""

    game = "fixed_limit_holdem"
    variant: ClassVar[str] = "FT"
    fixed: ClassVar[bool] = True
    min_seats = 2
    max_seats = 6
    title = "Fixed-limit Hold'em"
    options_spec = holdem_options(
        Option("starting_stacks", 500, "int", "chips each player starts with", "FL-1", min=1, max=MAX_CHIPS,
               per_seat=True),
        Option("small_blind", 5, "int", "small blind, chips (at most the big blind)", "FL-1", min=0, max=MAX_CHIPS),
        Option("big_blind", 10, "int", "big blind, chips", "FL-1", min=1, max=MAX_CHIPS),
        Option("small_bet", 10, "int", "size of every bet and raise before and on the flop, chips", "FL-2", min=1,
               max=MAX_CHIPS),
        Option("big_bet", 20, "int", "size of every bet and raise on the turn and river, chips", "FL-2", min=1,
               max=MAX_CHIPS),
        Option("cap", 4, "int", "most bets and raises in one betting round (before the flop the big blind is the first)",
               "FL-2", min=1, max=MAX_CAP),
        Option("blind_levels", None, "int", "how many hands between each doubling of blinds, antes and bets; empty: they "
               "never rise",
               "NL-7", min=1, max=MAX_HANDS, nullable=True),
    )
    default_options: ClassVar[Data] = defaults(options_spec)

    def _default_button(self) -> int:
        """FL-1: seat 1 (the lowest seat) holds the first button of a table's
        first match; later matches pass ``button`` explicitly."""
        return self.seats[0]

    def _betting_rules(self) -> BettingRules:
        return FIXED_LIMIT_PHH if self.phh else FIXED_LIMIT

    def _round_size(self, street: int, stakes: Data) -> int:
        return stakes["small_bet"] if street < 2 else stakes["big_bet"]

    def _cap(self) -> int | None:
        return self.options["cap"]

    def _preflop_count(self) -> int:
        return 0 if self.phh else 1  # FL-2: the big blind counts as the opening bet

    def _odd_chip_order(self, hand: Hand) -> list[int]:
        return sorted(hand.players)  # FL-7: lowest-numbered tied seat first

    def _structure_stakes(self, multiple: int) -> Data:
        return {"small_bet": self.options["small_bet"] * multiple, "big_bet": self.options["big_bet"] * multiple}

    def _record_stakes(self, hand: Hand) -> Data:
        return {"small_bet": hand.stakes["small_bet"], "big_bet": hand.stakes["big_bet"]}


#: this game's registration (:mod:`cardhall.engine.plugins`)
GAME = GameSpec(
    name="fixed_limit_holdem", engine=FixedLimitHoldem, order=10,
    bots={"equity": "cardhall.engine.bots.holdem:HoldemBot"}, default_bot="equity",
    schema=builtin_schema("holdem.json"), rules=builtin_rules("fixed_limit_holdem"),
    example=Example({"starting_stacks": 100}),
    web_renderer="/web/js/games/holdem.js", tui_renderer="cardhall.clients.tui.game_holdem:TUI",
    quick_options={"starting_stacks": 60},
)
