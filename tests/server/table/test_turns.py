"""Turns on the machine with a fake clock: the action clock and time bank,
timeouts and sitting out (G-3), pacing and the solo player's continue (G-4),
bots (NL-5), stale inputs, who may act."""

from __future__ import annotations

import pytest

from cardhall.server.table.inputs import (
    Act,
    AutoDue,
    BotDue,
    ClockDue,
    Disconnect,
    Leave,
    RematchDue,
    ServiceStopping,
    Start,
    StepDue,
)
from cardhall.server.table.outputs import Timer
from tests.server.table.harness import SEATS, Bench, code, to_act, two_players

CLOCKED = {"action_clock": 30, "time_bank": 60}


@pytest.mark.parametrize("wait, bank_left", [(0, 60.0), (10, 60.0), (30, 60.0), (45, 45.0), (89, 1.0)])
def test_the_bank_is_used_only_past_the_action_clock_G3(wait, bank_left):
    bench = two_players(options=CLOCKED)
    seat, sub, player = to_act(bench)
    turn = bench.m.turn_id
    assert bench.timer == Timer(bench.mono + 90, ClockDue(turn, bench.mono + 90))
    record = bench.records[-1]
    assert record.seq == turn and record.turn == {"seat": seat, "id": turn, "clock": 30.0, "bank": 60.0}
    bench.wait(wait)
    assert bench.m.turn_public(bench.mono) == {"seat": seat, "id": turn, "clock": max(0, 30 - wait),
                                               "bank": bank_left}
    assert code(bench.act(sub, player, {"type": "check"}, turn=turn)) == "ok"
    assert bench.m.seats[seat].bank == bank_left and bench.m.seats[seat].timeouts == 0
    nxt = bench.records[-1]
    assert nxt.turn is not None and nxt.turn["seat"] == 3 - seat and nxt.turn["bank"] == 60.0


def test_the_clock_runs_out_the_timeout_action_then_two_in_a_row_sit_out_G3():
    bench = two_players(options={"action_clock": 5, "time_bank": 10})
    first, _, _ = to_act(bench)
    assert bench.timer is not None and bench.timer.at == bench.mono + 15
    bench.fire()  # checking is free: the timeout checks
    assert bench.last("timeout").event.data == {"type": "timeout", "seat": first, "action": {"type": "check"}}
    occ = bench.m.seats[first]
    assert occ.bank == 0.0 and occ.timeouts == 1 and not occ.sitting_out
    seat, sub, player = to_act(bench)
    assert seat == 3 - first
    bench.act(sub, player, {"type": "all_in"}, turn=bench.m.turn_id)
    assert bench.m.turn_seat == first and bench.timer is not None and bench.timer.at == bench.mono + 5  # no bank left
    bench.fire()  # facing an all-in checking is not legal: the timeout folds
    assert bench.last("timeout").event.data == {"type": "timeout", "seat": first, "action": {"type": "fold"}}
    assert bench.last("sat_out").event.data == {"type": "sat_out", "seat": first, "reason": "timeouts"}
    assert occ.sitting_out and occ.timeouts == 2


def test_a_voluntary_act_resets_the_timeout_count_G3():
    bench = two_players(options={"action_clock": 5, "time_bank": 0})
    first, sub, player = to_act(bench)
    bench.fire()
    assert bench.m.seats[first].timeouts == 1
    _other, osub, oplayer = to_act(bench)
    bench.act(osub, oplayer, {"type": "check"}, turn=bench.m.turn_id)  # the street ends; the next one begins
    while bench.m.turn_seat != first:
        seat, s, p = to_act(bench)
        bench.act(s, p, {"type": "check"}, turn=bench.m.turn_id)
    bench.act(sub, player, {"type": "check"}, turn=bench.m.turn_id)
    assert bench.m.seats[first].timeouts == 0
    while bench.m.turn_seat != first:
        _seat, s, p = to_act(bench)
        bench.act(s, p, {"type": "check"}, turn=bench.m.turn_id)
    bench.fire()
    assert bench.m.seats[first].timeouts == 1 and not bench.m.seats[first].sitting_out


def test_a_sitting_out_seat_is_played_at_once_and_sit_in_brings_it_back_G3():
    bench = two_players(options=CLOCKED)
    seat, sub, player = to_act(bench)
    turn = bench.m.turn_id
    assert code(bench.act(sub, player, {"type": "sit_out"}, turn=turn)) == "ok"
    assert bench.last("sat_out").event.data == {"type": "sat_out", "seat": seat, "reason": "player"}
    assert bench.timer == Timer(bench.mono, AutoDue(turn, bench.mono))  # at once, as its own input
    bench.fire()
    assert bench.m.turn_id != turn and bench.records[-2].event.data.get("seat") == seat
    assert code(bench.act(sub, player, {"type": "sit_out"})) == "bad_state"
    assert code(bench.act(sub, player, {"type": "sit_in"})) == "ok"
    assert not bench.m.seats[seat].sitting_out and bench.m.seats[seat].timeouts == 0
    assert code(bench.act(sub, player, {"type": "sit_in"})) == "bad_state"


@pytest.mark.parametrize("make", [
    lambda m: ClockDue(m.turn_id - 1, 0.0),
    lambda m: ClockDue(m.turn_id, 0.0),  # the right turn, another deadline (a clock paused since)
    lambda m: BotDue(m.turn_id, 0.0),  # not a bot's turn
    lambda m: AutoDue(m.turn_id - 1, 0.0),
    lambda m: StepDue(m.seq, 0.0),  # no step is pending
    lambda m: RematchDue(m.match, 0.0),  # the match is running
])
def test_stale_timer_inputs_change_nothing(make):
    bench = two_players(options=CLOCKED)
    before = (bench.m.seq, bench.m.turn_id, bench.m.clock, bench.timer)
    effects = bench.step(make(bench.m))
    assert (bench.m.seq, bench.m.turn_id, bench.m.clock, bench.timer) == before
    assert effects.timer is None and not bench.out.records and not bench.out.dirty


