"""Seats, tokens, reconnects, clocks, races and controls over real websockets
(Loco Poker tables: check / fold / all-in make every situation quick to reach)."""

from __future__ import annotations

import asyncio
import socket
import time
from dataclasses import replace

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosedError

from cardhall.clients.client import Client, ServerError
from cardhall.server.app import serving
from cardhall.server.store.memory import MemoryStore
from cardhall.server.table.clock import PausedClock
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, running_server
from tests.server.play import check_gap_free, event_frames, play, remember_seat

FAST = {"pause": 0, "bot_think": 0}


async def _two_players(live, options=None, seats=2, bots=0):
    ann = await live.client("ann")
    bob = await live.client("bob", codec="json")
    table = await ann.create_table("loco_poker", seats=seats, bots=bots, options={**FAST, **(options or {})})
    await ann.join(table, role="player", seat=1)
    snap = await bob.join(table, role="player", seat=2)
    return ann, bob, table, snap


def _wire(client, obj):
    return client.codec.decode(client.codec.encode({"x": obj}), 1 << 30)["x"]


async def _turn(clients, table):
    """The current turn (from the server), once the table has settled on one."""
    actor = clients.hall.tables[table]
    await until(lambda: actor.machine.turn_id is not None and actor.mailbox.empty(), 30, "a turn open at the table")
    return actor.machine


async def test_token_restores_seat_and_private_view_G5(live):
    ann, bob, table, _ = await _two_players(live)
    await ann.close()
    ev = await bob.next_event(table, where=lambda f: f["event"]["type"] == "presence")
    assert ev["event"] == {"type": "presence", "seat": 1, "connected": False}
    again = await Client(live.url, record=True).connect()
    welcome = await again.hello("ann", token=ann.token)
    assert welcome["player"] == ann.player
    snap = await again.join(table, role="player")
    assert snap["you"] == 1
    engine = live.hall.tables[table].machine.engine
    assert snap["state"] == _wire(again, engine.view(1))
    assert snap["state"]["hole_cards"] == _wire(again, engine.view(1)["hole_cards"])
    # a stranger cannot take the seat, nor act for it
    eve = await live.client("eve")
    with pytest.raises(ServerError) as err:
        await eve.join(table, role="player", seat=1)
    assert err.value.code == "match_running"
    await eve.join(table, role="spectator")
    with pytest.raises(ServerError) as err:
        await eve.act(table, {"type": "check"})
    assert err.value.code == "not_a_player"
    with pytest.raises(ServerError) as err:
        await _hello_bad_token(live)
    assert err.value.code == "unknown_token"
    for c in (again, bob, eve):
        await c.close()


async def _hello_bad_token(live):
    c = await Client(live.url).connect()
    try:
        await c.hello("x", token="not-a-token")
    finally:
        await c.close()


async def test_since_resumes_from_buffer_or_snapshot(live):
    ann, bob, table, bob_snap = await _two_players(live)
    t = await _turn(live, table)
    await bob.close()
    last = bob.seqs[table]
    # ann plays on while bob is away: whoever is to act acts, bob's turns time out... so act only as ann
    while t.turn_seat == 1:
        await ann.act(table, {"type": "check"}, turn=t.turn_id)
        t = await _turn(live, table)
    missed_until = t.seq
    assert missed_until > last
    back = await Client(live.url, codec="json", record=True).connect()
    await back.hello("bob", token=bob.token)
    reply = await back.join(table, role="player", since=last)
    # the missed events, then bob's own return (presence), then ok
    assert reply["type"] == "ok" and reply["seq"] == missed_until + 1 == t.seq
    frames = event_frames(back, table)
    check_gap_free(frames, last)
    assert frames[-1]["event"] == {"type": "presence", "seat": 2, "connected": True}
    for f in frames:  # legal actions only with bob's current turn
        assert ("legal" in f) == (f["seq"] == t.turn_id and t.turn_seat == 2), (f, t.turn_id, t.turn_seat)
    # a gap older than the buffer and the store's stream gets a snapshot instead
    live.hall.tables[table].buffer.clear()
    live.hall.store.drop_events(table)
    again = await Client(live.url, record=True).connect()
    await again.hello("bob", token=bob.token)
    snap = await again.join(table, role="player", since=1)
    assert snap["type"] == "snapshot" and snap["seq"] == t.seq and snap["you"] == 2
    for c in (ann, back, again):
        await c.close()


