"""The betting core (engine.betting): one round, table-driven per RULES item.

Players are indices; the rounds here are built directly, as Alamo builds them
(no-limit counted in cards, minimum bet 1, RULES AL-5).
"""

from __future__ import annotations

import doctest

import msgpack
import pytest

import cardhall.engine.betting
from cardhall.engine.base import IllegalAction
from cardhall.engine.betting import FIXED_LIMIT, FIXED_LIMIT_PHH, NO_LIMIT, NO_LIMIT_PHH, BettingRound, BettingRules


def options(r: BettingRound) -> dict[str, tuple[int | None, int | None]]:
    return {a.type: (a.min, a.max) for a in r.legal()}


def play(r: BettingRound, *script) -> None:
    for step in script:
        kind, *amount = step if isinstance(step, tuple) else (step,)
        r.act(kind, *amount)


def test_doctests():
    assert doctest.testmod(cardhall.engine.betting).failed == 0


def test_rules_validate():
    with pytest.raises(ValueError):
        BettingRules("pot_limit", "full_raise")
    with pytest.raises(ValueError):
        BettingRules("no_limit", "sometimes")
    assert BettingRules.from_data(FIXED_LIMIT.to_data()) == FIXED_LIMIT


def test_begin_validates_input():
    with pytest.raises(ValueError):
        BettingRound.begin(NO_LIMIT, [100], first=0, size=1)
    with pytest.raises(ValueError):
        BettingRound.begin(NO_LIMIT, [100, 100], [0], first=0, size=1)
    with pytest.raises(ValueError):
        BettingRound.begin(NO_LIMIT, [100, 100], first=2, size=1)
    with pytest.raises(ValueError):
        BettingRound.begin(NO_LIMIT, [100, 100], first=0, size=0)


# -- turn order -------------------------------------------------------------------------

TURN_CASES = [
    # rules, stacks, bets, folded, first, script, expected queue
    ("three checks close the round", NO_LIMIT, [50, 50, 50], None, None, 0, ["check", "check", "check"], []),
    ("a bet brings everyone else back", NO_LIMIT, [50, 50, 50], None, None, 1, ["check", ("bet", 5)], [0, 1]),
    ("all-in and folded players never act", NO_LIMIT, [50, 0, 50, 50], [0, 5, 0, 0], [False, False, False, True], 0, [], [0, 2]),
    ("nobody to bet against: nobody acts", NO_LIMIT, [50, 0, 0], None, None, 0, [], []),
    ("the big blind's option", NO_LIMIT, [90, 80, 100], [10, 20, 0], None, 2, ["call", "call"], [1]),
    ("a lone player matching the bet does not act", NO_LIMIT, [90, 0, 100], [10, 20, 0], [False, False, True], 0, ["call"], []),
    ("a lone player facing a bet acts", NO_LIMIT, [90, 0, 100], [10, 20, 0], [False, False, True], 0, [], [0]),
    ("everyone folds to one player: round over", NO_LIMIT, [50, 50, 50], None, None, 0, [("bet", 5), "fold", "fold"], []),
]


@pytest.mark.parametrize("name, rules, stacks, bets, folded, first, script, queue", TURN_CASES, ids=[c[0] for c in TURN_CASES])
def test_turn_order(name, rules, stacks, bets, folded, first, script, queue):
    r = BettingRound.begin(rules, stacks, bets, folded, first=first, size=1)
    play(r, *script)
    assert r.queue == queue
    assert r.done == (not queue)
    if r.done:
        assert r.legal() == []
        with pytest.raises(IllegalAction):
            r.act("check")


# -- NL-2: no-limit amounts ------------------------------------------------------------------

