"""Seats, joins, leaves, disconnects and presence on the machine (G-1, G-5, G-9)."""

from __future__ import annotations

import pytest

from cardhall.server.table.inputs import Disconnect, Join, Start
from cardhall.server.table.outputs import JoinAnswer
from tests.server.table.harness import Bench, code, two_players


def test_a_player_sits_in_the_lowest_free_seat_or_the_one_asked_for_G1():
    bench = Bench(seats=3)
    first = bench.join("a", "ann", role="player")
    assert isinstance(first, JoinAnswer) and first.viewer == 1
    second = bench.join("b", "bob", role="player", seat=3)
    assert isinstance(second, JoinAnswer) and second.viewer == 3
    seated = [r.event.data for r in bench.records if r.event.type == "seated"]
    assert [(s["seat"], s["player"]) for s in seated] == [(1, "ann"), (3, "bob")]
    assert bench.m.status == "waiting"  # one seat is still free (G-9)


@pytest.mark.parametrize("fields, expected", [
    ({"role": "dealer"}, "bad_request"),
    ({"role": "player", "seat": 0}, "bad_request"),
    ({"role": "player", "seat": 4}, "bad_request"),
    ({"role": "player", "seat": True}, "bad_request"),
    ({"role": "spectator", "seat": "1"}, "bad_request"),  # checked for spectators too
    ({"since": -1}, "bad_request"),
    ({"since": 1.5}, "bad_request"),
    ({"role": "player", "seed": "s" * 65}, "bad_request"),
    ({"role": "player", "seed": 7}, "bad_request"),
    ({"role": "player", "seat": 2}, "seat_taken"),
])
def test_join_fields_are_checked(fields, expected):
    bench = Bench(seats=3)
    bench.join("b", "bob", role="player", seat=2)
    before = bench.m.seq
    assert code(bench.join("x", "eve", **fields)) == expected
    assert bench.m.seq == before and "x" not in bench.m.subscribers
    assert bench.effects.members == {"x": False} and bench.effects.errors == [expected]


def test_one_seat_per_player_and_no_seat_while_a_match_runs_G5_G9():
    bench = two_players(seats=2)
    assert code(bench.join("a2", "ann", role="player", seat=2)) == "already_seated"
    again = bench.join("a2", "ann", role="player")  # the same player on a second connection
    assert isinstance(again, JoinAnswer) and again.viewer == 1
    assert bench.m.presence(1) == 2 and bench.types()[-1] != "presence"  # still connected: no event
    assert code(bench.join("c", "carl", role="player")) == "match_running"
    full = Bench(seats=2, bots=["random"])
    full.join("a", "ann", role="player")
    assert code(full.join("b", "bob", role="player")) in ("match_running", "table_full")


def test_a_finished_table_with_every_seat_taken_has_no_free_seat_G9():
    bench = Bench(seats=2, bots=["random", "random"], options={"points_to_win": 1})
    bench.step(Start())
    bench.run(until="match_ended")
    assert bench.m.status == "finished"
    assert code(bench.join("c", "carl", role="player")) == "table_full"
    assert isinstance(bench.join("c", "carl"), JoinAnswer)  # watching is always possible


def test_a_disconnect_keeps_the_seat_with_presence_events_G5():
    bench = two_players()
    bench.disconnect("b")
    assert bench.records[-1].event.data == {"type": "presence", "seat": 2, "connected": False}
    assert 2 in bench.m.seats and bench.m.presence(2) == 0
    assert bench.effects.members == {"b": False}
    assert bench.m.info()["occupants"][1]["connected"] is False
    back = bench.join("b2", "bob", role="player")
    assert isinstance(back, JoinAnswer) and back.viewer == 2
    assert bench.records[-1].event.data == {"type": "presence", "seat": 2, "connected": True}
    assert bench.m.info()["occupants"][1]["connected"] is True


def test_leave_between_matches_frees_the_seat_during_a_match_sits_out_G5():
    bench = Bench(seats=3)
    bench.join("b", "bob", role="player", seat=2)
    assert code(bench.leave("b", "bob")) == "ok"
    assert 2 not in bench.m.seats and bench.last("left").event.data == {"type": "left", "seat": 2}
    assert code(bench.leave("b", "bob")) == "not_joined"
    running = two_players()
    assert code(running.leave("b", "bob")) == "ok"
    assert running.m.seats[2].sitting_out and 2 in running.m.seats
    assert running.last("sat_out").event.data == {"type": "sat_out", "seat": 2, "reason": "left"}


def test_a_spectator_join_is_answered_with_a_snapshot_and_counted():
    bench = two_players()
    answer = bench.join("s", "sam")
    assert isinstance(answer, JoinAnswer) and answer.viewer is None and answer.since is None
    assert bench.m.subscribers.spectators == 1 and bench.m.lobby_entry()["spectators"] == 1
    snap = bench.m.snapshot(None, "r", bench.mono)
    assert snap["you"] is None and snap["seq"] == bench.m.seq and "legal" not in snap
    assert snap["state"] == bench.m.engine.view(None)


def test_the_join_that_takes_the_last_seat_gets_the_table_before_the_match_G9():
    bench = Bench(seats=2)
    bench.join("a", "ann", role="player")
    answer = bench.join("b", "bob", role="player")
    assert isinstance(answer, JoinAnswer) and answer.before is not None
    assert answer.before["info"]["status"] == "waiting" and answer.before["state"] is None
    assert answer.before["seq"] < bench.last("match_started").seq
    assert bench.m.status == "running"


def test_a_join_and_a_disconnect_in_one_step_leave_no_answer():
    bench = two_players()
    bench.step(Join("s", "sam", "sam", 1), Disconnect("s"))
    assert not [j for j in bench.joins if j.sub == "s"] and "s" not in bench.m.subscribers
    assert bench.effects.members == {"s": False}
