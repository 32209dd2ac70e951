"""A table's lifecycle on the machine: provable randomness (G-2), rematch
(G-7), pause and resume (G-8), starting and closing (G-9), fault containment."""

from __future__ import annotations

import hashlib

import pytest

from cardhall.engine.registry import engine_class
from cardhall.engine.rng import FairRandom
from cardhall.server.table.clock import PausedClock
from cardhall.server.table.inputs import ClockDue, Close, RematchDue, Start
from cardhall.server.table.outputs import BROKEN, CANCEL, Timer
from tests.server.table.harness import Bench, code, play_out, to_act, two_players


def sha(seed: bytes) -> str:
    return hashlib.sha256(seed).hexdigest()


def test_commitment_before_seating_client_seeds_in_seat_order_reveal_and_next_commitment_G2():
    bench = Bench(seats=2, options={"points_to_win": 1})
    server_seed = bench.seeds.drawn[0]
    assert bench.m.info()["commitment"] == sha(server_seed) and not bench.m.seats  # before anyone sits
    bench.join("b", "bob", role="player", seat=2, seed="bob's seed")
    bench.join("a", "ann", role="player", seat=1, seed="ann's seed")
    started = bench.last("match_started")
    assert started.event.data["commitment"] == sha(server_seed)
    assert started.event.data["client_seeds"] == {"1": "ann's seed", "2": "bob's seed"}
    # every random choice comes from the server seed and the client seeds in seat order
    replay = engine_class("loco_poker").new([1, 2], {"points_to_win": 1}, FairRandom(server_seed, [b"ann's seed", b"bob's seed"]))
    dealt = replay.start()
    assert [r.event for r in bench.records[started.seq:started.seq + len(dealt)]] == dealt
    play_out(bench)
    ended = bench.last("match_ended")
    assert ended.event.data["server_seed"] == server_seed.hex() and ended.event.data["commitment"] == sha(server_seed)
    assert ended.event.data["client_seeds"] == {"1": "ann's seed", "2": "bob's seed"}
    next_seed = bench.seeds.drawn[1]
    assert ended.event.data["next_commitment"] == sha(next_seed) == bench.m.info()["commitment"]
    for rec in bench.records[:-1]:  # the seed is revealed only when the match ends
        assert server_seed.hex() not in repr(rec.event)
    assert bench.m.status == "finished" and bench.m.last_result == ended.event.data["result"]


def test_a_client_seed_can_change_between_matches_only_G2():
    bench = Bench(seats=3)
    bench.join("a", "ann", role="player", seed="first")
    bench.join("a", "ann", role="player", seed="second")
    assert bench.m.seats[1].seed == "second"
    assert code(bench.join("a", "ann", role="player", seed="s" * 65)) == "bad_request"


@pytest.mark.parametrize("game, seats", [("loco_poker", 2), ("loco_poker", 3), ("no_limit_holdem", 3)])
def test_rematch_same_seats_next_button_or_dealer_G7(game, seats):
    options = {"points_to_win": 1} if game == "loco_poker" else {"starting_stacks": 40, "blind_levels": None}
    bench = Bench(game, seats=seats, bots=["random"] * (seats - 2), options=options, owner="ann")
    bench.join("a", "ann", role="player", seat=1)
    bench.join("b", "bob", role="player", seat=2)
    dealers = []
    for match in (1, 2, 3):
        assert bench.m.match == match and bench.m.status == "running"
        dealers.append(bench.m.first_dealer)
        play_out(bench)
        ended = bench.last("match_ended").event.data
        bench.records.clear()
        assert code(bench.act("b", "bob", {"type": "rematch"})) == "ok"  # a seated player may ask
        assert bench.records[0].event.data == {"type": "rematch", "match": match + 1,
                                               "commitment": ended["next_commitment"]}
        started = bench.last("match_started").event.data
        assert [(s["seat"], s.get("player"), s.get("bot")) for s in started["seats"]] == [
            (s, o.player, o.bot) for s, o in sorted(bench.m.seats.items())]
        key = "button" if "button" in started["options"] else "dealer"
        assert started["options"][key] == bench.m.first_dealer
    dealers.append(bench.m.first_dealer)
    for before, after in zip(dealers, dealers[1:]):  # the seat after the previous match's first
        assert after == before % seats + 1, dealers


def test_rematch_needs_a_finished_match_and_a_seated_player_or_the_owner_G7():
    bench = two_players(options={"points_to_win": 1})
    assert code(bench.act("a", "ann", {"type": "rematch"})) == "bad_state"
    play_out(bench)
    bench.join("s", "sam")
    assert code(bench.act("s", "sam", {"type": "rematch"})) == "not_owner"
    assert bench.timer is None  # a person is seated: no automatic rematch


def test_auto_rematch_of_a_bots_only_table_after_the_pause_G7():
    bench = Bench(seats=3, bots=["random"] * 3, options={"auto_rematch": True, "pause": 2, "points_to_win": 1})
    bench.step(Start())
    bench.run(until="match_ended")
    assert bench.records[-1].event.type == "match_ended"
    assert bench.timer == Timer(bench.mono + 2, RematchDue(1, bench.mono + 2))
    first = bench.m.first_dealer
    assert first is not None
    bench.step(RematchDue(0, bench.mono))  # armed for another match: stale
    assert bench.m.status == "finished"
    bench.fire()
    assert bench.m.match == 2 and bench.m.status == "running" and bench.m.first_dealer == first % 3 + 1
    plain = Bench(seats=2, bots=["random"] * 2, options={"points_to_win": 1})
    plain.step(Start())
    plain.run(until="match_ended")
    assert plain.timer is None and plain.m.status == "finished"  # no auto_rematch: it waits


