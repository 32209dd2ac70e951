"""Every kind of bad input gets an ``error`` frame with its stable code, and
nothing else breaks: the same connection and the table go on working."""

from __future__ import annotations

import msgpack
import pytest

from cardhall.clients.client import ServerError
from cardhall.protocol.errors import CODES


async def _error(client, payload=None, message=None):
    """Send a raw payload or a message; return the error frame that answers it."""
    if message is not None:
        await client.send(message)
    else:
        await client.send_raw(payload)
    frame = await client.next_frame(5)
    assert frame["type"] == "error", frame
    assert frame["code"] in CODES
    return frame


async def test_malformed_frames_get_stable_codes(live):
    c = await live.client("ann")
    j = await live.client("bob", codec="json")
    assert (await _error(c, b"\xc1\x00garbage"))["code"] == "malformed"
    assert (await _error(c, msgpack.packb([1, 2, 3])))["code"] == "malformed"
    assert (await _error(c, "a text frame on the msgpack subprotocol"))["code"] == "malformed"
    assert (await _error(c, msgpack.packb({"type": "ping", "pad": "x" * 20_000})))["code"] == "frame_too_large"
    assert (await _error(j, "{not json"))["code"] == "malformed"
    assert (await _error(j, '"a string"'))["code"] == "malformed"
    assert (await _error(c, message={"type": "fly", "id": 1}))["code"] == "unknown_type"
    assert (await _error(c, message={"id": 2}))["code"] == "unknown_type"
    assert (await _error(c, message={"type": "event", "id": 3}))["code"] == "unknown_type"  # a server type
    assert (await _error(c, message={"type": "ping", "id": [1]}))["code"] == "bad_request"
    frame = await _error(c, message={"type": "join", "table": "t_nope", "id": 9})
    assert frame["code"] == "unknown_table" and frame["re"] == 9
    # the connection still works
    assert (await c.ping())["type"] == "pong"
    assert (await j.ping())["type"] == "pong"
    await c.close()
    await j.close()


async def test_requests_before_hello_and_bad_create(live):
    from cardhall.clients.client import Client

    anon = await Client(live.url).connect()
    with pytest.raises(ServerError) as err:
        await anon.request({"type": "create_table", "game": "loco_poker"})
    assert err.value.code == "hello_required"
    with pytest.raises(ServerError) as err:
        await anon.hello("x" * 41)
    assert err.value.code == "bad_request"
    await anon.close()
    c = await live.client("ann")
    cases = [
        ({"game": "chess"}, "unknown_game"),
        ({"game": 5}, "bad_request"),
        ({}, "bad_request"),
        ({"game": "loco_poker", "seats": 1}, "bad_request"),
        ({"game": "loco_poker", "seats": "4"}, "bad_request"),
        ({"game": "loco_poker", "options": {"no_such_option": 1}}, "bad_options"),
        ({"game": "loco_poker", "options": {"action_clock": -1}}, "bad_options"),
        ({"game": "loco_poker", "options": {"points_to_win": "many"}}, "bad_options"),
        ({"game": "loco_poker", "options": []}, "bad_options"),
        ({"game": "loco_poker", "bots": ["nobody"]}, "bad_request"),
        ({"game": "loco_poker", "seats": 2, "bots": 3}, "bad_request"),
    ]
    for spec, code in cases:
        with pytest.raises(ServerError) as err:
            await c.request({"type": "create_table", **spec})
        assert err.value.code == code, (spec, err.value.frame)
    assert (await c.ping())["type"] == "pong"
    await c.close()


async def test_table_request_errors_and_the_table_goes_on(live):
    ann = await live.client("ann")
    bob = await live.client("bob")
    eve = await live.client("eve", codec="json")
    table = await ann.create_table("loco_poker", seats=3, options={"pause": 0, "bot_think": 0})

    async def code_of(coro):
        with pytest.raises(ServerError) as err:
            await coro
        return err.value.code

    assert await code_of(ann.act(table, {"type": "check"})) == "not_joined"
    assert await code_of(ann.join(table, role="king")) == "bad_request"
    assert await code_of(ann.join(table, role="player", seat=9)) == "bad_request"
    assert await code_of(ann.join(table, since=-1)) == "bad_request"
    assert await code_of(ann.join(table, role="player", seed="s" * 65)) == "bad_request"
    await ann.join(table, role="player", seat=1)
    assert await code_of(bob.join(table, role="player", seat=1)) == "seat_taken"
    assert await code_of(ann.join(table, role="player", seat=2)) == "already_seated"
    assert await code_of(ann.act(table, {"type": "check"})) == "bad_state"  # no match yet
    assert await code_of(ann.act(table, {"type": "start"})) == "bad_state"  # one player (G-9)
    await bob.join(table, role="player", seat=2)
    await eve.join(table, role="player", seat=3)  # full: the match starts (G-9)
    carl = await live.client("carl")
    assert await code_of(carl.join(table, role="player")) == "match_running"
    t = live.hall.tables[table].machine
    clients = {1: ann, 2: bob, 3: eve}
    to_act = clients[t.turn_seat]
    others = [c for s, c in clients.items() if s != t.turn_seat]
    assert await code_of(others[0].act(table, {"type": "check"})) == "not_your_turn"
    assert await code_of(to_act.act(table, {"type": "raise", "amount": 50})) == "illegal_action"
    assert await code_of(to_act.act(table, {"type": "check", "amount": "lots"})) == "bad_request"
    assert await code_of(to_act.act(table, "check")) == "bad_request"
    assert await code_of(to_act.act(table, {"type": "check"}, turn=t.turn_id - 1)) == "stale_turn"
    assert await code_of(to_act.act(table, {"type": "continue"})) == "bad_state"
    assert await code_of(to_act.act(table, {"type": "sit_in"})) == "bad_state"
    assert await code_of(bob.act(table, {"type": "pause"})) == "not_owner"
    assert await code_of(ann.act(table, {"type": "resume"})) == "bad_state"
    assert await code_of(ann.act(table, {"type": "rematch"})) == "bad_state"
    await carl.join(table, role="spectator")
    assert await code_of(carl.act(table, {"type": "check"})) == "not_a_player"
    assert await code_of(carl.leave("t_nope")) == "unknown_table"
    # the illegal attempts changed nothing: the same turn is still open, and it plays
    assert t.status == "running" and not t.paused
    await to_act.act(table, {"type": "check"}, turn=t.turn_id)
    for c in (ann, bob, eve, carl):
        assert (await c.ping())["type"] == "pong"
        await c.close()
    illegal = live.hall.metrics.errors_by_code.labels("illegal_action")._value.get()
    assert illegal == 1


async def test_tables_per_player_limit():
    from dataclasses import replace

    from tests.server.conftest import TEST_SETTINGS, running_server

    async with running_server(replace(TEST_SETTINGS, max_tables_per_player=2)) as live:
        c = await live.client("ann")
        await c.create_table("loco_poker")
        await c.create_table("loco_poker")
        with pytest.raises(ServerError) as err:
            await c.create_table("loco_poker")
        assert err.value.code == "too_many_tables"
        await c.close()
