"""The solo player's ``continue`` (G-4) and presence (G-5) on the machine: a
table never waits for the ``continue`` of a player it shows disconnected
(``connected: false``), whatever the path to that: a disconnect of the last
subscriber (a local int key or a remote ``node/123`` one), a disconnect while
the table is paused (G-8) or stalled (its store down), a disconnect in the
step that opens the turn, a connection that goes on watching as a spectator,
and a table restored from its checkpoint (a restart, or a cluster moving it
to another node: its subscribers are gone until they join again). And the
converse: a player whose connection is back (a ``join`` with ``since``, the
cluster's own :data:`~cardhall.server.table.inputs.REJOIN`) is shown
connected and waited for again from the next step."""

from __future__ import annotations

import copy
import random
from collections.abc import Hashable
from typing import Any

import pytest

from cardhall.server.table.inputs import (
    REJOIN,
    Act,
    Disconnect,
    Input,
    Join,
    Leave,
    Rearm,
    ServiceStopping,
    Start,
    StepDue,
    StoreBack,
    StoreFailed,
    StoreWritten,
)
from cardhall.server.table.machine import TableMachine
from cardhall.server.table.outputs import CANCEL
from cardhall.server.table.subscribers import RemoteSub
from tests.server.table.harness import Bench, code

Data = dict[str, Any]

#: a subscriber of another node (the cluster's key for a remote connection)
REMOTE = RemoteSub("n2", 123)


def connected(m: TableMachine, seat: int = 1) -> bool:
    """What ``info()`` shows of ``seat``'s presence."""
    return next(o["connected"] for o in m.info()["occupants"] if o["seat"] == seat)


def waits_for_absent(m: TableMachine) -> bool:
    """The table waits for a ``continue`` its player cannot press (G-4):
    disconnected as ``info()`` shows it, sitting out, or out of the match."""
    if m.turn_kind != "continue":
        return False
    seat = m.turn_seat
    occ = next(o for o in m.info()["occupants"] if o["seat"] == seat)
    return not occ["connected"] or occ["sitting_out"] or not m.engine.in_match(seat)


def solo(key: Hashable = "a", options: Data | None = None) -> Bench:
    """ann (subscriber ``key``) alone with two bots in seat 1, the table
    waiting for her ``continue``."""
    bench = Bench(seats=3, bots=["random", "random"], options={"points_to_win": 3, **(options or {})})
    bench.join(key, "ann", role="player", seat=1)
    for _ in range(500):
        if bench.m.turn_kind == "continue":
            assert connected(bench.m) and bench.timer is None
            return bench
        if bench.m.turn_kind == "human":
            bench.act(key, "ann", {"type": "fold"}, turn=bench.m.turn_id)
        else:
            bench.fire()
    raise AssertionError("the solo table never waited for continue")


def next_input(bench: Bench, key: Hashable) -> Input:
    """What drives the solo table on: ann folds on her turn, else the armed timer fires."""
    if bench.m.turn_kind == "human":
        return Act(key, "ann", "f", {"type": "fold"}, bench.m.turn_id)
    assert bench.timer is not None
    bench.mono = max(bench.mono, bench.timer.at)
    return bench.timer.due


def rejoin(bench: Bench, key: Hashable, since: int | None) -> Any:
    """The cluster's own join for ann's connection ``key`` (:data:`REJOIN`,
    ``since`` the last seq it holds): its join answer."""
    joins = len(bench.joins)
    bench.step(Join(key, "ann", "ann", REJOIN, "player", None, None, since))
    assert len(bench.joins) == joins + 1, bench.replies[-1:]
    return bench.joins[-1]


def goes_on_without(bench: Bench) -> None:
    """The table does not wait for ann: it plays the match out by itself
    (bots, her turns on the clock, the steps at the table's pause)."""
    assert bench.m.turn_kind != "continue"
    assert bench.timer is not None, "nothing armed: the table waits for someone"
    bench.run(until="match_ended", limit=20_000, clocks=True)
    assert bench.m.status == "finished"


def restore(bench: Bench) -> None:
    """The table as another process (a restart, or a cluster's other node)
    gets it from its checkpoint: no subscriber, then ``Start`` and ``Rearm``
    (``TableActor.start(restored=True)``)."""
    data = bench.m.to_data(bench.mono)
    bench.m = TableMachine.from_data(data, bench.now(), entropy=bench.seeds)
    bench.timer = None
    bench.step(Start(), Rearm())


