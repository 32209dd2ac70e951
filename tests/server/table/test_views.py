"""What a table shows: snapshots through ``Engine.view`` with legal actions for
the seat to act only, the open turn, info and lobby entries; the doctests of
the machine's small modules."""

from __future__ import annotations

import doctest

import pytest

import cardhall.server.table.bots
import cardhall.server.table.records
import cardhall.server.table.subscribers
from cardhall.engine.base import Event
from cardhall.engine.rng import commitment
from cardhall.server.table.records import EventRecord, legal_for, record_from_data
from tests.server.table.harness import Bench, to_act, two_players


@pytest.mark.parametrize("module", [cardhall.server.table.bots, cardhall.server.table.records,
                                    cardhall.server.table.subscribers])
def test_doctests(module):
    assert doctest.testmod(module).failed == 0


def test_a_snapshot_is_the_engine_view_and_only_the_seat_to_act_gets_legal_actions():
    bench = two_players(options={"action_clock": 30, "time_bank": 60})
    seat, _, _ = to_act(bench)
    bench.wait(12)
    for viewer in (None, 1, 2):
        snap = bench.m.snapshot(viewer, "r1", bench.mono)
        assert snap["type"] == "snapshot" and snap["table"] == "t_test" and snap["seq"] == bench.m.seq
        assert snap["you"] == viewer and snap["re"] == "r1"
        assert snap["state"] == bench.m.engine.view(viewer)
        assert snap["turn"] == {"seat": seat, "id": bench.m.turn_id, "clock": 18.0, "bank": 60.0}
        assert ("legal" in snap) == (viewer == seat)
        if viewer == seat:
            assert snap["legal"] == bench.m.turn_legal
    assert bench.m.snapshot(None, None, bench.mono)["re"] is None  # the answer to a join without an id
    assert "re" not in bench.m.snapshot(None, None, bench.mono, reply=False)  # a snapshot sent on its own


def test_the_legal_gate_and_stored_records():
    legal = [{"type": "check"}]
    assert legal_for(2, 2, legal) is legal and legal_for(1, 2, legal) is None and legal_for(None, None, legal) is None
    stored = {"data": {"type": "awaiting"}, "ts": 5.0, "turn": {"seat": 2, "id": 9}}
    past = record_from_data(9, stored)
    assert (past.legal_seat, past.legal, past.ts) == (2, None, 5.0)  # a past turn's legal actions are not kept
    current = record_from_data(9, stored, current_turn=9, current_seat=2, current_legal=legal)
    assert current.legal == legal and current.event == Event({"type": "awaiting"})
    resumed = {"data": {"type": "resumed"}, "ts": 6.0, "turn": {"seat": 2, "id": 9, "clock": 12.5, "bank": 60.0}}
    again = record_from_data(12, resumed, current_turn=9, current_seat=2, current_legal=legal)
    assert (again.legal_seat, again.legal) == (2, legal)  # it carries the open turn again (G-8)
    assert record_from_data(12, resumed, current_turn=11, current_seat=1, current_legal=legal).legal is None
    wait = record_from_data(3, {"data": {"type": "awaiting"}, "ts": 1.0, "turn": {"seat": 1, "id": 3, "continue": True}})
    assert wait.legal_seat is None
    assert isinstance(past, EventRecord)


def test_info_and_lobby_entry():
    bench = Bench(seats=3, bots=["random"], options={"points_to_win": 2})
    bench.join("a", "ann", role="player")
    info = bench.m.info()
    assert info["commitment"] == commitment(bench.seeds.drawn[0]) and info["match"] == 1 and not info["paused"]
    assert [(o["seat"], o["connected"], o.get("player"), o.get("bot")) for o in info["occupants"]] == [
        (1, True, "ann", None), (3, True, None, "random")]
    entry = bench.m.lobby_entry()
    assert entry == {**{k: info[k] for k in ("id", "game", "seats", "taken", "spectators", "status", "owner", "options",
                                             "password")}, "bots": 1}
    assert "password" not in entry["options"] and entry["password"] is False
    assert entry["taken"] == 2 and entry["status"] == "waiting" and entry["options"]["points_to_win"] == 2
    assert bench.m.turn_public(bench.mono) is None