async def test_since_after_a_resume_gives_the_open_turn_its_legal_actions_G8(live):
    """``resumed`` carries the open turn again (G-8); a player joining with ``since`` before it
    gets it with the legal actions, as it was published, so the client can still act."""
    ann, bob, table, _ = await _two_players(live)
    t = await _turn(live, table)
    seat, turn = t.turn_seat, t.turn_id
    clients = {1: ann, 2: bob}
    since = clients[seat].seqs[table]
    await ann.act(table, {"type": "pause"})
    await ann.act(table, {"type": "resume"})
    resumed = await clients[seat].next_event(table, where=lambda f: f["event"]["type"] == "resumed")
    assert resumed["turn"]["id"] == turn and resumed["legal"] == t.turn_legal
    back = await Client(live.url, codec="json", record=True).connect()
    await back.hello(clients[seat].name, token=clients[seat].token)
    reply = await back.join(table, role="player", since=since)
    assert reply["type"] == "ok"
    frames = event_frames(back, table)
    check_gap_free(frames, since)
    replayed = next(f for f in frames if f["event"]["type"] == "resumed")
    assert replayed["turn"] == resumed["turn"] and replayed.get("legal") == t.turn_legal
    other = await Client(live.url, record=True).connect()
    await other.hello(clients[3 - seat].name, token=clients[3 - seat].token)
    await other.join(table, role="player", since=since)
    assert all("legal" not in f for f in event_frames(other, table))  # only the seat to act gets them
    await clients[seat].act(table, {"type": "check"}, turn=turn)
    for c in (ann, bob, back, other):
        await c.close()


async def test_timeouts_check_then_fold_then_sit_out_G3(live):
    ann, bob, table, _ = await _two_players(live, {"action_clock": 0.2, "time_bank": 0})
    clients = {1: ann, 2: bob}
    t = await _turn(live, table)
    first = t.turn_seat
    other = 3 - first
    watcher = clients[other]
    # first to act lets the clock run: checking is free, so the timeout checks
    ev = await watcher.next_event(table, where=lambda f: f["event"]["type"] == "timeout", timeout=30)
    assert ev["event"] == {"type": "timeout", "seat": first, "action": {"type": "check"}}
    t = await _turn(live, table)
    assert t.turn_seat == other
    await clients[other].act(table, {"type": "all_in"}, turn=t.turn_id)
    # facing an all-in, checking is not legal: the timeout folds, never checks
    ev = await watcher.next_event(table, where=lambda f: f["event"]["type"] == "timeout", timeout=30)
    assert ev["event"] == {"type": "timeout", "seat": first, "action": {"type": "fold"}}
    ev = await watcher.next_event(table, where=lambda f: f["event"]["type"] == "sat_out", timeout=30)
    assert ev["event"] == {"type": "sat_out", "seat": first, "reason": "timeouts"}
    assert live.hall.tables[table].machine.seats[first].sitting_out
    # sitting out, the player's turns are played at once; sit_in brings them back
    await clients[first].act(table, {"type": "sit_in"})
    assert not live.hall.tables[table].machine.seats[first].sitting_out
    for c in (ann, bob):
        await c.close()