def test_owner_pause_stops_the_clock_and_resume_restarts_it_with_the_time_left_G8():
    bench = Bench(seats=2, options={"action_clock": 30, "time_bank": 60}, owner="ann")
    bench.join("a", "ann", role="player", seat=1)
    bench.join("b", "bob", role="player", seat=2)
    seat, sub, player = to_act(bench)
    turn = bench.m.turn_id
    deadline = bench.timer.at
    bench.wait(10)
    assert code(bench.act("b", "bob", {"type": "pause"})) == "not_owner"
    assert code(bench.act("a", "ann", {"type": "resume"})) == "bad_state"
    assert code(bench.act("a", "ann", {"type": "pause"})) == "ok"
    assert bench.effects.timer is CANCEL and bench.timer is None
    assert bench.m.paused and bench.m.clock == PausedClock(20.0, 60.0) and bench.last("paused")
    assert bench.m.lobby_entry()["status"] == "paused" and bench.m.info()["paused"]
    bench.wait(500)  # a paused clock does not run
    assert code(bench.act(sub, player, {"type": "check"}, turn=turn)) == "paused"
    assert code(bench.act("a", "ann", {"type": "pause"})) == "paused"
    seq = bench.m.seq
    bench.step(ClockDue(turn, deadline))  # the old deadline: stale
    assert bench.m.seq == seq and bench.m.turn_id == turn
    assert code(bench.act("a", "ann", {"type": "resume"})) == "ok"
    resumed = bench.last("resumed")
    assert resumed.turn == {"seat": seat, "id": turn, "clock": 20.0, "bank": 60.0}
    assert resumed.legal_seat == seat and resumed.legal == bench.m.turn_legal
    assert bench.timer == Timer(bench.mono + 80, ClockDue(turn, bench.mono + 80))
    assert code(bench.act(sub, player, {"type": "check"}, turn=turn)) == "ok"


def test_a_pause_between_turns_holds_the_dealer_step_and_resume_takes_it_G8():
    bench = Bench(seats=2, options={"pause": 1}, owner="ann")
    bench.join("a", "ann", role="player", seat=1)
    bench.join("b", "bob", role="player", seat=2)
    for _ in range(2):
        _seat, sub, player = to_act(bench)
        bench.act(sub, player, {"type": "check"}, turn=bench.m.turn_id)
    assert bench.m.step_id is not None and bench.timer is not None
    bench.act("a", "ann", {"type": "pause"})
    assert bench.timer is None
    bench.act("a", "ann", {"type": "resume"})
    assert bench.timer is not None and bench.timer.at == bench.mono + 1
    bench.fire()
    assert bench.m.turn_kind == "human"


def test_the_owner_starts_with_at_least_two_seated_G9():
    bench = Bench(seats=3, owner="ann")
    bench.join("a", "ann", role="player")
    assert code(bench.act("a", "ann", {"type": "start"})) == "bad_state"  # one player
    bench.join("b", "bob", role="player")
    assert code(bench.act("b", "bob", {"type": "start"})) == "not_owner"
    assert code(bench.act("a", "ann", {"type": "start"})) == "ok"
    assert bench.m.status == "running"
    assert [s["seat"] for s in bench.last("match_started").event.data["seats"]] == [1, 2]
    assert code(bench.act("a", "ann", {"type": "start"})) == "bad_state"


def test_a_table_starts_when_every_seat_is_taken_G9():
    waiting = Bench(seats=3, bots=["random"])
    waiting.step(Start())
    assert waiting.m.status == "waiting" and not waiting.records
    full = Bench(seats=2, bots=["random", "random"])
    assert full.m.status == "waiting" and full.out.dirty  # created: its state is to be written
    full.step(Start())
    assert full.m.status == "running" and full.types()[:2] == ["match_started", "match_start"]


def test_close_and_the_idle_rule_G9():
    bench = Bench(seats=2, bots=["random", "random"], options={"points_to_win": 1, "close_after": 60})
    bench.step(Start())
    bench.run(until="match_ended")
    assert not bench.m.should_close(bench.mono)
    bench.join("s", "sam")
    bench.wait(61)
    assert not bench.m.should_close(bench.mono)  # someone watches
    bench.disconnect("s")
    assert not bench.m.should_close(bench.mono)
    bench.wait(60)
    assert bench.m.should_close(bench.mono)
    bench.step(Close("idle"))
    assert bench.records[-1].event.data == {"type": "closed", "reason": "idle"} and bench.m.status == "closed"
    assert bench.effects.timer is CANCEL
    assert code(bench.join("t", "tom")) == "table_closed"


def test_an_engine_fault_breaks_the_table_and_drops_the_inputs_partial_events():
    bench = two_players()
    _seat, sub, player = to_act(bench)
    seq = bench.m.seq

    def boom():
        raise RuntimeError("engine bug")

    bench.m.engine.legal_actions = boom  # the action applies, then the next turn fails
    reply = bench.act(sub, player, {"type": "check"}, turn=bench.m.turn_id)
    assert code(reply) == "table_broken"
    assert [(r.seq, r.event.data) for r in bench.records if r.seq > seq] == [(seq + 1, {"type": "broken"})]
    assert bench.m.status == "broken" and bench.effects.notices == [BROKEN] and bench.timer is None
    assert [f["type"] for _, f in bench.replies[-1:]] == ["error"]
    assert code(bench.act(sub, player, {"type": "check"})) == "table_broken"
    bench.step(ClockDue(bench.m.turn_id or 0, 0.0))
    assert bench.m.seq == seq + 1
