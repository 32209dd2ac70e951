"""Fixed-limit Hold'em (seed 001, RULES FL-1..FL-9), table-driven per item."""

from __future__ import annotations

import pytest

from cardhall.engine.base import IllegalAction
from cardhall.engine.games.fixed_limit_holdem import FixedLimitHoldem
from cardhall.engine.rng import FairRandom
from tests.engine.holdem_util import act, check_down, deck, finish_hand, fl, types


def legal(m: FixedLimitHoldem) -> dict[str, tuple[int | None, int | None]]:
    return {a.type: (a.min, a.max) for a in m.legal_actions()}


# -- seed: setup ------------------------------------------------------------------------


def test_seed_setup_defaults():
    m = FixedLimitHoldem.new([1, 2, 3], None, FairRandom(b"x"))
    o = m.options
    assert o["starting_stacks"] == [500, 500, 500]
    assert (o["small_blind"], o["big_blind"], o["small_bet"], o["big_bet"], o["cap"]) == (5, 10, 10, 20, 4)
    assert o["blind_levels"] is None  # NL-7: fixed stakes unless set
    with pytest.raises(ValueError, match="seats"):
        FixedLimitHoldem.new(list(range(1, 8)), None, FairRandom(b"x"))  # 2-6 players


def test_seed_bet_sizes_by_street():
    m = fl([1, 2], button=2)
    assert legal(m)["raise"] == (20, 20)  # preflop: 10
    act(m, (2, "call"), (1, "check"), "advance")
    assert legal(m)["bet"] == (10, 10)  # flop: 10
    act(m, (1, "check"), (2, "check"), "advance")
    assert legal(m)["bet"] == (20, 20)  # turn: 20
    act(m, (1, "bet"), (2, "call"), "advance")
    assert legal(m)["bet"] == (20, 20)  # river: 20


def test_seed_fixed_amounts_only():
    m = fl([1, 2, 3], button=3)
    for amount in (15, 30, 25):
        with pytest.raises(IllegalAction) as err:
            m.apply(3, {"type": "raise", "amount": amount})
        assert err.value.code in ("amount_too_small", "amount_not_fixed")
    act(m, (3, "raise", 20))  # explicit fixed amount accepted
    act(m, (1, "raise"))  # amount omitted: the fixed total
    assert m.hand.round.bets == [30, 10, 20]


# -- FL-1: first button, dead button -------------------------------------------------------


def test_FL_1_first_button_is_seat_1():
    m = FixedLimitHoldem.new([1, 2, 3, 4], None, FairRandom(b"x"))
    m.start()
    assert (m.button, m.hand.small_blind, m.hand.big_blind) == (1, 2, 3)


def test_FL_1_next_match_passes_the_next_button():
    m = FixedLimitHoldem.new([1, 2, 3, 4], {"button": 2}, FairRandom(b"x"))
    m.start()
    assert (m.button, m.hand.small_blind, m.hand.big_blind) == (2, 3, 4)


def test_FL_1_dead_button_after_a_bust_out():
    # seat 2 (the small blind of hand 1) busts; hand 2: big blind seat 4,
    # small blind seat 3 (last big blind), button seat 2 (empty: dead button)
    m = fl(
        [1, 2, 3, 4],
        [(["2c7d", "AhAd", "KsKc", "QsQc"], "AsAc9d4h5s"), ([], "")],
        button=1,
        starting_stacks=[500, 10, 500, 500],
    )
    assert (m.hand.button, m.hand.small_blind, m.hand.big_blind) == (1, 2, 3)
    act(m, (4, "raise"), (1, "fold"), (2, "call"), (3, "call"))
    check_down(m)
    assert m.stacks()[2] == 0
    m.advance()
    assert (m.hand.button, m.hand.small_blind, m.hand.big_blind) == (2, 3, 4)
    assert m.hand.players == [3, 4, 1]  # dealt from the dead button's left
    assert m.to_act == 1


