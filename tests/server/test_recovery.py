"""Restarting the service on the same store, run
against both stores: a memory store kept across two servers in one process,
and Redis (a new ``RedisStore``, as a new process would have).

* Every unfinished table resumes where it was: full state equal to the stored
  checkpoint, the running clock with the time that was left, bots and the
  automatic rematch going on.
* Players keep their tokens (stored hashed); ``join`` with ``since`` gets the
  missed events from the store's stream (the in-memory buffer is empty after a
  restart), including the current turn's legal actions; the match is played
  to its end.
* Unreadable checkpoints (not msgpack, a newer format, a state the engine
  refuses) put that table in quarantine with a clear log line; every other
  table loads, ``/healthz`` and ``/metrics`` count them, and their data stays
  in the store.

The SIGKILL version of this, at random points in a real process, is
``test_recovery_kill.py``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import replace

import httpx
import pytest

from cardhall.clients.client import Client, ServerError
from cardhall.server.store.base import Store
from cardhall.server.store.format import FORMAT_VERSION, hand_digest, pack_state, unpack_state
from cardhall.server.store.memory import MemoryStore
from cardhall.server.store.redis import RedisStore
from cardhall.server.table.inputs import Now
from cardhall.server.table.machine import TableMachine
from tests.conftest import until
from tests.games import quick
from tests.server.conftest import TEST_SETTINGS, running_server
from tests.server.play import check_gap_free, event_frames, play, remember_seat

SETTINGS = replace(TEST_SETTINGS, event_buffer=256, store_retry=0.1, operator_key="ops")


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
def stores(request) -> Callable[[], Store]:
    """Makes the store of each server start: the same memory store, or a new
    Redis store on the same Redis."""
    if request.param == "memory":
        kept = MemoryStore(1024, keep_states=True)
        return lambda: kept
    redis_server = request.getfixturevalue("redis_server")
    return lambda: RedisStore(redis_server.url, prefix="rec", stream_bound=1024)


async def _stored_state(store: Store, table: str) -> dict:
    if isinstance(store, MemoryStore):
        state = store.state(table)
    else:
        assert isinstance(store, RedisStore)
        state = await store.state(table)
        await store.close()
    assert state is not None
    return state


def _without_clock(state: dict) -> dict:
    """``state`` without the turn's clock (time passes) and its replay context
    (the time it was taken at and who watched then: server/STORAGE.md)."""
    out = dict(state)
    out.pop("replay", None)
    if out.get("turn"):
        out["turn"] = {k: v for k, v in out["turn"].items() if k not in ("clock", "bank")}
    return out


async def _act_until(table, clients: dict[int, Client], acks: int) -> None:
    """The humans play ``acks`` actions (check or call, else the first legal action)."""
    for _ in range(acks):
        await until(lambda: table.machine.turn_id is not None and table.machine.turn_kind == "human", 30,
                    "a person's turn")
        seat, turn = table.machine.turn_seat, table.machine.turn_id
        legal = {a["type"]: a for a in table.machine.turn_legal}
        action = {"type": "check"} if "check" in legal else {"type": "call"} if "call" in legal else legal[next(iter(legal))]
        await clients[seat].act(table.id, {"type": action["type"], **({"amount": action["min"]} if "min" in action and action["type"] in ("bet", "raise") else {})}, turn=turn)


async def test_a_restart_resumes_tables_clocks_tokens_and_since(stores):
    async with running_server(SETTINGS, stores()) as srv:
        ann, bob = await srv.client("ann"), await srv.client("bob")
        table = await ann.create_table("no_limit_holdem", seats=2, options=quick(
            "no_limit_holdem", pause=0, action_clock=30, time_bank=60))
        await ann.join(table, role="player", seat=1, seed="ann's seed")
        await bob.join(table, role="player", seat=2)
        bots = await ann.create_table("loco_poker", seats=3, bots=3, options=quick(
            "loco_poker", pause=0, bot_think=0.01, auto_rematch=True))
        early, late = await srv.client("early"), await srv.client("late")
        await early.join(bots, role="spectator")
        await late.join(bots, role="spectator")
        t = srv.hall.tables[table]
        await _act_until(t, {1: ann, 2: bob}, acks=5)
        await until(lambda: bots in early.seqs, 30)
        early_seq = early.seqs[bots]
        await early.close()  # gone before the restart; the bots play on
        await until(lambda: late.seqs.get(bots, 0) > early_seq, 30)
        # the human to act thinks: a second of its clock runs
        await until(lambda: t.machine.turn_kind == "human" and t.turn_public()["clock"] < 29.0, 30)
        to_act, turn_id = t.machine.turn_seat, t.machine.turn_id
        clock_before = t.turn_public()
        assert to_act in (1, 2) and clock_before["clock"] < 29.5
        seen_by_late = event_frames(late, bots)
        human_seq = t.machine.seq
        stopping = time.monotonic()
    # the service stopped (as on SIGTERM: the running clock is saved as it stops); a new one starts
    stop_took = time.monotonic() - stopping
    stored = await _stored_state(stores(), table)
    assert stored["seq"] == human_seq + 2 and stored["turn"]["id"] == turn_id  # + both players' presence: gone
    async with running_server(SETTINGS, stores()) as srv:
        assert srv.hall.recovery["tables"] == 2 and srv.hall.recovery["quarantined"] == 0
        t = srv.hall.tables[table]
        assert _without_clock(t.to_data()) == _without_clock(stored)
        clock_after = t.turn_public()  # the time that was left when it stopped, not a fresh clock
        assert clock_before["clock"] - stop_took - 0.5 <= clock_after["clock"] <= clock_before["clock"]
        assert clock_after["bank"] == clock_before["bank"]
        # the player to act comes back with its token and the seq before its turn: the turn is replayed
        back = {s: await Client(srv.url, record=True).connect() for s in (1, 2)}
        for seat, old in ((1, ann), (2, bob)):
            welcome = await back[seat].hello(old.name or "", token=old.token)
            assert welcome["player"] == old.player
            remember_seat(back[seat], table, seat)
        since = turn_id - 1
        reply = await back[to_act].join(table, role="player", since=since)
        assert reply["type"] == "ok" and reply["seq"] == stored["seq"] + 1  # + its own presence event
        replayed = event_frames(back[to_act], table)
        check_gap_free(replayed, since)
        assert replayed[0]["seq"] == turn_id and "legal" in replayed[0]
        other = 3 - to_act
        snap = await back[other].join(table, role="player")
        assert snap["type"] == "snapshot" and snap["you"] == other
        # the spectator who left early gets everything it missed, from the store, gap-free
        spectator = await Client(srv.url, record=True).connect()
        await spectator.hello("early", token=early.token)
        assert (await spectator.join(bots, role="spectator", since=early_seq))["type"] == "ok"
        missed = event_frames(spectator, bots)
        check_gap_free(missed, early_seq)
        assert len(missed) > len([f for f in seen_by_late if f["seq"] > early_seq]) > 0
        for old, new in zip([f for f in seen_by_late if f["seq"] > early_seq], missed):
            assert old == new
        # the bots play on, and the humans finish their match
        await until(lambda: srv.hall.tables[bots].machine.seq > missed[-1]["seq"], 30, "the bots playing on")
        results = await asyncio.gather(
            play(back[to_act], table, "a", until="match_ended"),  # its inbox holds the replayed turn
            play(back[other], table, "b", until="match_ended", snapshot=snap))
        assert all(frames[-1]["event"]["type"] == "match_ended" for frames in results)
        for c in (*back.values(), spectator, late, ann, bob):
            await c.close()


async def test_unreadable_checkpoints_are_quarantined_and_the_rest_loads(stores, caplog):
    async with running_server(SETTINGS, stores()) as srv:
        owner = await srv.client("owner")
        spec = quick("loco_poker", pause=0, bot_think=5)
        tables = [await owner.create_table("loco_poker", seats=2, bots=2, options=spec) for _ in range(4)]
        # every match started (its engine's state is what the test spoils below) and is written
        await until(lambda: all(srv.hall.tables[t].machine.engine is not None and srv.hall.tables[t].quiet
                                for t in tables), 30, "the matches started and written")
        await owner.close()
    good, garbage, newer, broken = tables
    store = stores()
    state = await _stored_state(stores(), broken)
    state["engine"]["version"] = 99  # the checkpoint's format is right, but the engine refuses its state
    await _put(store, garbage, b"\x92\xa3not a checkpoint")
    await _put(store, newer, pack_state({**state, "id": newer, "v": FORMAT_VERSION + 1}))
    await _put(store, broken, pack_state(state))
    caplog.set_level(logging.ERROR, logger="cardhall.hall")
    async with running_server(SETTINGS, stores()) as srv:
        assert set(srv.hall.tables) == {good}
        assert srv.hall.recovery == {"tables": 1, "quarantined": 3, "replayed": 0, "seconds": srv.hall.recovery["seconds"]}
        lines = [r.getMessage() for r in caplog.records if "quarantined" in r.getMessage()]
        assert any(garbage in line and "not a msgpack checkpoint" in line for line in lines), lines
        assert any(newer in line and f"format {FORMAT_VERSION + 1} is newer" in line for line in lines), lines
        assert any(broken in line and "cannot be restored" in line for line in lines), lines
        async with httpx.AsyncClient(base_url=srv.http) as http:
            health = (await http.get("/healthz")).json()
            assert health["status"] == "ok" and health["store"]["quarantined_tables"] == 3
            assert "cardhall_tables_quarantined 3.0" in (await http.get("/metrics")).text
            assert [e["id"] for e in (await http.get("/api/tables")).json()] == [good]
        c = await srv.client("c")
        with pytest.raises(ServerError) as err:
            await c.join(garbage, role="spectator")
        assert err.value.code == "unknown_table"
        await c.close()
    assert set(await _quarantined(stores())) == {garbage, newer, broken}
    assert await _raw(stores(), garbage) == b"\x92\xa3not a checkpoint"  # kept for an operator
    caplog.clear()
    async with running_server(SETTINGS, stores()) as srv:  # set aside: not read again
        assert set(srv.hall.tables) == {good} and srv.hall.recovery["quarantined"] == 0
    assert not [r for r in caplog.records if "quarantined" in r.getMessage()]


async def _put(store: Store, table: str, blob: bytes) -> None:
    if isinstance(store, MemoryStore):
        store.put_raw_state(table, blob)
        return
    assert isinstance(store, RedisStore)  # the state as is, without an input log after it
    await store.client.set(store.table_keys(table)[0], blob)
    await store.client.delete(store.keys.log(table))
    await store.close()


async def _raw(store: Store, table: str) -> bytes | None:
    if isinstance(store, MemoryStore):
        return store._states.get(table)
    assert isinstance(store, RedisStore)
    try:
        return await store.raw_state(table)
    finally:
        await store.close()


async def _quarantined(store: Store) -> dict[str, str]:
    try:
        return await store.quarantined()
    finally:
        await store.close()


def test_state_packing_is_exact_for_a_live_table_shape():
    """A state with everything a table stores survives the format unchanged."""
    state = {"v": FORMAT_VERSION, "id": "t_1", "seats": 2, "created": 1.25, "turn": {"clock": 12.5, "bank": 0.0},
             "occupants": [{"seat": 1, "bot_rng": {"key": "ab", "position": 8}}], "engine": {"deck": ["Ah", "Xr"]}}
    assert unpack_state(pack_state(state)) == state


async def test_a_format_1_checkpoint_is_migrated_and_resumes(stores):
    """Format 1 kept the whole last hand record (``last_hand``); format 2 its
    digest. A table stored by the older server loads, and its last hand is not
    recorded a second time."""
    async with running_server(SETTINGS, stores()) as srv:
        owner = await srv.client("owner")
        table = await owner.create_table("loco_poker", seats=2, bots=2, options=quick(
            "loco_poker", pause=0, bot_think=0.01, auto_rematch=True))
        await until(lambda: srv.hall.tables[table].machine.last_hand_digest is not None, 30)  # a hand recorded
        await owner.close()
    store = stores()
    state = await _stored_state(stores(), table)
    hands_before = await _hands(stores(), table)
    record = hands_before[-1]["hand"]  # the last hand recorded
    assert state["last_hand_digest"] == hand_digest(record)
    v1 = {k: v for k, v in state.items() if k != "last_hand_digest"} | {"v": 1, "last_hand": record}
    await _put(store, table, pack_state(v1))
    # what the server restores from the stored format-1 bytes (read here, before its bots play on:
    # with a 0.01 s think time the live table may have recorded a newer hand by the time it is read)
    restored = TableMachine.from_data(unpack_state(pack_state(v1)), Now(time.time(), time.monotonic()))
    assert restored.last_hand_digest == hand_digest(record)
    async with running_server(SETTINGS, stores()) as srv:
        t = srv.hall.tables[table]
        # it plays on: new hands are recorded, the old one not again
        await until(lambda: t.machine.last_hand_digest != restored.last_hand_digest, 30)
        assert t.machine.seq > state["seq"]
    hands = await _hands(stores(), table)
    assert len(hands) > len(hands_before)
    digests = [hand_digest(h["hand"]) for h in hands]
    assert len(set(digests)) == len(hands), [(h["match"], h["seq"], h["hand"]) for h in hands if digests.count(hand_digest(h["hand"])) > 1]


async def test_a_format_2_checkpoint_is_migrated_resumes_and_is_written_back_whole(stores):
    """Format 2 (a whole state with every action, no input log) loads: the
    table resumes where it was, and its next checkpoint writes a format-3
    full state with the log after it numbered from there."""
    async with running_server(SETTINGS, stores()) as srv:
        owner = await srv.client("owner")
        table = await owner.create_table("no_limit_holdem", seats=2, bots=2, options={
            "pause": 0, "bot_think": 0.01, "auto_rematch": True})
        await until(lambda: srv.hall.tables[table].machine.seq > 30, 30)
        await owner.close()
    state = await _stored_state(stores(), table)
    v2 = {k: v for k, v in state.items() if k not in ("log", "replay")} | {"v": 2}
    await _put(stores(), table, pack_state(v2))
    restored = TableMachine.from_data(unpack_state(pack_state(v2)), Now(time.time(), time.monotonic()))
    assert restored.seq == state["seq"] and restored.logged == 0
    async with running_server(SETTINGS, stores()) as srv:
        t = srv.hall.tables[table]
        await until(lambda: t.machine.seq > state["seq"] + 20, 30)
    raw = await _raw(stores(), table)
    assert raw is not None and unpack_state(raw)["v"] == FORMAT_VERSION == 3
    now = await _stored_state(stores(), table)
    assert now["seq"] > state["seq"] + 20 and now["log"] >= 1


async def _hands(store: Store, table: str) -> list[dict]:
    try:
        return await store.hands(table)
    finally:
        await store.close()
