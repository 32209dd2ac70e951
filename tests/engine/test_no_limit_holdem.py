"""No-limit Hold'em (seed 004, RULES NL-1..NL-7, the G- items of an engine).

The six scenarios that other engines got wrong are
the ``test_scenario_*`` tests; the rest are table-driven per RULES item.
"""

from __future__ import annotations

import msgpack
import pytest

from cardhall.engine.base import IllegalAction
from cardhall.engine.games.no_limit_holdem import NoLimitHoldem
from cardhall.engine.rng import FairRandom
from cardhall.engine.stacked import StackedDeck
from tests.engine.holdem_util import act, check_down, deck, finish_hand, nl, types


def legal(m: NoLimitHoldem) -> dict[str, tuple[int | None, int | None]]:
    return {a.type: (a.min, a.max) for a in m.legal_actions()}


# -- six scenarios other engines got wrong --------------------------------------------------


def three_way(**options):
    """NL 10/20: seat 1 button (1000), seat 2 small blind (300), seat 3 big blind
    (1000); AhAd to the small blind, KhKd to the big blind, QhQd to the button."""
    return nl(
        [1, 2, 3],
        [(["AhAd", "KhKd", "QhQd"], "2c7d9s3c4h")],
        button=1,
        starting_stacks=[1000, 300, 1000],
        **options,
    )


def test_scenario_1_button_all_in_short_small_blind_calls_all_in_big_blind_calls():
    m = three_way()
    assert m.to_act == 1
    act(m, (1, "all_in"), (2, "call"), (3, "call"))
    assert m.pending == "street"  # FL-8: no betting left, the board runs out
    finish_hand(m)
    assert m.stacks() == {2: 900, 3: 1400, 1: 0}


def test_scenario_2_all_in_player_stays_eligible_while_others_check_down():
    m = three_way()
    act(m, (1, "call"), (2, "all_in"), (3, "call"), (1, "call"))
    assert m.pending == "street"
    events = []
    for _street in ("flop", "turn", "river"):
        events += m.advance()
        events += act(m, (3, "check"), (1, "check"))
    events += m.advance()
    assert m.stacks() == {2: 900, 3: 700, 1: 700}
    award = [e.data for e in events if e.type == "award"]
    assert award[0]["winners"] == {"2": 900}


def test_scenario_3_short_all_in_under_a_full_raise_does_not_reopen():
    # seats: 1 small blind 190, 2 big blind 1000, 3 first to act 160, 4 button 1000
    m = nl([1, 2, 3, 4], button=4, starting_stacks=[190, 1000, 160, 1000])
    act(m, (3, "all_in"), (4, "call"), (1, "all_in"), (2, "call"))
    assert m.to_act == 4
    assert legal(m) == {"fold": (None, None), "call": (30, 30)}
    with pytest.raises(IllegalAction) as err:
        m.apply(4, {"type": "raise", "amount": 400})
    assert err.value.code == "not_reopened" and err.value.rule == "NL-3"


def test_scenario_4_raise_capped_by_stack_is_exactly_all_in():
    m = nl([1, 2], [(["2c2d", "3c3d"], "3s8d9s")], button=2)  # seat 1 big blind, seat 2 button
    act(m, (2, "raise", 700), (1, "call"), "advance", (1, "bet", 220))
    assert legal(m) == {"fold": (None, None), "call": (220, 220), "raise": (300, 300), "all_in": (300, 300)}
    for amount in (299, 301, 440):
        with pytest.raises(IllegalAction):
            m.apply(2, {"type": "raise", "amount": amount})
    act(m, (2, "raise", 300))
    assert m.stacks()[2] == 0


def test_scenario_5_wheel_beats_three_of_a_kind():
    m = nl([1, 2], [(["Ah2c", "9s9d"], "3d4s5c9hKd")], button=2)
    act(m, (2, "call"), (1, "check"))
    check_down(m)
    assert m.stacks() == {1: 1020, 2: 980}


@pytest.mark.parametrize("seats", [[1, 2], [4, 7]])
def test_scenario_6_heads_up_button_posts_small_blind_acts_first_preflop_last_after(seats):
    low, high = seats
    m = nl(seats, button=high)
    hand = m.hand
    assert (hand.small_blind, hand.big_blind) == (high, low)
    assert m.to_act == high  # the button acts first preflop
    act(m, (high, "call"), (low, "check"), "advance")
    assert m.to_act == low  # and the big blind first on the flop


