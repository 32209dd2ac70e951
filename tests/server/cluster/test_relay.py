"""The receiving side of a relayed table (``server/cluster/relay.py``): real
connections (their frames captured from the ASGI send they write to), the
owner's real publication and reply messages.

What must hold on every connection: each ``seq`` once and in order, in the
view the *owner* gave it (a change of it takes effect before any later
event), replies in the order the owner sent them, and whenever an event is
missing or the owner no longer counts the connection, a join again with
``since`` = the last ``seq`` delivered (or, past the resync time, a close
with 4012): never silence."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack

from cardhall.engine.base import Event
from cardhall.protocol import frames
from cardhall.protocol.codec import CODECS, JSON, MSGPACK
from cardhall.server.cluster import wire
from cardhall.server.cluster.peers import GONE, publication
from cardhall.server.cluster.relay import Relayed
from cardhall.server.connection import CLOSE_RESUBSCRIBE, Connection
from cardhall.server.fanout import Fanout
from cardhall.server.table.inputs import REJOIN, Join
from cardhall.server.table.records import EventRecord

TABLE = "t_1"
NODE = "n2"


class Captured:
    """A real :class:`Connection` whose websocket messages are kept (decoded)."""

    def __init__(self, conn_id: int, codec: str = MSGPACK) -> None:
        self.messages: list[dict[str, Any]] = []
        self.closed: list[int] = []
        self.codec = CODECS[codec]

        async def send_raw(message: dict[str, Any]) -> None:
            if message["type"] == "websocket.send":
                payload = message.get("bytes") if message.get("bytes") is not None else message.get("text")
                self.messages.append(self.codec.decode(payload, 1 << 20))
            elif message["type"] == "websocket.close":
                self.closed.append(message["code"])
        self.conn = Connection(conn_id, self.codec, send_raw, limit=1000)
        self.conn.start()

    def seqs(self) -> list[int]:
        return [m["seq"] for m in self.messages if m["type"] == "event"]

    def event(self, seq: int) -> dict[str, Any]:
        return [m for m in self.messages if m.get("type") == "event" and m["seq"] == seq][0]["event"]


def _record(seq: int, private_seat: int | None = None) -> EventRecord:
    private = {private_seat: {"card": "Ah"}} if private_seat is not None else None
    return EventRecord(seq, Event({"type": "note", "n": seq}, private), 1.0)


def _events(rt: Relayed, records: list[EventRecord], viewers: set[int | None], changes: list[Any] = ()) -> None:
    """The owner's ``e`` message of ``records``, handled as the router hands it over."""
    seq = records[-1].seq if records else 0
    blob = publication(Fanout(TABLE, lambda key: None), records, viewers, seq, list(changes))
    assert blob is not None
    message = wire.unpack(blob)
    rt.on_events(message[2], message[3], message[4:])


def _out(rt: Relayed, conn: int, after: int, sent: list[dict[str, Any]], join: int | None | str = "no",
         member: bool | None = None) -> None:
    blobs = [msgpack.packb(f) for f in sent]
    rt.on_out(conn, after, blobs, True if join != "no" else member, None if join == "no" else [join])


async def _settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


def _join(conn: int, since: int | None = None) -> Join:
    return Join(wire.remote_key(NODE, conn), "p", "P", 1, "player", None, None, since, None)


def _relay(rejoins: list[Join] | None = None, resync_within: float = 10.0,
           direct: list[tuple[int, list[bytes]]] | None = None) -> Relayed:
    out = rejoins if rejoins is not None else []
    straight = direct if direct is not None else []
    return Relayed(TABLE, NODE, lambda table, join: out.append(join), lambda c, b: straight.append((c, b)),
                   resync_within)


async def test_each_connection_gets_its_view_in_order_and_replies_after_their_events():
    rt = _relay()
    seat, spectator = Captured(1), Captured(2, JSON)
    rt.watch(seat.conn, _join(1))
    rt.watch(spectator.conn, _join(2))
    _events(rt, [_record(1)], {2, None})  # before any join answer: the answers carry it
    _out(rt, 1, 1, [frames.snapshot(TABLE, 1, 2, {}, None, 1)], join=2)
    _out(rt, 2, 0, [frames.snapshot(TABLE, 0, None, {}, None, 1), frames.event(TABLE, 1, {"type": "note"}, 1.0)],
         join=None)
    _events(rt, [_record(2, private_seat=2), _record(3)], {2, None})
    _out(rt, 1, 3, [frames.ok(7)])
    await _settle()
    assert seat.seqs() == [2, 3] and spectator.seqs() == [1, 2, 3]
    assert [m["type"] for m in seat.messages] == ["snapshot", "event", "event", "ok"]
    assert seat.event(2).get("card") == "Ah" and "card" not in spectator.event(2)  # each its own view


