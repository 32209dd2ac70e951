"""Who played a match: ``match_started.names`` and ``match_ended.names``
(protocol 1.6, SPEC "Events and seq"), seat -> the name each seat's occupant
shows at that moment, bots included.

On the table machine: the names follow renames up to the event, a leaver's
seat is named in ``match_ended`` before it is freed, and the seat's next
occupant changes nothing in the event already sent; a table restored from a
checkpoint (which stores nothing for the names) names its seats all the same.
Over real websockets: every frame of a whole match validates against the
schemas, both events carrying the names as the table shows them."""

from __future__ import annotations

import asyncio
import json

import pytest

from cardhall.protocol.schemas import FrameValidator, SchemaViolation
from cardhall.server.store.format import pack_state, unpack_state
from cardhall.server.table.inputs import Now, Rearm, Rename
from cardhall.server.table.machine import TableMachine
from tests.games import quick
from tests.server.play import play, remember_seat, watch
from tests.server.table.harness import Bench, Seeds, code, play_out, two_players


def _occupant_names(bench: Bench) -> dict[str, str]:
    return {str(o["seat"]): o["name"] for o in bench.m.info()["occupants"]}


def test_both_events_name_every_seat_bots_included_and_follow_a_rename():
    bench = Bench(seats=3, bots=["random"], options={"points_to_win": 1})
    bench.join("a", "ann", role="player", seat=1)
    bench.join("b", "bob", role="player", seat=2)
    started = bench.last("match_started").event.data
    bot_name = bench.m.seats[3].name
    assert started["names"] == {"1": "ann", "2": "bob", "3": bot_name} == _occupant_names(bench)
    assert started["names"] == {str(s["seat"]): s["name"] for s in started["seats"]}
    bench.step(Rename("bob", "Robert"))
    play_out(bench)
    ended = bench.last("match_ended").event.data
    assert ended["names"] == {"1": "ann", "2": "Robert", "3": bot_name}
    assert bench.last("match_started").event.data["names"]["2"] == "bob"  # the event sent stays as it was


def test_a_leavers_seat_is_named_in_match_ended_and_its_next_occupant_changes_nothing_G7():
    bench = two_players(options={"points_to_win": 1})
    assert code(bench.leave("b", "bob")) == "ok"
    play_out(bench)
    types = bench.types()
    assert types[types.index("match_ended") + 1] == "left"  # the seat is freed after the names were taken
    ended = bench.last("match_ended")
    assert ended.event.data["names"] == {"1": "ann", "2": "bob"}
    bench.join("c", "cat", "Cathy", role="player", seat=2)
    assert _occupant_names(bench) == {"1": "ann", "2": "Cathy"}
    assert bench.last("match_ended") is ended and ended.event.data["names"]["2"] == "bob"


def test_a_table_restored_from_a_checkpoint_names_its_seats_nothing_new_stored():
    bench = two_players(options={"points_to_win": 1})
    data = bench.m.to_data(bench.mono)
    assert '"names"' not in json.dumps(data)  # computed when each event is built: the stored state is unchanged
    bench.m = TableMachine.from_data(unpack_state(pack_state(data)), Now(bench.wall + bench.mono, bench.mono),
                                     entropy=Seeds())
    bench.step(Rearm())  # the restored table asks for its timer again
    bench.join("a", "ann", role="player")  # subscribers are not stored: both reconnect
    bench.join("b", "bob", role="player")
    play_out(bench)
    assert bench.last("match_ended").event.data["names"] == {"1": "ann", "2": "bob"}


async def test_over_the_protocol_both_events_carry_the_names_and_validate(live):
    ann = await live.client("Ann Example", codec="json")
    eve = await live.client("eve", codec="msgpack")
    try:
        table = await ann.create_table("loco_poker", seats=2, bots=1,
                                       options=quick("loco_poker", pause=0, bot_think=0))
        await eve.join(table, role="spectator")
        snapshot = await ann.join(table, role="player", seed="ann")
        remember_seat(ann, table, snapshot["you"])
        _, frames = await asyncio.wait_for(asyncio.gather(play(ann, table, "ann", snapshot=snapshot), watch(eve, table)), 90)
        shown = {str(o["seat"]): o["name"] for o in live.hall.tables[table].machine.info()["occupants"]}
    finally:
        await ann.close()
        await eve.close()
    assert "Ann Example" in shown.values() and len(shown) == 2
    validator = FrameValidator()
    named = [f for f in frames if f["event"]["type"] in ("match_started", "match_ended")]
    assert [f["event"]["type"] for f in named] == ["match_started", "match_ended"]
    for frame in named:
        validator.check_server(frame)  # the schemas of this minor version require the names
        assert frame["event"]["names"] == shown
        bare = {**frame, "event": {k: v for k, v in frame["event"].items() if k != "names"}}
        with pytest.raises(SchemaViolation):
            validator.check_server(bare)