NL_2_CASES = [
    # stacks, bets, first, script, expected options of the next player
    ("open: bet at least the minimum", [100, 100], None, 0, [], {"check": (None, None), "bet": (20, 100), "all_in": (100, 100)}),
    ("raise at least the last bet", [100, 100], None, 0, [("bet", 30)], {"fold": (None, None), "call": (30, 30), "raise": (60, 100), "all_in": (100, 100)}),
    ("all-in for less than a minimum raise", [100, 50], None, 0, [("bet", 30)], {"fold": (None, None), "call": (30, 30), "raise": (50, 50), "all_in": (50, 50)}),
    ("call all-in for less: no raise", [100, 20], None, 0, [("bet", 30)], {"fold": (None, None), "call": (20, 20), "all_in": (20, 20)}),
    ("cards: Alamo's minimum bet 1", [5, 5], None, 0, [], {"check": (None, None), "bet": (1, 5), "all_in": (5, 5)}),
]


@pytest.mark.parametrize("name, stacks, bets, first, script, expected", NL_2_CASES, ids=[c[0] for c in NL_2_CASES])
def test_NL_2_amounts(name, stacks, bets, first, script, expected):
    size = 1 if "Alamo" in name else 20
    r = BettingRound.begin(NO_LIMIT, stacks, bets, first=first, size=size)
    play(r, *script)
    assert options(r) == expected


@pytest.mark.parametrize(
    "kind, amount, code",
    [
        ("bet", 19, "amount_too_small"),
        ("bet", 101, "amount_too_large"),
        ("bet", None, "amount_required"),
        ("raise", 40, "use_bet"),
        ("call", None, "nothing_to_call"),
        ("fold", None, "check_available"),
        ("check", 5, "bad_amount"),
        ("all_in", 99, "bad_amount"),
        ("dance", None, "unknown_action"),
    ],
)
def test_NL_2_illegal_actions_leave_the_round_unchanged(kind, amount, code):
    r = BettingRound.begin(NO_LIMIT, [100, 100], first=0, size=20)
    before = r.to_data()
    with pytest.raises(IllegalAction) as err:
        r.act(kind, amount)
    assert err.value.code == code
    assert r.to_data() == before


# -- NL-3: short all-ins (TDA 47A) --------------------------------------------------------

NL_3_CASES = [
    # stacks, script, player to act, may raise?, raise minimum
    ("short all-in: the bettor only calls", [500, 150, 500], [("bet", 100), "all_in", "call"], 0, False, None),
    ("short all-in: a player yet to act raises by the last full raise", [500, 150, 500], [("bet", 100), "all_in"], 2, True, 250),
    ("two short all-ins make a full raise", [500, 150, 220, 500], [("bet", 100), "all_in", "all_in", "call"], 0, True, 320),
    ("short all-ins short of a full raise", [500, 150, 180, 500], [("bet", 100), "all_in", "all_in", "call"], 0, False, None),
    ("a full raise reopens", [500, 300, 500], [("bet", 100), "all_in", "call"], 0, True, 500),
    ("a short all-in bet under the minimum: checkers only call", [500, 5, 500], ["check", "all_in", "call"], 0, False, None),
]


@pytest.mark.parametrize("name, stacks, script, player, may_raise, low", NL_3_CASES, ids=[c[0] for c in NL_3_CASES])
def test_NL_3_reopening(name, stacks, script, player, may_raise, low):
    r = BettingRound.begin(NO_LIMIT, stacks, first=0, size=20)
    play(r, *script)
    assert r.to_act == player
    opts = options(r)
    assert ("raise" in opts) == may_raise
    if may_raise:
        assert opts["raise"][0] == low
    else:
        with pytest.raises(IllegalAction) as err:
            r.act("raise", 1000)
        assert err.value.code == "not_reopened" and err.value.rule == "NL-3"


# -- FL-2 / FL-3 / FL-4: fixed limit ----------------------------------------------------------

