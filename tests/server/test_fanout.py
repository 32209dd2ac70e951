"""The fan-out: each event encoded once per distinct view and codec, legal
actions only to the seat to act, every subscriber flushed once per publish."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardhall.engine.base import Event
from cardhall.protocol.codec import CODECS, JSON, MSGPACK, Codec
from cardhall.protocol.compact import Layouts, expand
from cardhall.server.fanout import Fanout
from cardhall.server.table.records import EventRecord


class Recorder:
    """A subscriber's outgoing side as the fan-out sees it: frames pushed, flushes."""

    def __init__(self, codec: str, batch: bool = False, group: bool = False, compact: Layouts | None = None) -> None:
        self.codec: Codec = CODECS[codec]
        self.batch = batch
        self.group = group or compact is not None
        self.compact = compact
        self.tables: set[str] = set()
        self.payloads: list[Any] = []
        self.messages: list[Any] = []  # the shared batch each deliver was handed
        self.flushes = 0

    def push(self, payload: Any) -> None:
        self.payloads.append(payload)

    def send(self, message: Mapping[str, Any]) -> None:
        self.push(self.codec.encode(dict(message)))

    def flush(self) -> None:
        self.flushes += 1

    def deliver(self, payloads: list[Any], message: Any = None) -> None:
        self.payloads += payloads
        self.messages.append(message)
        self.flush()

    def frames(self) -> list[dict[str, Any]]:
        """What it was sent, decoded; a compact array (1.8) read as the ``events`` frame it stands for."""
        out = []
        for payload in self.payloads:
            value = self.codec.load(payload, 1 << 20)
            out.append(expand(value, self.compact.entries()) if self.compact and isinstance(value, list) else value)
        return out


def _records() -> list[EventRecord]:
    deal = EventRecord(1, Event({"type": "hole_cards", "seat": 1}, {1: {"cards": ["Ah", "Kd"]}}), 10.0)
    turn = EventRecord(2, Event({"type": "awaiting"}), 11.0, {"seat": 2, "id": 2, "clock": 30.0, "bank": 60.0},
                       legal_seat=2, legal=[{"type": "check"}])
    return [deal, turn]


def test_each_event_is_encoded_once_per_distinct_view_and_codec():
    peers = {key: Recorder(codec) for key, codec in
             {"s1": MSGPACK, "s2": MSGPACK, "s3": JSON, "p1": MSGPACK, "p2": MSGPACK, "gone": MSGPACK}.items()}
    fanout = Fanout("t_1", lambda key: None if key == "gone" else peers[key])
    groups = {None: {"s1": None, "s2": None, "s3": None}, 1: {"p1": None}, 2: {"p2": None, "gone": None}}
    sent = fanout.publish(_records(), groups, skip={"s2"})
    assert sent == 8 and peers["s2"].payloads == [] and peers["gone"].payloads == []
    s1, s3, p1, p2 = (peers[k] for k in ("s1", "s3", "p1", "p2"))
    assert all(p.flushes == 1 for p in (s1, s3, p1, p2))
    # the deal: seat 1 has its own bytes, seat 2 shares the spectators'; the turn: seat 2 its own
    assert p2.payloads[0] is s1.payloads[0] and p1.payloads[0] is not s1.payloads[0]
    assert p1.payloads[1] is s1.payloads[1] and p2.payloads[1] is not s1.payloads[1]
    assert s3.payloads[0] is not s1.payloads[0]  # another codec
    assert p1.frames()[0]["event"] == {"type": "hole_cards", "seat": 1, "cards": ["Ah", "Kd"]}
    assert s1.frames()[0]["event"] == {"type": "hole_cards", "seat": 1}
    assert [("legal" in f) for f in p2.frames()] == [False, True] and p2.frames()[1]["legal"] == [{"type": "check"}]
    assert not any("legal" in f for p in (s1, s3, p1) for f in p.frames())
    assert s3.frames()[1] == {"type": "event", "table": "t_1", "seq": 2, "event": {"type": "awaiting"}, "ts": 11.0,
                              "turn": {"seat": 2, "id": 2, "clock": 30.0, "bank": 60.0}}


def test_a_replay_carries_legal_actions_only_with_the_open_turn():
    fanout = Fanout("t_1", lambda key: None)
    peer = Recorder(JSON)
    fanout.replay(peer, 2, _records(), current_turn=2)
    fanout.replay(peer, 2, _records(), current_turn=7)
    assert [("legal" in f) for f in peer.frames()] == [False, True, False, False]