def test_FL_1_dead_small_blind_when_last_big_blind_busts():
    # seat 3 (big blind of hand 1) busts: hand 2 has no small blind; the big
    # blind moves to seat 4, the button to seat 2 (last small blind)
    m = fl(
        [1, 2, 3, 4],
        [(["2c7d", "8c8d", "AhAd", "QsQc"], "AsAc9d4h5s"), ([], "")],
        button=1,
        starting_stacks=[500, 500, 10, 500],
    )
    act(m, (4, "call"), (1, "fold"), (2, "call"))
    check_down(m)
    assert m.stacks()[3] == 0
    m.advance()
    hand = m.hand
    assert (hand.button, hand.small_blind, hand.big_blind) == (2, None, 4)
    assert hand.round.bets == [10, 0, 0]  # players 4, 1, 2: only the big blind posted
    assert m.to_act == 1


# -- FL-2: the cap ---------------------------------------------------------------------------


def test_FL_2_preflop_big_blind_is_the_first_of_four_bets():
    m = fl([1, 2, 3], button=3)
    act(m, (3, "raise"), (1, "raise"), (2, "raise"))  # 20, 30, 40
    assert "raise" not in legal(m) and legal(m)["call"] == (20, 20)
    with pytest.raises(IllegalAction) as err:
        m.apply(3, {"type": "raise"})
    assert err.value.code == "cap_reached" and err.value.rule == "FL-2"


def test_FL_2_cap_holds_heads_up_and_on_later_streets():
    m = fl([1, 2], button=2)
    act(m, (2, "call"), (1, "check"), "advance", (1, "bet"), (2, "raise"), (1, "raise"), (2, "raise"))
    assert m.hand.round.bets == [30, 40] and "raise" not in legal(m)
    act(m, (1, "call"), "advance", (1, "bet"), (2, "raise"), (1, "raise"), (2, "raise"))
    assert m.hand.round.bets == [60, 80] and "raise" not in legal(m)


def test_FL_2_unraised_big_blind_has_the_option():
    m = fl([1, 2, 3], button=3)
    act(m, (3, "call"), (1, "call"))
    assert m.to_act == 2 and legal(m) == {"check": (None, None), "raise": (20, 20)}


def test_FL_2_phh_profile_counts_four_raises_over_the_blind():
    m = fl([1, 2, 3], button=3, profile="phh")
    act(m, (3, "raise"), (1, "raise"), (2, "raise"), (3, "raise"))  # 20, 30, 40, 50
    assert "raise" not in legal(m)


# -- FL-3: short all-ins, the half-bet rule ------------------------------------------------------

FL_3_CASES = [
    # stacks (seat 1..4 behind after the preflop call of 10), flop script, seat, raise?, raise-to
    # 15 over a 10 bet (half a bet or more): full raise; the bettor may re-raise to 25
    ([100, 15, 100, 100], [(1, "bet"), (2, "all_in"), (3, "call"), (4, "call")], 1, True, 25),
    # ...and a player yet to act raises to 25 too
    ([100, 15, 100, 100], [(1, "bet"), (2, "all_in")], 3, True, 25),
    # 14 over a 10 bet (less than half): the bettor may only call
    ([100, 14, 100, 100], [(1, "bet"), (2, "all_in"), (3, "call"), (4, "call")], 1, False, None),
    # ...while a player yet to act may complete to the full bet, 20
    ([100, 14, 100, 100], [(1, "bet"), (2, "all_in")], 3, True, 20),
    # two short all-ins (13, then 16) together reach half a bet: reopened, to 26
    ([100, 13, 16, 100], [(1, "bet"), (2, "all_in"), (3, "all_in"), (4, "call")], 1, True, 26),
    # an opening all-in of 4 (less than half): the next player may complete to 10
    ([100, 4, 100, 100], [(1, "check"), (2, "all_in")], 3, True, 10),
    # ...and the player who checked before it may only call or fold
    ([100, 4, 100, 100], [(1, "check"), (2, "all_in"), (3, "call"), (4, "call")], 1, False, None),
]