# -- a disconnect while the table waits --------------------------------------------------
@pytest.mark.parametrize("key", [7, REMOTE], ids=["local", "remote"])
@pytest.mark.parametrize("pause", [0, 1.5])
def test_the_last_subscriber_gone_ends_the_wait_G4_G5(key, pause):
    bench = solo(key, {"pause": pause})
    seq = bench.m.seq
    bench.step(Disconnect(key))
    assert bench.records[seq].event.data == {"type": "presence", "seat": 1, "connected": False}
    assert not connected(bench.m) and not waits_for_absent(bench.m)
    if pause:  # the step waits for the table's pause (G-4), as for a table with no solo player
        assert bench.timer is not None and bench.timer.due == StepDue(bench.m.step_id, bench.mono + pause)
    goes_on_without(bench)


def test_a_player_on_two_nodes_is_waited_for_until_the_last_connection_goes_G4():
    bench = solo(7)
    turn = bench.m.turn_id
    bench.join(REMOTE, "ann", role="player", since=bench.m.seq)
    bench.step(Disconnect(7))
    assert connected(bench.m) and bench.m.turn_kind == "continue" and bench.m.turn_id == turn
    bench.step(Disconnect(REMOTE))  # the cluster's prune: that node left the registry
    assert not connected(bench.m) and not waits_for_absent(bench.m)
    goes_on_without(bench)


def test_a_connection_that_goes_on_watching_as_a_spectator_is_not_waited_for_G4_G5():
    """The same connection joins again without ``role`` (a spectator): it no
    longer watches as the seat, so the seat has nobody connected: a
    ``presence`` event, and no wait for a player the table shows disconnected."""
    bench = solo(REMOTE)
    seq = bench.m.seq
    answer = bench.join(REMOTE, "ann")
    assert code(answer) == "join" and answer.viewer is None
    assert bench.records[seq].event.data == {"type": "presence", "seat": 1, "connected": False}
    assert bench.m.presence(1) == 0 and not connected(bench.m) and not waits_for_absent(bench.m)
    goes_on_without(bench)


def test_a_disconnect_while_the_owner_paused_the_table_ends_the_wait_G4_G8():
    bench = solo()
    bench.join("o", "p_owner")  # the owner watches (G-8)
    assert code(bench.act("o", "p_owner", {"type": "pause"})) == "ok"
    bench.step(Disconnect("a"))
    assert not connected(bench.m) and not waits_for_absent(bench.m) and bench.timer is None  # paused: nothing runs
    assert code(bench.act("o", "p_owner", {"type": "resume"})) == "ok"
    assert not waits_for_absent(bench.m)
    goes_on_without(bench)


@pytest.mark.parametrize("pause", [0, 1.5])
def test_a_disconnect_while_stalled_ends_the_wait_and_the_step_waits_for_the_store(pause):
    bench = solo(REMOTE, {"pause": pause})
    bench.step(StoreFailed("redis: connection refused"), deliver=False)
    seq = bench.m.seq
    effects = bench.step(Disconnect(REMOTE), deliver=False)  # taken while stalled
    assert [r.event.data for r in bench.m.pending.records if r.seq > seq] == [
        {"type": "presence", "seat": 1, "connected": False}]  # no dealer step while stalled
    assert not connected(bench.m) and not waits_for_absent(bench.m)
    assert effects.timer is None and bench.m.clock is None  # no timer, no clock while stalled
    bench.step(StoreBack(), deliver=False)
    bench.deliver()  # written
    bench.step(StoreWritten())
    assert not bench.m.stalled and not waits_for_absent(bench.m) and bench.timer is not None
    goes_on_without(bench)


# -- a disconnect in the step that opens the wait ------------------------------------------
def test_a_disconnect_in_the_step_that_opens_the_wait_G4():
    """Inputs that open the ``continue`` turn and a disconnect in one step,
    in either order: the table never waits for the player who is gone."""
    bench = Bench(seats=3, bots=["random", "random"], options={"points_to_win": 3, "pause": 1})
    bench.join("a", "ann", role="player", seat=1)
    for _ in range(2000):
        if bench.m.turn_kind == "continue":  # opened by ann's own act: on to one a timer opens
            assert code(bench.act("a", "ann", {"type": "continue"}, turn=bench.m.turn_id)) == "ok"
            continue
        inp = next_input(bench, "a")
        trial = copy.deepcopy(bench.m)
        trial.step([inp], bench.now())
        if trial.turn_kind == "continue" and not isinstance(inp, Act):
            break
        bench.step(inp)
    else:
        raise AssertionError("no timer of the solo table opened a wait for continue")
    after, before = copy.deepcopy(bench), bench
    after.step(inp, Disconnect("a"))  # the wait opens, then its player goes
    before.step(Disconnect("a"), inp)  # the player goes, then the step that would wait
    for b in (after, before):
        assert not connected(b.m) and not waits_for_absent(b.m)
        assert b.timer is not None
    goes_on_without(after)