def test_scenario_6_three_handed_match_going_heads_up_after_a_bust_out():
    # hand 1: button 1, small blind 2, big blind 3 (40 chips), who busts
    m = nl(
        [1, 2, 3],
        [(["KhKd", "2c3d", "AhAd"], "9c9dTs4h5s"), (["7c7d", "8c8d"], "")],
        button=1,
        starting_stacks=[1000, 1000, 40],
    )
    act(m, (1, "fold"), (2, "all_in"), (3, "call"))
    finish_hand(m)
    assert m.stacks()[3] == 0 and m.eliminated == [[3]]
    m.advance()
    hand = m.hand
    # the big blind moves on to seat 1 (TDA 34: nobody posts it twice in a
    # row); seat 2 is the button and posts the small blind (RRoP blinds 3)
    assert (hand.button, hand.small_blind, hand.big_blind) == (2, 2, 1)
    assert m.to_act == 2
    act(m, (2, "call"), (1, "check"), "advance")
    assert m.to_act == 1


# -- NL-1: players, stacks and blinds ---------------------------------------------


def test_NL_1_defaults_and_seat_counts():
    m = NoLimitHoldem.new([1, 2, 3], {"button": 1}, FairRandom(b"x"))
    assert m.options["starting_stacks"] == [1000, 1000, 1000]
    assert (m.options["small_blind"], m.options["big_blind"]) == (10, 20)
    for seats in ([1], list(range(1, 11))):
        with pytest.raises(ValueError, match="seats"):
            NoLimitHoldem.new(seats, None, FairRandom(b"x"))
    NoLimitHoldem.new(list(range(1, 10)), None, FairRandom(b"x"))


@pytest.mark.parametrize(
    "option, value",
    [
        ("starting_stacks", 0),
        ("starting_stacks", [100, 100]),
        ("small_blind", 30),
        ("big_blind", 0),
        ("ante", -1),
        ("min_bet", 0),
        ("button", 5),
        ("profile", "casino"),
        ("ante_trimming", True),
        ("blind_levels", 0),
        ("item_stakes", 7),
        ("nonsense", 1),
    ],
)
def test_NL_1_bad_options_are_named(option, value):
    with pytest.raises(ValueError, match=option):
        NoLimitHoldem.new([1, 2, 3], {option: value}, FairRandom(b"x"))


# -- NL-2: raise-to totals, minimum bet and raise -------------------------------------

NL_2_CASES = [
    # (script before, seat to act, expected bet/raise (min, max))
    ([], 3, ("raise", 40, 1000)),  # preflop: minimum raise to twice the big blind
    ([(3, "raise", 70)], 1, ("raise", 120, 1000)),  # a raise adds at least the last raise (50)
    ([(3, "call"), (1, "call"), (2, "check"), "advance"], 1, ("bet", 20, 980)),  # minimum bet = big blind
    ([(3, "call"), (1, "call"), (2, "check"), "advance", (1, "bet", 50)], 2, ("raise", 100, 980)),
]


@pytest.mark.parametrize("script, seat, expected", NL_2_CASES)
def test_NL_2_amounts_are_raise_to_totals(script, seat, expected):
    m = nl([1, 2, 3], button=3)  # seat 1 small blind, 2 big blind, 3 first to act
    act(m, *script)
    assert m.to_act == seat
    kind, low, high = expected
    assert legal(m)[kind] == (low, high)


@pytest.mark.parametrize(
    "amount, code",
    [(39, "amount_too_small"), (1001, "amount_too_large"), ("50", "bad_amount"), (True, "bad_amount"), (None, "amount_required")],
)
def test_NL_2_bad_raise_amounts_rejected_state_unchanged(amount, code):
    m = nl([1, 2, 3], button=3)
    before = m.to_data()
    action = {"type": "raise"}
    if amount is not None:
        action["amount"] = amount
    with pytest.raises(IllegalAction) as err:
        m.apply(3, action)
    assert err.value.code == code
    assert m.to_data() == before


def test_NL_2_all_in_for_less_than_a_minimum_bet_is_allowed():
    m = nl([1, 2], button=2, starting_stacks=[1000, 35])
    act(m, (2, "call"), (1, "check"), "advance")
    act(m, (1, "check"))
    assert legal(m)["bet"] == (15, 15)  # 15 behind < minimum bet 20: all-in only
    act(m, (2, "all_in"))
    assert legal(m) == {"fold": (None, None), "call": (15, 15)}