@pytest.mark.parametrize("stacks, script, seat, may_raise, to", FL_3_CASES)
def test_FL_3_half_bet_rule(stacks, script, seat, may_raise, to):
    # four players, button 4: seat 1 small blind, 2 big blind; all call 10 preflop
    m = fl([1, 2, 3, 4], button=4, starting_stacks=[s + 10 for s in stacks])
    act(m, (3, "call"), (4, "call"), (1, "call"), (2, "check"), "advance", *script)
    assert m.to_act == seat
    options = legal(m)
    assert ("raise" in options) == may_raise
    if may_raise:
        assert options["raise"] == (to, to)
    else:
        with pytest.raises(IllegalAction) as err:
            m.apply(seat, {"type": "raise"})
        assert err.value.code == "not_reopened" and err.value.rule == "FL-3"


def test_FL_3_half_bet_all_in_counts_toward_the_cap():
    # flop: bet 10, raise 20, all-in 25 (half a bet): three bets counted, one more raise (to 35) allowed
    m = fl([1, 2, 3, 4], button=4, starting_stacks=[110, 110, 35, 110])
    act(m, (3, "call"), (4, "call"), (1, "call"), (2, "check"), "advance")
    act(m, (1, "bet"), (2, "raise"), (3, "all_in"), (4, "raise"))
    assert m.hand.round.bets == [10, 20, 25, 35]
    assert "raise" not in legal(m)


# -- FL-4: a short blind still leaves the full big blind to call -----------------------------------


def test_FL_4_short_big_blind_leaves_the_full_blind_to_call():
    m = fl([1, 2, 3], button=3, starting_stacks=[500, 7, 500])
    assert m.hand.round.bets == [5, 7, 0]
    assert legal(m) == {"fold": (None, None), "call": (10, 10), "raise": (20, 20)}
    act(m, (3, "call"), (1, "call"))
    m.advance()
    assert m.view(None)["pots"] == [{"amount": 21, "eligible": [1, 2, 3]}, {"amount": 6, "eligible": [1, 3]}]


# -- FL-5: burns -----------------------------------------------------------------------------------


def test_FL_5_a_card_is_burned_before_flop_turn_and_river():
    order = deck(["AhAd", "KhKd"], "2c7d9s3c4h")
    m = fl([1, 2], [(["AhAd", "KhKd"], "2c7d9s3c4h")], button=2)
    events = check_down(m)
    boards = [e.data["cards"] for e in events if e.type == "board"]
    assert boards == [["2c", "7d", "9s"], ["3c"], ["4h"]]
    burns = [order[4], order[8], order[10]]
    assert not set(burns) & set(m.hand.board)
    assert m.hand.board == order[5:8] + [order[9], order[11]]


# -- FL-6: side pots, uncalled bets ------------------------------------------------------------------


def test_FL_6_side_pots_include_folded_chips_and_each_is_split_on_its_own():
    # seat 1 all-in for 25 with the best hand; seat 2 folds after putting in 30;
    # seats 3 and 4 play on: the main pot (4 x 25) to seat 1, the side pot to the best of 3 and 4
    m = fl(
        [1, 2, 3, 4],
        [(["AhAd", "2c7d", "KhKd", "QhQd"], "3c8s9dJh5s")],
        button=4,
        starting_stacks=[25, 500, 500, 500],
    )
    # preflop: 3 raises to 20, 4 calls, 1 all-in for 25 (half a bet: a full raise, FL-3), all call
    act(m, (3, "raise"), (4, "call"), (1, "all_in"), (2, "call"), (3, "call"), (4, "call"), "advance")
    # flop: 2 bets 10, 3 raises to 20, 4 calls, 2 folds: its 10 stays in the side pot
    act(m, (2, "bet"), (3, "raise"), (4, "call"), (2, "fold"))
    events = check_down(m)
    awards = [e.data for e in events if e.type == "award"]
    assert awards == [
        {"type": "award", "pot": 0, "amount": 100, "winners": {"1": 100}, "hand": "Pair"},
        {"type": "award", "pot": 1, "amount": 50, "winners": {"3": 50}, "hand": "Pair"},
    ]
    assert m.stacks() == {1: 100, 2: 465, 3: 505, 4: 455}
    assert sum(m.stacks().values()) == 1525