def test_only_the_seat_to_act_acts_and_only_in_its_turn():
    bench = two_players(options=CLOCKED)
    seat, sub, player = to_act(bench)
    other_sub, other_player = SEATS[3 - seat]
    turn, seq = bench.m.turn_id, bench.m.seq
    assert code(bench.act(other_sub, other_player, {"type": "check"})) == "not_your_turn"
    assert code(bench.act(sub, player, {"type": "check"}, turn=turn - 1)) == "stale_turn"
    assert code(bench.act(sub, player, {"type": "raise", "amount": 5})) == "illegal_action"
    assert bench.replies[-1][1]["reason"]
    assert code(bench.act(sub, player, {"type": "check", "amount": "lots"})) == "bad_request"
    assert code(bench.act(sub, player, "check")) == "bad_request"
    assert code(bench.act(sub, player, {"type": "check"}, turn=True)) == "bad_request"
    assert code(bench.act(sub, player, {"type": "continue"})) == "bad_state"
    bench.join("s", "sam")
    for kind in ("check", "fold", "all_in", "continue", "sit_out", "show"):
        assert code(bench.act("s", "sam", {"type": kind}, turn=turn)) == "not_a_player"
    assert code(bench.act("nobody", "eve", {"type": "check"})) == "not_joined"
    assert (bench.m.turn_id, bench.m.seq) == (turn, seq)  # nothing changed
    assert code(bench.act(sub, player, {"type": "check"}, turn=turn)) == "ok"


def test_error_replies_keep_their_order_after_earlier_replies():
    bench = two_players(options=CLOCKED)
    _seat, sub, player = to_act(bench)
    turn = bench.m.turn_id
    bench.step(Act(sub, player, 1, {"type": "check"}, turn), Act(sub, player, 2, {"type": "check"}, turn))
    assert [(f["type"], f["re"]) for _, f in bench.replies[-2:]] == [("ok", 1), ("error", 2)]
    assert bench.replies[-1][1]["code"] == "stale_turn"


def test_pacing_between_streets_waits_for_the_pause_G4():
    bench = two_players(options={"pause": 1.5})
    for _ in range(2):
        _seat, sub, player = to_act(bench)
        bench.act(sub, player, {"type": "check"}, turn=bench.m.turn_id)
    assert bench.m.turn_id is None and bench.m.engine.pending == "street"
    step = bench.m.step_id
    assert bench.timer == Timer(bench.mono + 1.5, StepDue(step, bench.mono + 1.5))
    seq = bench.m.seq
    bench.fire()
    assert bench.m.seq > seq and bench.m.step_id is None and bench.m.turn_kind == "human"


def _solo(options: dict | None = None) -> Bench:
    """ann alone with two bots, waiting for her continue."""
    bench = Bench(seats=3, bots=["random", "random"], options={"points_to_win": 3, **(options or {})})
    bench.join("a", "ann", role="player", seat=1)
    for _ in range(500):
        if bench.m.turn_kind == "continue":
            return bench
        if bench.m.turn_kind == "human":
            bench.act("a", "ann", {"type": "fold"}, turn=bench.m.turn_id)
        else:
            bench.fire()
    raise AssertionError("the solo table never waited for continue")


def test_a_solo_player_is_waited_for_with_continue_G4_NL5():
    bench = _solo({"pause": 2})
    turn = bench.m.turn_id
    assert bench.records[-1].turn == {"seat": 1, "id": turn, "continue": True}
    assert bench.timer is None  # no pause: the table waits for the player
    bench.wait(60)
    assert bench.m.turn_kind == "continue" and bench.m.turn_id == turn
    seq = bench.m.seq
    assert code(bench.act("a", "ann", {"type": "continue"}, turn=turn)) == "ok"
    assert bench.m.seq > seq and bench.m.turn_id != turn
    assert code(bench.act("a", "ann", {"type": "continue"}, turn=turn)) == "stale_turn"


@pytest.mark.parametrize("how", ["disconnect", "leave", "sit_out"])
def test_a_solo_player_who_is_gone_is_not_waited_for_G4_G5(how):
    bench = _solo()
    seq = bench.m.seq
    if how == "disconnect":
        bench.step(Disconnect("a"))
    elif how == "leave":
        bench.step(Leave("a", "ann", 1))
    else:
        bench.act("a", "ann", {"type": "sit_out"})
    assert bench.m.turn_kind != "continue" and bench.m.seq > seq + 1
    bench.run(until="match_ended", limit=20_000, clocks=True)  # ann's turns run on her clock
    assert bench.m.status == "finished"


def test_a_solo_player_is_still_waited_for_while_the_service_stops_G4():
    bench = _solo()
    turn, seq = bench.m.turn_id, bench.m.seq
    bench.step(ServiceStopping(), Disconnect("a"))
    assert bench.m.turn_kind == "continue" and bench.m.turn_id == turn
    assert bench.types(seq) == ["presence"]


def test_bots_think_between_half_and_one_and_a_half_times_bot_think_NL5():
    bench = Bench("no_limit_holdem", seats=3, bots=["random"] * 3, options={"bot_think": 2, "auto_rematch": True})
    bench.step(Start())
    waits = []
    for _ in range(40):
        assert bench.timer is not None
        if isinstance(bench.timer.due, BotDue):
            waits.append(bench.timer.at - bench.mono)
        bench.fire()
    assert waits and all(1.0 <= w <= 3.0 for w in waits) and len(set(waits)) > 1