def test_a_step_for_grouping_clients_is_one_events_frame_per_view_shared_by_those_who_see_it():
    peers = {"s1": Recorder(JSON, True, True), "s2": Recorder(JSON, True, True), "p1": Recorder(JSON, True, True),
             "p2": Recorder(JSON, True, True), "v1": Recorder(JSON, True, False)}
    fanout = Fanout("t_1", peers.get)
    step = [EventRecord(5, Event({"type": "bet", "seat": 1}), 20.0),
            EventRecord(6, Event({"type": "awaiting"}), 20.0, {"seat": 2, "id": 6}, legal_seat=2,
                        legal=[{"type": "call"}])]
    groups = {None: {"s1": None, "s2": None, "v1": None}, 1: {"p1": None}, 2: {"p2": None}}
    fanout.publish(step, groups)
    s1, s2, p1, p2, v1 = (peers[k] for k in ("s1", "s2", "p1", "p2", "v1"))
    # one frame each: the spectators and seat 1 (nothing of its own here) share the bytes; seat 2 has its legal
    assert s1.payloads == s2.payloads == p1.payloads and s1.payloads[0] is p1.payloads[0]
    (frame,) = s1.frames()
    assert frame == {"type": "events", "table": "t_1", "seq": 5, "ts": 20.0,
                     "events": [{"event": {"type": "bet", "seat": 1}}, {"event": {"type": "awaiting"},
                                                                        "turn": {"seat": 2, "id": 6}}]}
    (own,) = p2.frames()
    assert own["events"][1]["legal"] == [{"type": "call"}] and own["events"][0] == frame["events"][0]
    # a client without grouping gets the v1 frames, batched once for everyone who gets them
    assert [f["type"] for f in v1.frames()] == ["event", "event"] and v1.messages[0] is not None


LAYOUTS = Layouts([(None, "awaiting", []), ("g", "bet", ["seat"])])


def test_a_step_for_compact_clients_is_one_array_per_view_under_the_tables_game():
    peers = {"s1": Recorder(MSGPACK, True, compact=LAYOUTS), "s2": Recorder(MSGPACK, True, compact=LAYOUTS),
             "p2": Recorder(MSGPACK, True, compact=LAYOUTS), "g1": Recorder(MSGPACK, True, True)}
    fanout = Fanout("t_1", peers.get, "g")
    step = [EventRecord(5, Event({"type": "bet", "seat": 1}), 20.0),
            EventRecord(6, Event({"type": "awaiting"}), 20.0, {"seat": 2, "id": 6, "clock": 30.0, "bank": 7.5},
                        legal_seat=2, legal=[{"type": "call"}])]
    fanout.publish(step, {None: {"s1": None, "s2": None, "g1": None}, 2: {"p2": None}})
    s1, s2, p2, g1 = (peers[k] for k in ("s1", "s2", "p2", "g1"))
    # the spectators share one array; the seat to act has its own, with its legal actions; each stands for
    # exactly the events frame a grouping client gets
    assert s1.payloads[0] is s2.payloads[0]
    assert CODECS[MSGPACK].load(s1.payloads[0]) == ["t_1", 5, 20.0, [1, 1], [[0], [2, 6, 30, 7.5]]]
    assert s1.frames() == g1.frames()
    assert p2.frames()[0]["events"][1]["legal"] == [{"type": "call"}]
    # a replay to a compact client: arrays too
    replayed = Recorder(JSON, compact=LAYOUTS)
    fanout.replay(replayed, 2, step, current_turn=6)
    assert isinstance(replayed.codec.load(replayed.payloads[0]), list) and replayed.frames() == p2.frames()


def test_events_of_two_steps_are_two_groups_and_replies_ride_with_the_events():
    peer = Recorder(MSGPACK, True, True)
    fanout = Fanout("t_1", lambda key: peer)
    steps = [EventRecord(7, Event({"type": "a"}), 1.0), EventRecord(8, Event({"type": "b"}), 2.0),
             EventRecord(9, Event({"type": "c"}), 2.0)]
    fanout.publish(steps, {None: {"k": None}}, tails={"k": [{"type": "ok", "re": 4}]})
    got = peer.frames()
    assert [(f["type"], f.get("seq"), len(f.get("events", ()))) for f in got] == [
        ("events", 7, 1), ("events", 8, 2), ("ok", None, 0)]
    assert peer.messages == [None]  # its own frames: no shared batch