def test_FL_6_uncalled_bet_returns_to_its_owner():
    m = fl([1, 2], button=2, starting_stacks=[500, 500])
    events = act(m, (2, "raise"), (1, "fold"))
    uncalled = [e.data for e in events if e.type == "uncalled"]
    assert uncalled == [{"type": "uncalled", "seat": 2, "amount": 10, "stack": 490}]
    assert m.stacks() == {1: 490, 2: 510}


# -- FL-7: odd chip -----------------------------------------------------------------------------------


def test_FL_7_odd_chip_to_the_lowest_numbered_tied_seat():
    # button 1: small blind 2 (folds after posting 5), big blind 3, button 1 call:
    # 25 split between seats 1 and 3: 13 to seat 1 (lowest-numbered), 12 to seat 3
    m = fl([1, 2, 3], [(["7c2d", "2h3h", "2s3s"], "TsJdQhKcAs")], button=1)
    assert m.hand.players == [2, 3, 1]
    act(m, (1, "call"), (2, "fold"), (3, "check"))
    events = check_down(m)
    assert [e.data["winners"] for e in events if e.type == "award"] == [{"1": 13, "3": 12}]


# -- FL-8: run-out without betting -------------------------------------------------------------------


def test_FL_8_board_run_out_without_betting_pausing_between_streets():
    m = fl([1, 2], [(["AhAd", "KhKd"], "2c7d9s3c4h")], button=2, starting_stacks=[500, 15])
    act(m, (2, "all_in"), (1, "call"))
    seen = []
    while m.pending in ("street", "showdown"):
        seen.append(m.pending)
        assert m.to_act is None and m.legal_actions() == []
        m.advance()
    assert seen == ["street", "street", "street", "showdown"]
    assert len(m.hand.board) == 5


# -- FL-9: showdown order, show and muck ----------------------------------------------------------------


def showdown_hand(**options):
    # seats 1..3, button 3: seat 1 small blind, 2 big blind; seat 3 holds the nuts
    return fl(
        [1, 2, 3],
        [(["KhKd", "QhQd", "AhAd"], "2c7d9s3c4h")],
        button=3,
        **options,
    )


def test_FL_9_last_river_bettor_shows_first_losing_hands_mucked():
    m = showdown_hand()
    act(m, (3, "call"), (1, "call"), (2, "check"))
    for _ in range(2):
        act(m, "advance", (1, "check"), (2, "check"), (3, "check"))
    act(m, "advance", (1, "check"), (2, "bet"), (3, "call"), (1, "call"))
    events = m.advance()
    shows = [(e.type, e.data["seat"]) for e in events if e.type in ("show", "muck")]
    # seat 2 bet last on the river: shows first (QQ); then seat 3 (AA, beats it);
    # then seat 1 (KK cannot win any more): mucked
    assert shows == [("show", 2), ("show", 3), ("muck", 1)]
    assert m.view(None)["shown"] == {"2": ["Qh", "Qd"], "3": ["Ah", "Ad"]}
    assert m.hand_record()["actions"][-3:] == ["p2 sm QhQd", "p3 sm AhAd", "p1 sm"]


def test_FL_9_no_river_bet_first_left_of_the_button_shows_first():
    m = showdown_hand()
    act(m, (3, "call"), (1, "call"), (2, "check"))
    events = check_down(m)
    shows = [(e.type, e.data["seat"]) for e in events if e.type in ("show", "muck")]
    assert shows == [("show", 1), ("muck", 2), ("show", 3)]