async def test_a_view_changed_by_the_owner_applies_before_the_next_event():
    """The scenario of a player who left through another node: the owner
    turns this node's connection of seat 2 into a spectator; when the next
    occupant of seat 2 gets a private card, this connection gets the
    spectators' frame, whatever this node learnt at its join."""
    rt = _relay()
    old, new = Captured(1), Captured(2)
    rt.watch(old.conn, _join(1))
    _out(rt, 1, 0, [frames.snapshot(TABLE, 0, 2, {}, None, 1)], join=2)
    _events(rt, [_record(1, private_seat=2)], {2})
    await _settle()
    assert old.event(1).get("card") == "Ah"  # its own card while it held seat 2
    # seat 2 freed: the owner says connection 1 is a spectator now, with the ``left`` event
    _events(rt, [_record(2)], {None}, changes=[NODE, 1, None])
    rt.watch(new.conn, _join(2))
    _out(rt, 2, 2, [frames.snapshot(TABLE, 2, 2, {}, None, 1)], join=2)
    _events(rt, [_record(3, private_seat=2)], {2, None})
    await _settle()
    assert old.seqs() == [1, 2, 3] and new.seqs() == [3]
    assert "card" not in old.event(3) and new.event(3).get("card") == "Ah"


async def test_a_missing_event_resumes_from_the_cursor_and_nothing_comes_twice():
    rejoins: list[Join] = []
    rt = _relay(rejoins)
    viewer = Captured(1)
    rt.watch(viewer.conn, _join(1))
    _out(rt, 1, 1, [frames.snapshot(TABLE, 1, None, {}, None, 1)], join=None)
    _events(rt, [_record(5)], {None})  # 2..4 were lost on the way
    assert [(j.re, j.since) for j in rejoins] == [(REJOIN, 1)]
    _events(rt, [_record(6)], {None})  # while it waits: the answer carries it
    answer = [frames.event(TABLE, s, {"type": "note", "n": s}, 1.0) for s in range(1, 7)] + [frames.ok(REJOIN, 6)]
    _out(rt, 1, 6, answer, join=None)  # an answer repeating seq 1: kept out
    _events(rt, [_record(6), _record(7)], {None})
    await _settle()
    assert viewer.seqs() == [2, 3, 4, 5, 6, 7]
    assert all(m.get("re") != REJOIN for m in viewer.messages)  # the server's own join is not answered to it


async def test_a_connection_the_owner_dropped_resumes_one_that_left_does_not():
    rejoins: list[Join] = []
    direct: list[tuple[int, list[bytes]]] = []
    rt = _relay(rejoins, direct=direct)
    stays, leaves = Captured(1), Captured(2)
    for c in (stays, leaves):
        rt.watch(c.conn, _join(c.conn.id))
        _out(rt, c.conn.id, 3, [frames.snapshot(TABLE, 3, None, {}, None, 1)], join=None)
    rt.sent(2, 8, leaving=True)
    _events(rt, [], set(), changes=[NODE, 1, GONE, NODE, 2, GONE, "n9", 1, GONE])
    assert [(j.sub, j.since) for j in rejoins] == [(wire.remote_key(NODE, 1), 3)]
    assert 2 not in rt.watches and rt.watches[1].waiting
    _out(rt, 2, 3, [frames.ok(8)], member=False)  # the leave's answer: no longer kept in order
    assert [(c, [msgpack.unpackb(b)["type"] for b in blobs]) for c, blobs in direct] == [(2, ["ok"])]


async def test_an_owner_change_joins_again_from_the_cursor_and_fails_unanswered_requests():
    rejoins: list[Join] = []
    rt = _relay(rejoins)
    viewer = Captured(1)
    rt.watch(viewer.conn, _join(1))
    _out(rt, 1, 4, [frames.snapshot(TABLE, 4, None, {}, None, 1)], join=None)
    rt.sent(1, 9)  # an act sent to the old owner, never answered
    rt.on_owner_changed()
    await _settle()
    assert [(j.since, j.re) for j in rejoins] == [(4, REJOIN)]
    errors = [m for m in viewer.messages if m["type"] == "error"]
    assert [(e["code"], e["re"]) for e in errors] == [("unavailable", 9)]


async def test_behind_the_stored_events_for_two_checks_resumes():
    rejoins: list[Join] = []
    rt = _relay(rejoins)
    viewer = Captured(1)
    rt.watch(viewer.conn, _join(1))
    _out(rt, 1, 4, [frames.snapshot(TABLE, 4, None, {}, None, 1)], join=None)
    rt.behind(4)
    rt.behind(6)  # first time behind: the events may be on their way
    assert rejoins == []
    _events(rt, [_record(5)], {None})
    rt.behind(6)  # progress since: still waiting
    assert rejoins == []
    rt.behind(6)  # no progress for a whole check: lost
    assert [(j.re, j.since) for j in rejoins] == [(REJOIN, 5)]