def test_NL_2_bet_and_raise_names_checked():
    m = nl([1, 2, 3], button=3)
    with pytest.raises(IllegalAction, match="raise instead"):
        m.apply(3, {"type": "bet", "amount": 60})
    act(m, (3, "call"), (1, "call"), (2, "check"), "advance")
    with pytest.raises(IllegalAction, match="bet instead"):
        m.apply(1, {"type": "raise", "amount": 60})


# -- NL-3: short all-ins (TDA 47A) -----------------------------------------------------

NL_3_CASES = [
    # stacks (seat order), script, seat to act, may raise?, min raise-to
    # bet 100, short all-in to 150: the bettor may only call
    ([1000, 1000, 170, 1000], [(1, "bet", 100), (2, "call"), (3, "all_in"), (4, "call")], 1, False, None),
    # ...but a player yet to act may raise, by the last full raise (100): to 250
    ([1000, 1000, 170, 1000], [(1, "bet", 100), (2, "call"), (3, "all_in")], 4, True, 270),
    # two short all-ins adding up to a full raise reopen it for the bettor
    ([1000, 170, 220, 1000], [(1, "bet", 100), (2, "all_in"), (3, "all_in"), (4, "call")], 1, True, 320),
]


@pytest.mark.parametrize("stacks, script, seat, may_raise, low", NL_3_CASES)
def test_NL_3_short_all_in_reopening(stacks, script, seat, may_raise, low):
    # button seat 4; play to the flop with everybody calling 20, then the script
    m = nl([1, 2, 3, 4], button=4, starting_stacks=[s + 20 for s in stacks])
    act(m, (3, "call"), (4, "call"), (1, "call"), (2, "check"), "advance", *script)
    assert m.to_act == seat
    options = legal(m)
    assert ("raise" in options) == may_raise
    if may_raise:
        assert options["raise"][0] == low


def test_NL_3_minimum_raise_stays_the_last_full_one():
    # preflop: raise to 100 (a raise of 80); a short all-in to 150 (a raise of 50)
    # leaves the next minimum at 150 + 80
    m = nl([1, 2, 3, 4], button=4, starting_stacks=[1000, 1000, 1000, 150])
    act(m, (3, "raise", 100), (4, "all_in"))
    assert legal(m)["raise"] == (230, 1000)


# -- NL-4: button and blinds ------------------------------------------------------------


def test_NL_4_first_button_at_random_through_the_injected_rng():
    seats = [2, 4, 6, 8]
    orders = [deck([], "")] * 3
    for draw in range(4):
        m = NoLimitHoldem.new(seats, {"blind_levels": None}, StackedDeck(*orders, draws=[draw]))
        m.start()
        assert m.button == seats[draw]


def test_NL_4_FL_4_big_blind_all_in_for_less_leaves_the_full_blind_to_call():
    m = nl([1, 2, 3], button=3, starting_stacks=[1000, 15, 1000])
    assert m.hand.round.bets == [10, 15, 0]
    assert legal(m)["call"] == (20, 20)  # the full big blind (FL-4 via NL-4)
    act(m, (3, "call"), (1, "call"))
    # the 5 over the short blind is a side pot between seats 3 and 1
    m.advance()
    assert m.view(None)["pots"] == [{"amount": 45, "eligible": [1, 2, 3]}, {"amount": 10, "eligible": [1, 3]}]


def test_NL_4_phh_profile_asks_only_the_short_blind():
    m = nl([1, 2, 3], button=3, starting_stacks=[1000, 15, 1000], profile="phh")
    assert legal(m)["call"] == (15, 15)
    assert legal(m)["raise"][0] == 35  # pokerkit: the largest bet posted + the minimum bet


# -- NL-6 item stakes, NL-7 blind levels ------------------------------------------------


def test_NL_6_item_stakes_recorded_as_awarded_to_the_winner():
    m = nl([1, 2], [(["AhAd", "2c7d"], "3c8h9sKdJc")], button=2, item_stakes="a diamond")
    act(m, (2, "all_in"), (1, "call"))
    events = finish_hand(m)
    assert m.finished
    end = [e.data for e in events if e.type == "match_end"][0]
    assert end["item_stakes"] == "a diamond" and end["winners"] == [1]
    assert m.result()["item_stakes"] == "a diamond"
    assert m.view(None)["item_stakes"] == "a diamond"