# -- a table restored from its checkpoint ----------------------------------------------------
def test_a_restored_table_does_not_wait_for_a_player_not_back_G4():
    """The checkpoint holds the open ``continue`` turn; the table restored from
    it (a restart, or another node after this one died) has no subscriber, so
    it shows its player disconnected: it goes on at its pace (G-4, G-5)."""
    bench = solo(REMOTE, {"pause": 1.5})
    turn = bench.m.turn_id
    restore(bench)
    assert not connected(bench.m) and bench.m.turn_id != turn and not waits_for_absent(bench.m)
    assert bench.timer is not None and isinstance(bench.timer.due, StepDue)
    goes_on_without(bench)


def test_a_restored_table_waits_again_once_its_player_is_back_within_the_pause_G4():
    """The cluster rejoins the player's connection (REJOIN, ``since``) before
    the dealer step's pause is over: that step waits for their ``continue``."""
    bench = solo(REMOTE, {"pause": 1.5})
    restore(bench)
    seq = bench.m.seq
    bench.wait(1)
    answer = rejoin(bench, REMOTE, seq)
    assert answer.since == seq and answer.viewer == 1
    assert connected(bench.m) and bench.m.turn_kind == "continue" and bench.timer is None
    assert [r.event.type for r in bench.records if r.seq > seq] == ["presence", "awaiting"]
    assert bench.records[-2].turn is None  # presence carries no turn (SPEC "Chat")
    turn = bench.m.turn_id
    assert bench.records[-1].turn == {"seat": 1, "id": turn, "continue": True}
    assert code(bench.act(REMOTE, "ann", {"type": "continue"}, turn=turn)) == "ok"
    assert bench.m.turn_id != turn


def test_a_restored_table_waits_while_its_player_is_back_and_while_the_service_stops():
    """Restored with its player back in the same step (nothing was missed),
    the wait stays; and the service's own disconnects while it stops keep it
    too (the exception of G-4's implementation: its clients come back)."""
    bench = solo("a")
    turn = bench.m.turn_id
    data = bench.m.to_data(bench.mono)
    bench.m = TableMachine.from_data(data, bench.now(), entropy=bench.seeds)
    bench.step(Join(REMOTE, "ann", "ann", REJOIN, "player", None, None, bench.m.seq), Start(), Rearm())
    assert bench.m.turn_kind == "continue" and bench.m.turn_id == turn and connected(bench.m)
    bench.step(ServiceStopping(), Disconnect(REMOTE))
    assert bench.m.turn_kind == "continue" and bench.m.turn_id == turn


# -- back again ---------------------------------------------------------------------------------
@pytest.mark.parametrize("key", [7, REMOTE], ids=["local", "remote"])
def test_a_player_back_after_the_step_is_shown_connected_and_waited_for_from_the_next_G4(key):
    bench = solo(key, {"pause": 1.5})
    bench.step(Disconnect(key))
    bench.fire()  # the step is taken without ann
    assert not waits_for_absent(bench.m)
    seq = bench.m.seq
    rejoin(bench, key, seq)
    assert bench.records[-1].event.data == {"type": "presence", "seat": 1, "connected": True}
    assert connected(bench.m) and bench.m.presence(1) == 1
    for _ in range(500):  # normal behaviour again: the next step waits for her continue
        if bench.m.turn_kind == "continue":
            break
        bench.step(next_input(bench, key))
    assert bench.m.turn_kind == "continue" and bench.m.turn_seat == 1 and connected(bench.m)
    assert bench.timer is None