async def test_two_clients_racing_to_act(live):
    ann, bob, table, _ = await _two_players(live)
    t = await _turn(live, table)
    clients = {1: ann, 2: bob}
    turn = t.turn_id
    results = await asyncio.gather(ann.act(table, {"type": "check"}, turn=turn),
                                   bob.act(table, {"type": "check"}, turn=turn), return_exceptions=True)
    oks = [r for r in results if not isinstance(r, Exception)]
    errs = [r for r in results if isinstance(r, ServerError)]
    assert len(oks) == 1 and len(errs) == 1
    assert errs[0].code in ("not_your_turn", "stale_turn")
    # the same player on two connections racing for one turn: one wins, one is stale
    t = await _turn(live, table)
    seat = t.turn_seat
    twin = await Client(live.url).connect()
    await twin.hello("twin", token=clients[seat].token)
    await twin.join(table, role="player")
    turn = t.turn_id
    results = await asyncio.gather(clients[seat].act(table, {"type": "check"}, turn=turn),
                                   twin.act(table, {"type": "check"}, turn=turn), return_exceptions=True)
    codes = sorted(r.code if isinstance(r, ServerError) else "ok" for r in results)
    assert codes == ["ok", "stale_turn"], codes
    for c in (ann, bob, twin):
        await c.close()


async def test_solo_play_waits_for_continue_G4_NL5(live):
    ann = await live.client("ann")
    # two points to win: a match of one point can end in its first hand with no dealer step at all
    # (an uncalled all-in), so nothing to wait for (about 1 match in 80 with random play)
    table = await ann.create_table("loco_poker", seats=3, bots=2, options={"pause": 0, "bot_think": 0,
                                                                           "points_to_win": 2})
    snap = await ann.join(table, role="player")
    remember_seat(ann, table, snap["you"])
    frames = await asyncio.wait_for(play(ann, table, "solo", snapshot=snap), 60)
    continues = [f for f in frames if (f.get("turn") or {}).get("continue")]
    assert continues, "solo play never waited for continue"
    # between a continue turn and the player's continue, nothing else happened
    for f in continues[:-1]:
        nxt = next(g for g in frames if g["seq"] == f["seq"] + 1)
        assert nxt["seq"] == f["seq"] + 1
    assert frames[-1]["event"]["type"] == "match_ended"
    await ann.close()


async def _solo_waiting_for_continue(live, name):
    """A solo Loco Poker table (two bots) waiting for its player's ``continue``."""
    ann = await live.client(name)
    table = await ann.create_table("loco_poker", seats=3, bots=2,
                                   options={"pause": 0.05, "bot_think": 0, "points_to_win": 2,
                                            "action_clock": 0.2, "time_bank": 0})
    await ann.join(table, role="player", seat=1)
    actor = live.hall.tables[table]
    t = actor.machine

    async def waits_for_continue() -> bool:  # folding every hand of ann's on the way
        if t.turn_kind == "human" and t.turn_seat == 1:
            await ann.act(table, {"type": "fold"}, turn=t.turn_id)
        return t.turn_kind == "continue"

    await until(waits_for_continue, 60, "the solo table waiting for continue")
    return ann, table, actor


async def test_a_solo_table_still_waits_when_the_shutdown_closed_the_connection_G4(live):
    """The 1001 closes of a shutting-down service are not the solo player going
    away: the table's last checkpoint keeps the wait for their continue (the
    table restored from it waits for them once they are back: G-4,
    tests/server/table/test_continue.py)."""
    ann, table, actor = await _solo_waiting_for_continue(live, "solo shutdown")
    t = actor.machine
    seq, turn = t.seq, t.turn_id
    live.hall.stop_accepting()  # what Hall.shutdown does before it closes every connection
    await ann.close()
    await until(lambda: t.presence(1) == 0 and actor.quiet, 30, "the table taking the disconnect")
    # the step that took the disconnect is the one that would have stopped the wait (turns.stop_waiting_for);
    # no timer is armed, so nothing but an input can move the table on from here
    assert t.turn_kind == "continue" and t.turn_id == turn and t.seq == seq + 1  # only the presence event
    assert not actor.timer_armed


