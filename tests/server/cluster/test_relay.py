"""The receiving side of a relayed table (``server/cluster/relay.py``): real
connections (their frames captured from the ASGI send they write to), the
owner's real publication and reply messages, a real store for gap filling.

What must hold on every connection: each ``seq`` once and in order, the view
of its own viewer, a reply only after the events it follows, and after an
owner change a join again with ``since`` = the last ``seq`` delivered."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack

from cardhall.engine.base import Event
from cardhall.protocol import frames
from cardhall.protocol.codec import CODECS, JSON, MSGPACK
from cardhall.server.cluster import wire
from cardhall.server.cluster.peers import publication
from cardhall.server.cluster.relay import Relayed
from cardhall.server.connection import Connection
from cardhall.server.fanout import Fanout
from cardhall.server.store.base import Checkpoint
from cardhall.server.store.memory import MemoryStore
from cardhall.server.table.actor import pack
from cardhall.server.table.inputs import REJOIN, Join
from cardhall.server.table.records import EventRecord

TABLE = "t_1"


class Captured:
    """A real :class:`Connection` whose websocket messages are kept (decoded)."""

    def __init__(self, conn_id: int, codec: str = MSGPACK) -> None:
        self.messages: list[dict[str, Any]] = []
        self.codec = CODECS[codec]

        async def send_raw(message: dict[str, Any]) -> None:
            if message["type"] == "websocket.send":
                payload = message.get("bytes") if message.get("bytes") is not None else message.get("text")
                self.messages.append(self.codec.decode(payload, 1 << 20))
        self.conn = Connection(conn_id, self.codec, send_raw, limit=1000)
        self.conn.start()

    def seqs(self) -> list[int]:
        return [m["seq"] for m in self.messages if m["type"] == "event"]


def _record(seq: int, private_seat: int | None = None) -> EventRecord:
    private = {private_seat: {"card": "Ah"}} if private_seat is not None else None
    return EventRecord(seq, Event({"type": "note", "n": seq}, private), 1.0)


def _events(records: list[EventRecord], viewers: set[int | None]) -> list[Any]:
    blob = publication(Fanout(TABLE, lambda key: None), records, viewers)
    assert blob is not None
    return wire.unpack(blob)


def _out(conn: int, after: int, sent: list[dict[str, Any]], join: int | None | str = "no") -> list[Any]:
    blobs = [msgpack.packb(f) for f in sent]
    return ["out", TABLE, conn, after, blobs, True if join != "no" else None, None if join == "no" else [join]]


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0.005)


def _join(conn: int, since: int | None = None) -> Join:
    return Join(wire.remote_key("n2", conn), "p", "P", 1, "player", None, None, since, None)


async def test_each_connection_gets_its_view_in_order_and_replies_after_their_events():
    store = MemoryStore(keep_states=True)
    rejoins: list[Join] = []
    rt = Relayed(TABLE, store.events_since, lambda table, join: rejoins.append(join), lambda c, b: None)
    rt.start()
    seat, spectator = Captured(1), Captured(2, JSON)
    rt.watch(seat.conn, _join(1))
    rt.watch(spectator.conn, _join(2))
    rt.post(["e", *_events([_record(1)], {2, None})[2:]])  # before any join answer: kept, not delivered
    rt.post(_out(1, 1, [frames.snapshot(TABLE, 1, 2, {}, None, 1)], join=2))
    rt.post(_out(2, 0, [frames.snapshot(TABLE, 0, None, {}, None, 1)], join=None))
    rt.post(_out(1, 3, [frames.ok(7)]))  # the ok follows seq 3: held until it is delivered
    rt.post(["e", *_events([_record(2, private_seat=2), _record(3)], {2, None})[2:]])
    await _settle()
    assert seat.seqs() == [2, 3] and spectator.seqs() == [1, 2, 3]
    assert [m["type"] for m in seat.messages] == ["snapshot", "event", "event", "ok"]
    private = [m for m in seat.messages if m.get("seq") == 2][0]["event"]
    public = [m for m in spectator.messages if m.get("seq") == 2][0]["event"]
    assert private.get("card") == "Ah" and "card" not in public  # each its own view
    rt.stop()


async def test_a_gap_is_filled_from_the_stream_before_later_events():
    store = MemoryStore(keep_states=True)
    records = [_record(s) for s in range(1, 6)]
    await store.commit([Checkpoint(TABLE, {"seq": 5}, [(r.seq, pack(r)) for r in records])])
    rt = Relayed(TABLE, store.events_since, lambda table, join: None, lambda c, b: None)
    rt.start()
    viewer = Captured(1)
    rt.watch(viewer.conn, _join(1))
    rt.post(_out(1, 1, [frames.snapshot(TABLE, 1, None, {}, None, 1)], join=None))
    rt.post(["e", *_events([records[4]], {None})[2:]])  # 2..4 were lost on the channel
    await _settle()
    assert viewer.seqs() == [2, 3, 4, 5]
    rt.stop()


async def test_an_owner_change_joins_again_from_the_cursor_and_fails_unanswered_requests():
    rejoins: list[Join] = []
    store = MemoryStore(keep_states=True)
    rt = Relayed(TABLE, store.events_since, lambda table, join: rejoins.append(join), lambda c, b: None)
    rt.start()
    viewer = Captured(1)
    rt.watch(viewer.conn, _join(1))
    rt.post(_out(1, 4, [frames.snapshot(TABLE, 4, None, {}, None, 1)], join=None))
    await _settle()
    rt.sent(1, 9)  # an act sent to the old owner, never answered
    rt.post(["o", "n3"])
    await _settle()
    assert [(j.since, j.re) for j in rejoins] == [(4, REJOIN)]
    errors = [m for m in viewer.messages if m["type"] == "error"]
    assert [(e["code"], e["re"]) for e in errors] == [("unavailable", 9)]
    rt.stop()


async def test_json_connections_of_different_views_never_share_a_conversion():
    """Two JSON connections, a seat and a spectator, get each event's frame
    converted from their own view (a private field only for the seat), in
    the fast path and after a gap alike."""
    store = MemoryStore(keep_states=True)
    rt = Relayed(TABLE, store.events_since, lambda table, join: None, lambda c, b: None)
    rt.start()
    seat, spectator = Captured(1, JSON), Captured(2, JSON)
    rt.watch(seat.conn, _join(1))
    rt.watch(spectator.conn, _join(2))
    rt.post(_out(1, 0, [frames.snapshot(TABLE, 0, 2, {}, None, 1)], join=2))
    rt.post(_out(2, 0, [frames.snapshot(TABLE, 0, None, {}, None, 1)], join=None))
    await _settle()
    rt.post(["e", *_events([_record(1, private_seat=2), _record(2, private_seat=2)], {2, None})[2:]])
    await _settle()
    for seq in (1, 2):
        mine = [m for m in seat.messages if m.get("seq") == seq][0]["event"]
        theirs = [m for m in spectator.messages if m.get("seq") == seq][0]["event"]
        assert mine.get("card") == "Ah" and "card" not in theirs, (seq, mine, theirs)
    rt.stop()


async def test_a_reply_held_while_joining_again_is_released_with_the_answer_and_nothing_comes_twice():
    """A reply held for its events while the server's own join is out, then the
    join's answer carrying those events and more: the reply goes out after them
    at once, and no event is delivered again (nor the cursor set back) when the
    hold time has passed and the next event arrives."""
    store = MemoryStore(keep_states=True)
    records = [_record(s) for s in range(1, 8)]
    await store.commit([Checkpoint(TABLE, {"seq": 7}, [(r.seq, pack(r)) for r in records])])
    rejoins: list[Join] = []
    rt = Relayed(TABLE, store.events_since, lambda table, join: rejoins.append(join), lambda c, b: None)
    rt.start()
    viewer = Captured(1)
    rt.watch(viewer.conn, _join(1))
    rt.post(_out(1, 1, [frames.snapshot(TABLE, 1, None, {}, None, 1)], join=None))
    rt.post(["o", "n3"])  # the owner changed: joins again from seq 1
    rt.post(_out(1, 3, [frames.ok(7)]))  # the ok follows seq 3, not delivered yet: held
    await _settle()
    assert [j.since for j in rejoins] == [1] and viewer.seqs() == []
    answer = [frames.event(TABLE, r.seq, r.event.view(None), r.ts) for r in records[1:6]]  # seq 2..6
    rt.post(_out(1, 6, answer, join=None))
    await _settle()
    assert viewer.seqs() == [2, 3, 4, 5, 6]
    assert [m["type"] for m in viewer.messages][-2:] == ["event", "ok"]  # released with the answer
    await asyncio.sleep(0.6)  # past the hold time
    rt.post(["e", *_events([records[6]], {None})[2:]])
    await _settle()
    assert viewer.seqs() == [2, 3, 4, 5, 6, 7]
    assert [m.get("re") for m in viewer.messages if m["type"] == "ok"] == [7]
    rt.stop()