FL_CASES = [
    # stacks, bets, level, count, script, to act, expected options
    ("FL-2 four bets on a street", [500, 500], None, None, 0, [("bet",), ("raise",), ("raise",), ("raise",)], 0, {"fold": (None, None), "call": (10, 10)}),
    ("FL-2 preflop the blind counts", [495, 490], [5, 10], 10, 1, ["raise", "raise", "raise"], 1, {"fold": (None, None), "call": (10, 10)}),
    ("FL-3 half a bet is a full raise", [500, 15, 500], None, None, 0, ["bet", "all_in"], 2, {"fold": (None, None), "call": (15, 15), "raise": (25, 25)}),
    ("FL-3 less than half: complete to the bet", [500, 14, 500], None, None, 0, ["bet", "all_in"], 2, {"fold": (None, None), "call": (14, 14), "raise": (20, 20)}),
    ("FL-3 less than half: no reopening", [500, 14, 500], None, None, 0, ["bet", "all_in", "call"], 0, {"fold": (None, None), "call": (4, 4)}),
    ("FL-4 a short big blind leaves the full blind", [495, 0, 500], [5, 7, 0], 10, 1, [], 2, {"fold": (None, None), "call": (10, 10), "raise": (20, 20)}),
    ("a raise all-in for less than the fixed total", [500, 12], None, None, 0, ["bet"], 1, {"fold": (None, None), "call": (10, 10), "raise": (12, 12), "all_in": (12, 12)}),
]


@pytest.mark.parametrize("name, stacks, bets, level, count, script, player, expected", FL_CASES, ids=[c[0] for c in FL_CASES])
def test_FL_betting(name, stacks, bets, level, count, script, player, expected):
    first = 2 % len(stacks) if bets else 0
    r = BettingRound.begin(FIXED_LIMIT, stacks, bets, first=first, size=10, cap=4, level=level, count=count or 0)
    play(r, *script)
    assert r.to_act == player
    assert options(r) == expected


def test_FL_fixed_amount_only():
    r = BettingRound.begin(FIXED_LIMIT, [100, 100], first=0, size=10, cap=4)
    with pytest.raises(IllegalAction) as err:
        r.act("bet", 15)
    assert err.value.code == "amount_not_fixed" and err.value.rule == "FL-2"
    assert r.act("bet").total == 10


# -- phh profile: pokerkit's counting ------------------------------------------------------------


def test_phh_cap_counts_raises_over_the_blind():
    r = BettingRound.begin(FIXED_LIMIT_PHH, [495, 490, 500], [5, 10, 0], first=2, size=10, cap=4)
    play(r, "raise", "raise", "raise", "raise")  # 20 30 40 50
    assert "raise" not in options(r)


def test_phh_amount_to_call_is_the_largest_bet_posted():
    r = BettingRound.begin(NO_LIMIT_PHH, [490, 0, 500], [10, 15, 0], first=2, size=20, level=20)
    assert options(r)["call"] == (15, 15) and options(r)["raise"][0] == 35


def test_phh_free_fold_allowed():
    r = BettingRound.begin(NO_LIMIT_PHH, [100, 100], first=0, size=20)
    assert "fold" in options(r)
    r.act("fold")
    assert r.done


# -- uncalled bets, persistence ---------------------------------------------------------------------


def test_FL_6_uncalled_bet_returned():
    r = BettingRound.begin(NO_LIMIT, [100, 30, 100], first=0, size=10)
    play(r, ("bet", 80), "all_in", "fold")
    assert r.done and r.uncalled() == (0, 50)
    assert r.return_uncalled() == (0, 50)
    assert r.bets == [30, 30, 0] and r.stacks == [70, 0, 100]
    assert r.uncalled() is None


def test_round_trips_through_msgpack():
    r = BettingRound.begin(NO_LIMIT_PHH, [100, 150, 200], first=1, size=10)
    play(r, ("bet", 30), "all_in")
    back = BettingRound.from_data(msgpack.unpackb(msgpack.packb(r.to_data())))
    assert back == r and back.legal() == r.legal()
    with pytest.raises(ValueError):
        BettingRound.from_data({"rules": NO_LIMIT.to_data()})
