"""A table nobody attends does not spin (SPEC "Clocks and pacing"): once no
person holding a seat is in play (sitting out, disconnected, or bots only),
every timer the table arms for its own next move (a sitting-out seat's
timeout action, a dealer step, a bot's think, an automatic rematch) is at
least the unattended floor ahead, in every game, even with ``pause`` and
``bot_think`` 0; the table is never suspended and its people keep their seats
(G-5). With a person in play the table keeps its own pace."""

from __future__ import annotations

import pytest

from cardhall.server.table.inputs import Start
from tests.games import GAMES
from tests.server.table.harness import Bench, code, two_players

FLOOR = 0.5


def armed_delay(bench: Bench) -> float:
    assert bench.timer is not None, "an unattended running table arms its next move"
    return bench.timer.at - bench.mono


@pytest.mark.parametrize("game", GAMES)
def test_two_people_sat_out_and_gone_every_timer_waits_the_floor(game):
    bench = two_players(game)
    bench.m.unattended_think = FLOOR
    for sub, player in (("a", "ann"), ("b", "bob")):
        assert code(bench.act(sub, player, {"type": "sit_out"})) == "ok"
    bench.disconnect("a")
    bench.disconnect("b")
    bench.fire()  # the timer armed while bob was still in play
    delays, before = [], bench.m.seq
    for _ in range(60):
        if bench.m.status != "running":
            break
        delays.append(armed_delay(bench))
        bench.fire()
    assert bench.m.seq > before, "the table plays on by itself (it is not suspended)"
    assert delays and min(delays) >= FLOOR, delays
    assert {o.player for o in bench.m.seats.values()} == {"ann", "bob"}  # G-5: the seats are kept


@pytest.mark.parametrize("game", GAMES)
def test_a_person_in_play_keeps_the_tables_pace(game):
    bench = two_players(game)
    bench.m.unattended_think = FLOOR
    assert code(bench.act("b", "bob", {"type": "sit_out"})) == "ok"
    bench.disconnect("b")
    delays = []
    for _ in range(40):
        m = bench.m
        if m.status != "running":
            break
        if m.turn_kind == "human" and m.turn_seat == 1:
            action = m.engine.timeout_action(1)  # a legal action of any game
            assert code(bench.act("a", "ann", action, turn=m.turn_id)) == "ok"
            continue
        if bench.timer is None:
            break
        if type(bench.timer.due).__name__ != "ClockDue":
            delays.append(armed_delay(bench))
        bench.fire()
    assert delays and max(delays) < FLOOR, delays  # ann is in play: bob's turns and the steps go at once


def test_a_bots_only_table_waits_the_floor_between_its_moves():
    bench = Bench("no_limit_holdem", seats=3, bots=["random", "random", "random"], options={"auto_rematch": True})
    bench.m.unattended_think = FLOOR
    bench.step(Start())
    delays = []
    for _ in range(80):
        if bench.timer is None:
            break
        delays.append(armed_delay(bench))
        bench.fire()
    assert len(delays) == 80 and min(delays) >= FLOOR * 0.5, delays  # bots think 0.5x..1.5x their mean