def test_a_player_back_while_the_step_waits_for_its_pause_is_waited_for_G4():
    bench = solo(REMOTE, {"pause": 1.5})
    bench.step(Disconnect(REMOTE))
    step = bench.m.step_id
    assert step is not None and not waits_for_absent(bench.m)
    rejoin(bench, REMOTE, bench.m.seq)
    assert bench.m.turn_kind == "continue" and bench.m.step_id is None and bench.effects.timer is CANCEL
    bench.step(StepDue(step, bench.mono + 1.5))  # the old step's timer, if it fired anyway: stale
    assert bench.m.turn_kind == "continue"
    assert code(bench.act(REMOTE, "ann", {"type": "continue"}, turn=bench.m.turn_id)) == "ok"


def test_sitting_in_while_the_step_waits_for_its_pause_is_waited_for_G3_G4():
    bench = solo("a", {"pause": 1.5})
    assert code(bench.act("a", "ann", {"type": "sit_out"})) == "ok"
    assert not waits_for_absent(bench.m) and bench.m.step_id is not None
    assert code(bench.act("a", "ann", {"type": "sit_in"})) == "ok"
    assert bench.m.turn_kind == "continue" and bench.records[-1].event.type == "awaiting"


# -- every path at random -----------------------------------------------------------------------
KEYS = [7, 8, REMOTE, RemoteSub("n3", 9)]


def _random_input(bench: Bench, rng: random.Random) -> Input | None:
    m = bench.m
    subs = [k for k in KEYS if m.subscribers.viewer(k) == 1]
    roll = rng.random()
    if roll < 0.3 and (m.turn_kind == "human" and m.turn_seat == 1 or m.turn_kind == "continue") and subs:
        kind = "continue" if m.turn_kind == "continue" else rng.choice(["fold", "check", "call", "all_in"])
        return Act(rng.choice(subs), "ann", "r", {"type": kind}, m.turn_id if rng.random() < 0.8 else None)
    if roll < 0.45:
        return Join(rng.choice(KEYS), "ann", "ann", rng.choice([REJOIN, "j"]), "player", None, None,
                    rng.choice([None, m.seq]))
    if roll < 0.6:
        return Disconnect(rng.choice(KEYS))
    if roll < 0.64:
        return Join(rng.choice(KEYS), "ann", "ann", "j")  # goes on watching as a spectator
    if roll < 0.68 and subs:
        return Act(rng.choice(subs), "ann", "s", {"type": rng.choice(["sit_out", "sit_in"])})
    if roll < 0.72:
        return Act("o", "p_owner", "p", {"type": rng.choice(["pause", "resume"])})
    if roll < 0.73 and subs:
        return Leave(rng.choice(subs), "ann")
    if bench.timer is not None:
        bench.mono = max(bench.mono, bench.timer.at)
        return bench.timer.due
    return None


def _random_table(seed: int) -> int:
    """One solo table driven at random from ``seed`` (see below); returns how
    many steps left it waiting for ``continue``."""
    rng = random.Random(seed)
    bench = Bench(seats=3, bots=["random", "random"],
                  options={"points_to_win": 2, "pause": rng.choice([0, 1]), "action_clock": 5, "time_bank": 0})
    bench.join("o", "p_owner")
    bench.join(7, "ann", role="player", seat=1)
    waited = 0
    for _ in range(1500):
        if bench.m.status != "running":
            break
        roll = rng.random()
        if roll < 0.03 and not bench.m.stalled:
            restore(bench)
            bench.join("o", "p_owner")
        elif roll < 0.06 and not bench.m.stalled:
            bench.step(StoreFailed("down"), deliver=False)
        elif roll < 0.09 and bench.m.stalled:
            bench.step(StoreBack(), deliver=False)
            bench.deliver()
            bench.step(StoreWritten())
        else:
            inputs = [i for i in (_random_input(bench, rng) for _ in range(rng.choice([1, 1, 2, 3]))) if i is not None]
            if inputs:
                bench.step(*inputs, deliver=not bench.m.stalled)
        assert not waits_for_absent(bench.m), (seed, bench.m.turn_id, bench.m.info()["occupants"])
        waited += bench.m.turn_kind == "continue"
    return waited


def test_no_path_waits_for_a_player_shown_disconnected_G4():
    """Joins (int and remote keys, REJOIN with since, as a spectator),
    disconnects, sitting out and in, leaving, the owner's pause, stalls and
    restores at random, several inputs to a step: after every step, a table
    waiting for ``continue`` shows its player connected, seated in and in
    the match (G-4)."""
    waited = [_random_table(seed) for seed in range(16)]
    assert sum(1 for w in waited if w) >= 8, f"too few tables waited for continue to test anything: {waited}"