def test_NL_7_blinds_double_every_15_hands_by_default():
    m = NoLimitHoldem.new([1, 2], {"button": 1}, FairRandom(b"levels"))
    events = m.start()
    levels = []
    while m.hand_number < 31:
        if m.pending == "hand":
            events = m.advance()
            levels += [e.data for e in events if e.type == "blind_level"]
            assert m.hand.stakes["big_blind"] == 20 * 2 ** ((m.hand_number - 1) // 15)
        else:
            act(m, (m.to_act, "fold" if "call" in legal(m) else "check"))
            while m.pending in ("street", "showdown"):
                m.advance()
    assert [(lv["level"], lv["hand"], lv["stakes"]["small_blind"], lv["stakes"]["big_blind"]) for lv in levels] == [
        (1, 16, 20, 40),
        (2, 31, 40, 80),
    ]


def test_NL_7_blind_levels_off_keeps_blinds_fixed():
    m = nl([1, 2], button=1)
    for _ in range(20):
        act(m, (m.to_act, "fold"), "advance")
    assert m.hand.stakes["big_blind"] == 20


# -- G items --------------------------------------------------------------------------


def test_G_2_dealing_order_from_the_shuffled_deck():
    order = deck(["AhAd", "KhKd", "QhQd"], "2c7d9s3c4h")
    m = NoLimitHoldem.new([1, 2, 3], {"button": 1, "blind_levels": None}, StackedDeck(order))
    m.start()
    # PHH order: 2 (small blind), 3 (big blind), 1 (button): one card at a time
    assert m.hand.hole == [["Ah", "Ad"], ["Kh", "Kd"], ["Qh", "Qd"]]
    act(m, (1, "call"), (2, "call"), (3, "check"))
    events = m.advance()
    board = [e.data for e in events if e.type == "board"][0]
    assert board["cards"] == ["2c", "7d", "9s"] and order[6] not in board["cards"]  # burn first (FL-5)


def test_G_2_views_hide_the_deck_and_unshown_hole_cards():
    m = nl([1, 2, 3], [(["AhAd", "KhKd", "QhQd"], "2c7d9s3c4h")], button=1)
    packed = {v: msgpack.packb(m.view(v)) for v in (None, 1, 2, 3)}
    for viewer, blob in packed.items():
        seen = {c for c in ("Ah", "Ad", "Kh", "Kd", "Qh", "Qd") if c.encode() in blob}
        own = {1: {"Qh", "Qd"}, 2: {"Ah", "Ad"}, 3: {"Kh", "Kd"}, None: set()}[viewer]
        assert seen == own
        assert b"2c" not in blob and b"7d" not in blob  # the board to come


def test_G_3_timeout_checks_when_free_else_folds():
    m = nl([1, 2, 3], button=3)
    assert m.timeout_action(3) == {"type": "fold"}
    act(m, (3, "call"), (1, "call"))
    assert m.timeout_action(2) == {"type": "check"}
    with pytest.raises(IllegalAction):
        m.timeout_action(1)


@pytest.mark.parametrize(
    "holes, board, winners",
    [
        # both play the board's straight: 1000 + 1000 split, no odd chip
        (["2c3d", "2h3h"], "TsJdQhKcAs", {"1": 20, "2": 20}),
    ],
)
def test_G_6_ties_split_evenly(holes, board, winners):
    m = nl([1, 2], [(holes, board)], button=2)
    act(m, (2, "call"), (1, "check"))
    events = check_down(m)
    assert [e.data["winners"] for e in events if e.type == "award"] == [winners]


def test_G_6_odd_chip_to_the_first_tied_seat_left_of_the_button():
    # seats 1..3, button 2: small blind 3 (posts 5), big blind 1; the small blind
    # folds, leaving a 25-chip pot the big blind and the button split: 13 to the
    # first tied seat left of the button, i.e. seat 1 before seat 2 (button last)
    m = nl([1, 2, 3], [(["7c2d", "2h3h", "2s3s"], "TsJdQhKcAs")], button=2, small_blind=5, big_blind=10)
    act(m, (2, "call"), (3, "fold"), (1, "check"))
    events = check_down(m)
    assert [e.data["winners"] for e in events if e.type == "award"] == [{"1": 13, "2": 12}]


def test_G_7_rematch_is_a_new_match_with_the_next_button():
    m = nl([1, 2, 3], button=1)
    rematch = NoLimitHoldem.new([1, 2, 3], {"button": 2, "blind_levels": None}, FairRandom(b"next"))
    rematch.start()
    assert rematch.button == 2 and rematch.hand_number == 1
    assert rematch.hand.start == [1000, 1000, 1000]
    assert m.button == 1


# -- match flow, views, records -----------------------------------------------------------


def test_pending_steps_and_advance_with_nothing_pending():
    m = nl([1, 2, 3], button=3)
    with pytest.raises(IllegalAction) as err:
        m.advance()
    assert err.value.code == "nothing_pending"
    act(m, (3, "call"), (1, "call"), (2, "check"))
    assert m.pending == "street" and m.to_act is None
    with pytest.raises(IllegalAction) as err:
        m.apply(1, {"type": "check"})
    assert err.value.code == "not_your_turn"
    act(m, "advance")
    assert m.pending is None and m.to_act == 1


def test_hand_record_in_phh_fields():
    m = three_way()
    act(m, (1, "all_in"), (2, "call"), (3, "call"))
    finish_hand(m)
    rec = m.hand_record()
    assert rec["variant"] == "NT" and rec["min_bet"] == 20
    assert rec["blinds_or_straddles"] == [10, 20, 0] and rec["antes"] == [0, 0, 0]
    assert rec["starting_stacks"] == [300, 1000, 1000] and rec["finishing_stacks"] == [900, 1400, 0]
    assert rec["_cardhall_seats"] == [2, 3, 1] and rec["_cardhall_button"] == 1
    assert rec["actions"][:3] == ["d dh p1 AhAd", "d dh p2 KhKd", "d dh p3 QhQd"]
    assert rec["actions"][3:6] == ["p3 cbr 1000", "p1 cc", "p2 cc"]
    # all-in and betting over: every hand face up (FL-9), then the board
    assert rec["actions"][6:] == ["p3 sm QhQd", "p1 sm AhAd", "p2 sm KhKd", "d db 2c7d9s", "d db 3c", "d db 4h"]


def test_heads_up_hand_record_blinds_in_pokerkit_positional_convention():
    m = nl([1, 2], button=2, big_blind_ante=20)
    act(m, (2, "fold"))
    rec = m.hand_record()
    # p1 is the big blind, p2 the button; pokerkit reads index 0's blind from [1]
    assert rec["_cardhall_seats"] == [1, 2]
    assert rec["blinds_or_straddles"] == [10, 20] and rec["antes"] == [0, 20]


def test_match_result_ranks_by_elimination():
    m = nl(
        [1, 2, 3],
        [(["AhAd", "KhKd", "QhQd"], "2c7d9s3c4h"), (["AsAc", "2c7d"], "3s8h9dTcJc")],
        button=1,
        starting_stacks=[1000, 300, 1000],
    )
    act(m, (1, "all_in"), (2, "call"), (3, "call"))
    events = finish_hand(m)
    assert types(events)[-2:] == ["hand_end", "bust"]
    assert m.eliminated == [[1]]
    m.advance()
    # heads-up: seat 2 (900) vs seat 3 (1400)
    while not m.finished:
        if m.pending:
            m.advance()
        else:
            act(m, (m.to_act, "all_in" if "all_in" in legal(m) else "call"))
    result = m.result()
    assert result["ranking"][-1] == [1] and result["loser"] == [1]
    assert result["winners"] == result["ranking"][0]


def test_state_round_trips_through_msgpack_mid_hand():
    m = three_way()
    act(m, (1, "call"), (2, "raise", 100))
    data = msgpack.unpackb(msgpack.packb(m.to_data()))
    back = NoLimitHoldem.from_data(data)
    assert back == m
    assert back.legal_actions() == m.legal_actions()
    act(back, (3, "call"))
    act(m, (3, "call"))
    assert back == m
    with pytest.raises(ValueError):
        NoLimitHoldem.from_data({"game": "no_limit_holdem"})


def test_FL_1_NL_4_dead_small_blind_option_for_a_first_hand_after_a_bust_out():
    """Option ``dead_small_blind``: the first seat left of the button posts the big
    blind, nobody the small blind; the next hand's small blind is that big blind
    and the button deals from the same place (FL-1 dead small blind)."""
    m = nl([1, 2, 3], button=3, dead_small_blind=True)
    assert m.view(None)["button"] == 3
    assert m.hand.small_blind is None and m.hand.big_blind == 1
    assert m.stacks() == {1: 980, 2: 1000, 3: 1000}
    assert m.to_act == 2  # left of the big blind
    act(m, (2, "fold"), (3, "fold"))
    finish_hand(m)
    act(m, "advance")
    assert (m.hand.button, m.hand.small_blind, m.hand.big_blind) == (3, 1, 2)


def test_dead_small_blind_is_ignored_heads_up():
    """Heads-up the button always posts the small blind (FL-1 overrides the dead small blind)."""
    m = nl([1, 2], button=2, dead_small_blind=True)
    assert (m.hand.small_blind, m.hand.big_blind) == (2, 1)
