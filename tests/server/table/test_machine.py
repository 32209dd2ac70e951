"""The machine's step bookkeeping: outputs wait until they are taken (the
owner writes them first), stalls while the store is down, a checkpoint the
store refuses, the subscribers' memberships."""

from __future__ import annotations

from cardhall.server.table.clock import PausedClock, TurnClock
from cardhall.server.table.inputs import (
    Act,
    ClockDue,
    Close,
    Disconnect,
    Join,
    Leave,
    ServiceStopping,
    StoreBack,
    StoreFailed,
    StoreRejected,
    StoreWritten,
)
from cardhall.server.table.outputs import (
    BROKEN,
    CANCEL,
    STALLED,
    UNSTALLED,
    Reply,
    Timer,
)
from tests.server.table.harness import SEATS, to_act, two_players

CLOCKED = {"action_clock": 30, "time_bank": 60}


def test_outputs_wait_in_pending_until_taken():
    bench = two_players(options=CLOCKED)
    _seat, sub, player = to_act(bench)
    bench.step(Act(sub, player, 1, {"type": "check"}, bench.m.turn_id, received=bench.mono - 0.25), deliver=False)
    pending = bench.m.pending
    assert pending.needs_commit and pending.records and pending.replies == [Reply(sub, {"type": "ok", "re": 1})]
    assert pending.actions == 1 and pending.arrivals == [bench.mono - 0.25]
    bench.step(Join("s", "sam", "sam", 2), deliver=False)  # a second step adds to the same outputs
    assert bench.m.pending is pending and [j.sub for j in pending.joins] == ["s"]
    out = bench.m.take()
    assert out is pending and bench.m.pending.empty and not bench.m.pending.needs_commit
    # an answer that changes nothing needs no checkpoint
    bench.step(Act("s", "sam", 3, {"type": "check"}), deliver=False)
    assert not bench.m.pending.needs_commit and bench.m.pending.replies[0].frame["code"] == "not_a_player"


def test_a_stall_keeps_everything_unpublished_stops_the_clock_and_refuses_requests():
    bench = two_players(options=CLOCKED)
    _seat, sub, player = to_act(bench)
    bench.wait(5)
    bench.step(Act(sub, player, 1, {"type": "check"}, bench.m.turn_id), deliver=False)  # applied, not written
    held = list(bench.m.pending.records)
    assert isinstance(bench.m.clock, TurnClock)
    turn = bench.m.turn_id
    effects = bench.step(StoreFailed("redis: connection refused"), deliver=False)
    assert effects.notices == [STALLED] and effects.timer is CANCEL and bench.m.stalled
    assert isinstance(bench.m.clock, PausedClock) and bench.m.clock.remaining == 90.0
    assert bench.m.pending.records == held and bench.m.pending.replies  # nothing lost, nothing out
    _other, osub, oplayer = to_act(bench)
    effects = bench.step(Act(osub, oplayer, 2, {"type": "check"}, turn), deliver=False)
    assert [(r.sub, r.frame["code"], r.frame["re"]) for r in effects.immediate] == [(osub, "unavailable", 2)]
    assert effects.errors == ["unavailable"] and bench.m.turn_id == turn
    bench.step(ClockDue(turn, 0.0), deliver=False)  # the table's own timers wait
    assert bench.m.turn_id == turn
    again = bench.step(StoreFailed("still down"), deliver=False)
    assert again.notices == [] and again.timer is None
    bench.wait(600)
    assert bench.m.turn_public(bench.mono)["clock"] == 30.0  # the outage costs nobody time (G-3)
    bench.step(StoreBack(), deliver=False)
    assert bench.m.pending.needs_commit
    out = bench.m.take()  # written now
    assert out.records == held
    effects = bench.step(StoreWritten())
    assert effects.notices == [UNSTALLED] and not bench.m.stalled
    assert effects.timer == Timer(bench.mono + 90, ClockDue(turn, bench.mono + 90))


def test_while_stalled_disconnects_and_the_service_stop_are_taken_and_a_close_waits():
    bench = two_players(options=CLOCKED)
    bench.join("s", "sam")
    bench.step(StoreFailed("down"))
    seq = bench.m.seq
    effects = bench.step(Disconnect("b"), Close("operator"), ServiceStopping(), deliver=False)
    assert effects.members == {"b": False} and bench.m.presence(2) == 0 and bench.m.seq == seq + 1
    assert bench.m.service_stopping and bench.m.status == "running" and bench.m.deferred == [Close("operator")]
    bench.m.take()
    bench.step(StoreWritten())
    assert bench.m.status == "closed" and bench.records[-1].event.data == {"type": "closed", "reason": "operator"}


def test_a_checkpoint_the_store_refuses_breaks_the_table():
    bench = two_players()
    _seat, sub, player = to_act(bench)
    written = bench.m.seq
    bench.step(Act(sub, player, 1, {"type": "check"}, bench.m.turn_id), deliver=False)
    effects = bench.step(StoreRejected("cannot encode"), deliver=False)
    assert effects.notices == [BROKEN] and bench.m.status == "broken" and effects.timer is CANCEL
    # what was refused is dropped; the viewers are told (``broken`` after the last written event), the act answered
    pending = bench.m.pending
    assert [(r.seq, r.event.data) for r in pending.records] == [(written + 1, {"type": "broken"})]
    assert [(r.sub, r.frame["code"], r.frame["re"]) for r in pending.replies] == [(sub, "table_broken", 1)]
    bench.deliver()
    assert bench.step(Act(sub, player, 2, {"type": "check"})) and bench.replies[-1][1]["code"] == "table_broken"


def test_memberships_follow_joins_leaves_and_disconnects():
    bench = two_players()
    assert bench.step(Join("s", "sam", "sam", 1)).members == {"s": True}
    assert bench.step(Join("x", "xi", "xi", 2, role="judge")).members == {"x": False}
    assert bench.step(Act("s", "sam", 3, {"type": "check"})).members == {"s": True}
    assert bench.step(Disconnect("s")).members == {"s": False}
    sub, player = SEATS[1]
    assert bench.step(Leave(sub, player, 4)).members == {sub: False}
    assert set(bench.m.subscribers) == {"b"}