async def test_a_resume_never_answered_closes_the_connection_with_4012():
    rejoins: list[Join] = []
    rt = _relay(rejoins, resync_within=0.0)
    rt.resync_within = 0.05  # the test's own bound: the node never goes below RESYNC_WITHIN
    viewer = Captured(1)
    rt.watch(viewer.conn, _join(1))
    _out(rt, 1, 2, [frames.snapshot(TABLE, 2, None, {}, None, 1)], join=None)
    rt.on_owner_changed()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30.0
    while not viewer.closed and loop.time() < deadline:
        rt.tick()
        await asyncio.sleep(0.01)
    assert viewer.closed == [CLOSE_RESUBSCRIBE]
    assert 1 not in rt.watches


async def test_json_connections_of_different_views_never_share_a_conversion():
    rt = _relay()
    seat, spectator = Captured(1, JSON), Captured(2, JSON)
    rt.watch(seat.conn, _join(1))
    rt.watch(spectator.conn, _join(2))
    _out(rt, 1, 0, [frames.snapshot(TABLE, 0, 2, {}, None, 1)], join=2)
    _out(rt, 2, 0, [frames.snapshot(TABLE, 0, None, {}, None, 1)], join=None)
    _events(rt, [_record(1, private_seat=2), _record(2, private_seat=2)], {2, None})
    await _settle()
    for seq in (1, 2):
        assert seat.event(seq).get("card") == "Ah" and "card" not in spectator.event(seq)


async def test_a_request_answered_unavailable_gets_no_second_answer():
    """An ``act`` unanswered past the bound gets ``unavailable``; the owner's
    own answer to it, when it comes later (maybe twice: a publish sent again
    after a Redis timeout), is not passed on; a later request is answered."""
    rt = _relay()
    viewer = Captured(1)
    rt.watch(viewer.conn, _join(1))
    _out(rt, 1, 2, [frames.snapshot(TABLE, 2, None, {}, None, 1)], join=None)
    rt.sent(1, 10)
    rt.fail_pending(older_than=None)
    for _ in range(2):
        _out(rt, 1, 2, [frames.error("unavailable", "the table moved to another node; retry", re=10)])
    rt.sent(1, 11)
    _out(rt, 1, 2, [frames.ok(11)])
    await _settle()
    answers = [(m["type"], m.get("code"), m["re"]) for m in viewer.messages if m["type"] in ("ok", "error")]
    assert answers == [("error", "unavailable", 10), ("ok", None, 11)]


async def test_not_joined_from_the_owner_resumes_and_sends_the_request_again():
    """The owner answers ``not_joined`` to a connection this node relays (it
    counted it gone, or the request overtook its join at a new owner): the
    client does not see that answer; the connection resumes from its cursor
    and the request waits to follow the resume."""
    rejoins: list[Join] = []
    rt = _relay(rejoins)
    viewer = Captured(1)
    rt.watch(viewer.conn, _join(1))
    _out(rt, 1, 5, [frames.snapshot(TABLE, 5, 2, {}, None, 1)], join=2)
    act = ("act", 12)
    rt.sent(1, 12, request=act)
    _out(rt, 1, 5, [frames.error("not_joined", "join table t_1 first", re=12)])
    await _settle()
    assert [m["type"] for m in viewer.messages] == ["snapshot"]
    assert [(j.re, j.since) for j in rejoins] == [(REJOIN, 5)]
    assert rt.watches[1].held == [act] and rt.watches[1].waiting


async def test_a_connection_that_asked_for_groups_gets_the_owners_events_regrouped():
    """The owner renders one ``event`` frame per event for other nodes; this
    node gives a connection that said ``hello`` with ``group`` (1.7) each
    publication as ``events`` frames, in its view, join answers included."""
    rt = _relay()
    grouped, plain = Captured(1, JSON), Captured(2)
    grouped.conn.group = True
    rt.watch(grouped.conn, _join(1))
    rt.watch(plain.conn, _join(2))
    _out(rt, 1, 1, [frames.snapshot(TABLE, 0, 2, {}, None, 1), frames.event(TABLE, 1, {"type": "note"}, 1.0)],
         join=2)
    _out(rt, 2, 1, [frames.snapshot(TABLE, 1, None, {}, None, 1)], join=None)
    _events(rt, [_record(2, private_seat=2), _record(3)], {2, None})
    _out(rt, 1, 3, [frames.ok(7)])
    await _settle()
    assert [m["type"] for m in grouped.messages] == ["snapshot", "events", "events", "ok"]
    first, step = grouped.messages[1], grouped.messages[2]
    assert (first["seq"], len(first["events"])) == (1, 1)
    assert (step["seq"], step["ts"], len(step["events"])) == (2, 1.0, 2)
    assert step["events"][0]["event"].get("card") == "Ah" and "seq" not in step["events"][0]  # its own view
    assert plain.seqs() == [2, 3] and "card" not in plain.event(2)  # the other connection: v1 frames
