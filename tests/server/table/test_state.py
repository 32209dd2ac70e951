"""A table as plain data: ``to_data``/``from_data`` round trips (mid-turn too),
the stored format's version, and a restored table that plays on exactly as
the original (the machine is deterministic given its inputs and entropy)."""

from __future__ import annotations

import pytest

from cardhall.server.store.format import FORMAT_VERSION, pack_state, unpack_state
from cardhall.server.table.clock import PausedClock
from cardhall.server.table.inputs import ClockDue, Now, Rearm, Start, StepDue
from cardhall.server.table.machine import TableMachine
from cardhall.server.table.outputs import Timer
from tests.server.table.harness import Bench, Seeds, code, play_out, to_act, two_players


def _table(data: dict) -> dict:
    """A stored state without its replay context (the subscribers and time it
    was taken at: what a replay of a log after it needs, not the table)."""
    return {k: v for k, v in data.items() if k != "replay"}


def _restore(data: dict, mono: float, entropy: Seeds | None = None) -> TableMachine:
    return TableMachine.from_data(unpack_state(pack_state(data)), Now(1e9 + mono, mono), entropy=entropy or Seeds())


def test_round_trip_mid_turn_keeps_the_time_left_G3():
    bench = two_players(options={"action_clock": 30, "time_bank": 60})
    seat, _sub, _player = to_act(bench)
    turn = bench.m.turn_id
    bench.wait(40)  # 10 s into the bank
    data = bench.m.to_data(bench.mono)
    assert data["v"] == FORMAT_VERSION == 3
    assert data["turn"] == {"id": turn, "seat": seat, "kind": "human", "clock": 0.0, "bank": 50.0}
    copy = _restore(data, 5000.0)
    assert copy.clock == PausedClock(0.0, 50.0)
    assert _table(copy.to_data(9999.0)) == _table(data)  # paused: the same at any time
    assert copy.engine.view(seat) == bench.m.engine.view(seat) and copy.turn_legal == bench.m.turn_legal
    assert copy.info() == bench.m.info() | {"occupants": [o | {"connected": False} for o in bench.m.info()["occupants"]]}
    effects = copy.handle(Rearm(), Now(1e9, 5000.0))
    assert effects.timer == Timer(5050.0, ClockDue(turn, 5050.0))  # the time that was left, not a fresh clock
    assert copy.turn_public(5010.0) == {"seat": seat, "id": turn, "clock": 0.0, "bank": 40.0}


@pytest.mark.parametrize("where", ["waiting", "paused", "step", "finished", "solo"])
def test_round_trip_in_every_state(where):
    if where == "waiting":
        bench = Bench(seats=3)
        bench.join("a", "ann", role="player", seed="x")
    elif where == "paused":
        bench = Bench(seats=2, owner="ann")
        bench.join("a", "ann", role="player", seat=1)
        bench.join("b", "bob", role="player", seat=2)
        bench.act("a", "ann", {"type": "pause"})
    elif where == "step":
        bench = two_players(options={"pause": 3})
        for _ in range(2):
            _seat, sub, player = to_act(bench)
            bench.act(sub, player, {"type": "check"}, turn=bench.m.turn_id)
        assert bench.m.step_id is not None
    elif where == "finished":
        bench = two_players(options={"points_to_win": 1})
        play_out(bench)
    else:
        bench = Bench(seats=3, bots=["random", "random"])
        bench.join("a", "ann", role="player", seat=1)
        play_out(bench, stop=lambda m: m.turn_kind == "continue")
    data = bench.m.to_data(bench.mono)
    copy = _restore(data, bench.mono)
    assert _table(copy.to_data(bench.mono)) == _table(data)
    assert copy.status == bench.m.status
    assert {s: o.to_data() for s, o in copy.seats.items()} == {s: o.to_data() for s, o in bench.m.seats.items()}
    effects = copy.handle(Rearm(), Now(1e9, 100.0))
    if where == "step":  # the pending dealer step is scheduled again
        assert isinstance(effects.timer, Timer) and isinstance(effects.timer.due, StepDue)
        assert effects.timer.at == 103.0
    elif where in ("waiting", "paused", "finished"):
        assert effects.timer is None


def test_a_state_of_another_version_is_refused():
    data = two_players().m.to_data(0.0)
    with pytest.raises(ValueError, match="version"):
        TableMachine.from_data({**data, "v": 1}, Now(0.0, 0.0))


def test_a_restored_table_plays_on_exactly_as_the_original():
    bench = Bench("no_limit_holdem", seats=4, bots=["random"] * 4, options={"auto_rematch": True, "bot_think": 1})
    bench.step(Start())
    for _ in range(60):
        bench.fire()
    entropy = Seeds()
    entropy.drawn = list(bench.seeds.drawn)  # the next server seeds are the same ones
    copy = _restore(bench.m.to_data(bench.mono), bench.mono, entropy)
    for _ in range(200):  # the same inputs at the same times: the same events and states
        due = bench.timer.due
        now = Now(bench.wall + max(bench.mono, bench.timer.at), max(bench.mono, bench.timer.at))
        bench.fire()
        effects = copy.handle(due, now)
        out = copy.take()
        assert [(r.seq, r.event, r.ts, r.turn) for r in out.records] == [
            (r.seq, r.event, r.ts, r.turn) for r in bench.out.records]
        assert effects.timer == bench.effects.timer
    assert copy.to_data(bench.mono) == bench.m.to_data(bench.mono)


def test_the_same_inputs_and_entropy_make_the_same_table():
    def play() -> Bench:
        bench = Bench(seats=3, bots=["random", "random"], options={"points_to_win": 1})
        bench.join("a", "ann", role="player", seat=1, seed="s")
        play_out(bench)
        assert code(bench.act("a", "ann", {"type": "rematch"})) == "ok"
        play_out(bench, stop=lambda m: m.match == 2 and m.status == "finished")
        return bench

    one, two = play(), play()
    assert [(r.seq, r.event, r.ts, r.turn, r.legal) for r in one.records] == [
        (r.seq, r.event, r.ts, r.turn, r.legal) for r in two.records]
    assert one.m.to_data(one.mono) == two.m.to_data(two.mono)