@pytest.mark.parametrize("how", ["disconnect", "leave", "sit_out"])
async def test_a_solo_table_goes_on_when_its_player_is_gone_G4_G5(live, how):
    """G-4 waits for the solo player's continue only while they can press it: a
    player who lost the connection, left or sat out is not waited for; the
    table goes on at its pace, their turns on the clock (G-3, G-5), to the match's end."""
    ann, table, actor = await _solo_waiting_for_continue(live, f"solo {how}")
    t = actor.machine
    seq = t.seq
    if how == "disconnect":
        await ann.close()
    elif how == "leave":
        await ann.leave(table)
    else:
        await ann.act(table, {"type": "sit_out"})
    await until(lambda: t.status != "running", 60, "the match's end")
    assert t.seq > seq + 5, "the table stopped when its solo player went away"
    assert t.status == "finished" and t.engine.finished
    if how != "disconnect":
        await ann.close()


async def test_owner_pause_and_resume_G8_and_rematch_G7(live):
    ann, bob, table, _ = await _two_players(live, {"action_clock": 2.0, "time_bank": 0, "points_to_win": 1})
    t = await _turn(live, table)
    with pytest.raises(ServerError) as err:
        await bob.act(table, {"type": "pause"})
    assert err.value.code == "not_owner"
    await ann.act(table, {"type": "pause"})
    clients = {1: ann, 2: bob}
    with pytest.raises(ServerError) as err:
        await clients[t.turn_seat].act(table, {"type": "check"})
    assert err.value.code == "paused"
    # a paused clock does not run: it holds the time it had left, and no timer is armed for it
    actor = live.hall.tables[table]
    assert isinstance(t.clock, PausedClock) and 0 < t.clock.remaining <= 2.0 and not actor.timer_armed
    # nor does it run out: once the running clock would have, a request the table answers after
    # anything it did by then (its mailbox is in order) finds it still paused, and no timeout was sent
    clock_ends = time.monotonic() + t.clock.remaining
    await until(lambda: time.monotonic() > clock_ends, 30, "the moment the clock would have run out")
    to_act = clients[t.turn_seat]
    with pytest.raises(ServerError) as err:
        await to_act.act(table, {"type": "check"})
    assert err.value.code == "paused"
    assert not [f for c in (ann, to_act) for f in event_frames(c, table) if f["event"]["type"] == "timeout"]
    await ann.act(table, {"type": "resume"})
    resumed = await ann.next_event(table, where=lambda f: f["event"]["type"] == "resumed")
    assert resumed["turn"]["id"] == t.turn_id and resumed["turn"]["seat"] == t.turn_seat
    assert 0 < resumed["turn"]["clock"] <= 2.0
    assert ("legal" in resumed) == (t.turn_seat == 1)  # only the seat to act gets its legal actions
    # play the match out, then the rematch: same seats, the next match's commitment as published
    remember_seat(ann, table, 1)
    remember_seat(bob, table, 2)
    done = await asyncio.wait_for(asyncio.gather(play(ann, table, "x"), play(bob, table, "y")), 60)
    ended = done[0][-1]["event"]
    first_dealer = live.hall.tables[table].machine.first_dealer
    await bob.act(table, {"type": "rematch"})
    ev = await ann.next_event(table, where=lambda f: f["event"]["type"] == "rematch")
    assert ev["event"]["commitment"] == ended["next_commitment"] and ev["event"]["match"] == 2
    started = await ann.next_event(table, where=lambda f: f["event"]["type"] == "match_started")
    assert started["event"]["commitment"] == ended["next_commitment"]
    assert live.hall.tables[table].machine.first_dealer == (first_dealer % 2) + 1  # G-7: the dealer moves on
    for c in (ann, bob):
        await c.close()


async def test_leave_frees_seat_before_match_sits_out_during_G5(live):
    ann = await live.client("ann")
    bob = await live.client("bob")
    table = await ann.create_table("loco_poker", seats=3, options=FAST)
    await bob.join(table, role="player", seat=2)
    await bob.leave(table)
    assert 2 not in live.hall.tables[table].machine.seats
    await bob.join(table, role="player", seat=2)
    await ann.join(table, role="player", seat=1)
    with pytest.raises(ServerError) as err:
        await bob.act(table, {"type": "start"})
    assert err.value.code == "not_owner"
    await ann.act(table, {"type": "start"})  # G-9: the owner starts with two seated
    assert live.hall.tables[table].machine.status == "running"
    await bob.leave(table)
    assert live.hall.tables[table].machine.seats[2].sitting_out
    for c in (ann, bob):
        await c.close()