def test_FL_9_a_player_may_choose_to_show_a_losing_hand():
    m = showdown_hand()
    assert m.control(2, {"type": "show"}) == []
    act(m, (3, "call"), (1, "call"), (2, "check"))
    events = check_down(m)
    shows = [(e.type, e.data["seat"], e.data.get("reason")) for e in events if e.type in ("show", "muck")]
    assert shows == [("show", 1, "showdown"), ("show", 2, "chose"), ("show", 3, "showdown")]


def test_FL_9_controls_rejected_outside_the_hand():
    m = showdown_hand()
    act(m, (3, "fold"))
    with pytest.raises(IllegalAction) as err:
        m.control(3, {"type": "show"})
    assert err.value.code == "not_in_hand"
    with pytest.raises(IllegalAction):
        m.control(1, {"type": "dance"})


def test_FL_9_all_in_and_betting_over_every_hand_turned_face_up():
    m = showdown_hand(starting_stacks=[500, 500, 15])
    events = act(m, (3, "raise"), (1, "call"), (2, "call"))
    # seat 3 is all-in for 15 but seats 1 and 2 still bet: nothing shown yet
    assert "show" not in types(events)
    events = act(m, "advance", (1, "check"), (2, "check"))
    events += act(m, "advance", (1, "bet"), (2, "fold"))
    # betting over (seat 2 folded, one player with chips left): all in face up
    shows = [e.data["seat"] for e in events if e.type == "show"]
    assert sorted(shows) == [1, 3]
    assert m.view(None)["shown"].keys() == {"1", "3"}
    assert "2" not in m.view(None)["shown"]  # folded cards stay hidden


def test_FL_9_spectators_see_exactly_what_the_table_saw():
    m = showdown_hand()
    act(m, (3, "call"), (1, "call"), (2, "check"))
    check_down(m)
    spectator = m.view(None)
    assert "hole" not in spectator
    assert spectator["shown"] == {"1": ["Kh", "Kd"], "3": ["Ah", "Ad"]}
    assert m.view(2)["hole"] == ["Qh", "Qd"]  # the mucking player still sees their own


# -- seed: heads-up, winning without showdown, match end ----------------------------------------------------


def test_seed_heads_up_dealer_posts_small_blind():
    m = fl([1, 2], button=1)
    assert (m.hand.small_blind, m.hand.big_blind) == (1, 2)
    assert m.hand.round.bets == [10, 5]  # players: 2 (big blind), 1 (button)


def test_seed_winning_without_showdown_reveals_nothing():
    m = showdown_hand()
    events = act(m, (3, "raise"), (1, "fold"), (2, "fold"))
    assert "show" not in types(events)
    assert m.view(None)["shown"] == {}
    assert types(events)[-2:] == ["award", "hand_end"]
    assert m.pending == "hand"


def test_seed_match_ends_when_one_player_holds_every_chip():
    m = FixedLimitHoldem.new([1, 2, 3], {"starting_stacks": 30}, FairRandom(b"end"))
    m.start()
    while not m.finished:
        if m.pending:
            m.advance()
        else:
            types_ = {a.type for a in m.legal_actions()}
            act(m, (m.to_act, "raise" if "raise" in types_ else ("call" if "call" in types_ else "check")))
    result = m.result()
    assert sum(m.stacks().values()) == 90
    assert len(result["winners"]) == 1 and m.stacks()[result["winners"][0]] == 90
    assert m.pending is None and m.to_act is None
    with pytest.raises(IllegalAction) as err:
        m.apply(1, {"type": "check"})
    assert err.value.code == "match_over"


def test_blind_levels_option_doubles_the_bets_too():
    m = fl([1, 2], button=1, blind_levels=2)
    act(m, (1, "fold"), "advance", (2, "fold"), "advance")
    assert m.hand_number == 3
    assert m.hand.stakes == {"small_blind": 10, "big_blind": 20, "ante": 0, "big_blind_ante": 0, "small_bet": 20, "big_bet": 40}


def test_finish_hand_helper_needs_closed_rounds():
    m = showdown_hand()
    with pytest.raises(AssertionError):
        finish_hand(m)