async def test_rate_limited_then_closed():
    settings = replace(TEST_SETTINGS, rate=5, burst=5, rate_strikes=3)
    async with running_server(settings) as live:
        c = await Client(live.url).connect()
        for i in range(12):
            await c.send({"type": "ping", "id": i})
        code, _ = await asyncio.wait_for(c.closed, 30)
        assert code == 4008
        codes = [f.get("code") for f in [c.inbox.get_nowait() for _ in range(c.inbox.qsize())]]
        assert "rate_limited" in codes
        assert live.hall.metrics.dropped.labels("rate_limited")._value.get() == 1
        await c.close()
        # everyone else is fine
        ok = await live.client("ok")
        assert (await ok.ping())["type"] == "pong"
        await ok.close()


async def test_slow_consumer_is_dropped_table_goes_on():
    """A client that stops reading is dropped once more than ``send_queue`` frames wait for
    it (its transport aborted): the frames it does not read drop it, however long they take
    to come; the tables it watched forget it and never waited for it."""
    settings = replace(TEST_SETTINGS, send_queue=20)
    async with serving(settings, MemoryStore(settings.event_buffer, keep_states=True)) as (server, port):
        # small kernel buffers on the server's side (an accepted socket has its listening socket's):
        # the pipe to a client that does not read is full after some hundred frames, not megabytes
        for listening in server.servers:
            for sock in listening.sockets:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        url = f"ws://127.0.0.1:{port}/ws"
        hall = server.hall
        dropped = hall.metrics.dropped.labels("slow_consumer")
        boss = await Client(url).connect()
        await boss.hello("boss")
        tables = [await boss.create_table("loco_poker", seats=4, bots=4,
                                          options={**FAST, "auto_rematch": True, "points_to_win": 5})
                  for _ in range(3)]
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.connect(("127.0.0.1", port))
        ws = await connect(url, sock=raw, subprotocols=["cardhall.v1.json"], max_queue=1)
        ws.transport.pause_reading()  # never reads again: every frame for it stays in the pipe, then the queue
        codec = Client(url, codec="json").codec
        await ws.send(codec.encode({"type": "hello", "name": "slow"}))
        for t in tables:
            await ws.send(codec.encode({"type": "join", "table": t, "role": "spectator"}))
        await until(lambda: dropped._value.get(), 60, "the slow consumer dropped")
        assert dropped._value.get() == 1
        # the tables hear of it through their mailboxes
        await until(lambda: all(hall.tables[t].machine.subscribers.count == 0 for t in tables), 30,
                    "the tables forgetting the slow consumer")
        before = hall.tables[tables[0]].machine.seq
        await until(lambda: hall.tables[tables[0]].machine.seq > before, 30, "the table playing on")  # never waited
        # the server aborted the connection: reading again, the client finds it ended without a close frame
        ws.transport.resume_reading()
        with pytest.raises(ConnectionClosedError) as closed:
            while True:
                await asyncio.wait_for(ws.recv(), 30)
        assert closed.value.rcvd is None and ws.close_code == 1006, closed.value
        await boss.close()


async def test_origin_restriction():
    from websockets.exceptions import InvalidStatus

    settings = replace(TEST_SETTINGS, allowed_origins=("https://cards.example",))
    async with running_server(settings) as live:
        with pytest.raises(InvalidStatus):
            await Client(live.url, origin="https://evil.example").connect()
        good = await Client(live.url, origin="https://cards.example").connect()
        assert (await good.ping())["type"] == "pong"
        await good.close()
        plain = await Client(live.url).connect()  # not a browser: no Origin header
        assert (await plain.ping())["type"] == "pong"
        await plain.close()
