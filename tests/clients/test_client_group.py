"""The client library with ``group=True`` (protocol 1.7, SPEC "Batching and
grouping"): :func:`~cardhall.clients.client.expand_events` turns an ``events``
frame into the ``event`` frames it stands for, and a :class:`Client` says
``hello`` with ``group: true`` and hands its readers ``event`` frames only,
whether the ``events`` frames come alone or in a ``batch`` beside other frames.

The peer of the second part is a small websocket server on loopback that
sends a recorded hand grouped by step (the real server's grouped frames are
checked end to end in ``tests/server/test_grouped_events.py``)."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from cardhall.clients.client import Client, expand_events
from cardhall.protocol.codec import CODECS, JSON, MSGPACK
from cardhall.protocol.frames import PROTOCOL_MINOR, PROTOCOL_VERSION

EXAMPLE = Path(__file__).resolve().parents[2] / "protocol" / "examples" / "no_limit_holdem.json"
ENVELOPE = ("type", "table", "seq", "ts")

Frame = dict[str, Any]


def test_expand_events_gives_the_event_frames_with_their_seqs():
    frame = {"type": "events", "table": "t_1", "seq": 41, "ts": 1796285850.541534, "events": [
        {"event": {"type": "action", "seat": 2, "action": "call", "amount": 10}},
        {"event": {"type": "board", "cards": ["As", "Ad", "8d"]}},
        {"event": {"type": "turn", "seat": 1}, "turn": {"seat": 1, "id": 43, "clock": 30.0, "bank": 60.0},
         "legal": [{"type": "check"}, {"type": "bet", "min": 20, "max": 200}]},
    ]}
    before = copy.deepcopy(frame)
    assert expand_events(frame) == [
        {"type": "event", "table": "t_1", "seq": 41, "ts": 1796285850.541534,
         "event": {"type": "action", "seat": 2, "action": "call", "amount": 10}},
        {"type": "event", "table": "t_1", "seq": 42, "ts": 1796285850.541534,
         "event": {"type": "board", "cards": ["As", "Ad", "8d"]}},
        {"type": "event", "table": "t_1", "seq": 43, "ts": 1796285850.541534, "event": {"type": "turn", "seat": 1},
         "turn": {"seat": 1, "id": 43, "clock": 30.0, "bank": 60.0},
         "legal": [{"type": "check"}, {"type": "bet", "min": 20, "max": 200}]},
    ]
    assert frame == before  # the frame itself is left as it came


def test_expand_events_of_one_element_is_one_frame():
    only = {"type": "events", "table": "t_9", "seq": 1, "ts": 2.0, "events": [{"event": {"type": "paused"}}]}
    assert expand_events(only) == [{"type": "event", "table": "t_9", "seq": 1, "ts": 2.0, "event": {"type": "paused"}}]


def _recorded() -> tuple[list[Frame], list[Frame]]:
    """The player's frames of the recorded Hold'em hand from its snapshot on:
    (as recorded, with ``event`` frames; grouped by step as ``events`` frames)."""
    example = json.loads(EXAMPLE.read_text())
    frames = [e["recv"] for e in example["player"] if "recv" in e]
    frames = frames[next(i for i, f in enumerate(frames) if f["type"] == "snapshot"):]
    frames = [{k: v for k, v in f.items() if k != "re"} if f["type"] in ("snapshot", "ok") else f for f in frames]
    grouped: list[Frame] = []
    for f in frames:
        last = grouped[-1] if grouped else None
        item = {k: v for k, v in f.items() if k not in ENVELOPE}
        if f["type"] != "event":
            grouped.append(f)
        elif (last is not None and last["type"] == "events" and last["ts"] == f["ts"]
              and last["seq"] + len(last["events"]) == f["seq"]):
            last["events"].append(item)
        else:
            grouped.append({"type": "events", "table": f["table"], "seq": f["seq"], "ts": f["ts"], "events": [item]})
    # recorded ok frames answer the recording's requests: none is sent here
    return [f for f in frames if f["type"] != "ok"], [f for f in grouped if f["type"] != "ok"]


@pytest.fixture
async def grouping_peer() -> AsyncIterator[tuple[str, list[Frame]]]:
    """A loopback websocket server that answers ``hello`` with a 1.7 ``welcome``
    (``group`` as asked) and then sends the recorded hand grouped by step: the
    snapshot and the first ``events`` frame alone, the rest two by two in
    ``batch`` frames. Yields its URL and the ``hello`` messages it received."""
    hellos: list[Frame] = []
    _, grouped = _recorded()

    async def handler(ws: ServerConnection) -> None:
        codec = CODECS[ws.subprotocol or JSON]
        async for raw in ws:
            hello = codec.decode(raw, 1 << 20)
            hellos.append(hello)
            await ws.send(codec.encode({"type": "welcome", "re": hello.get("id"), "player": "p_0123456789abcdef",
                                        "name": "ann", "token": "k" * 32, "protocol": PROTOCOL_VERSION,
                                        "minor": PROTOCOL_MINOR, "group": bool(hello.get("group")), "compact": False}))
            await ws.send(codec.encode(grouped[0]))
            await ws.send(codec.encode(grouped[1]))
            for i in range(2, len(grouped), 2):
                await ws.send(codec.encode({"type": "batch", "frames": grouped[i:i + 2]}))

    server = await serve(handler, "127.0.0.1", 0, subprotocols=[JSON, MSGPACK])  # type: ignore[list-item]
    port = next(iter(server.sockets)).getsockname()[1]
    try:
        yield f"ws://127.0.0.1:{port}/ws", hellos
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("codec", ["json", "msgpack"])
async def test_a_grouping_client_reads_event_frames_only(grouping_peer, codec, frame_validator):
    url, hellos = grouping_peer
    recorded, grouped = _recorded()
    assert any(f["type"] == "events" and len(f["events"]) > 1 for f in grouped)
    client = await Client(url, codec=codec, group=True, record=True).connect()
    try:
        welcome = await client.hello("ann")
        assert welcome["group"] is True and hellos[-1]["group"] is True
        table = recorded[0]["table"]
        last = recorded[-1]["seq"]
        seen = [await client.next_frame()]  # the snapshot
        while seen[-1]["seq"] != last:
            seen.append(await client.next_event(table))
        assert seen == recorded  # event frames only, in seq order, as a client without group gets them
        assert client.frames[1:] == recorded and client.gaps == 0 and client.seqs[table] == last
        assert frame_validator.checked["events"] >= len([f for f in grouped if f["type"] == "events"])
    finally:
        await client.close()


async def test_a_client_without_group_does_not_ask_for_it(grouping_peer):
    url, hellos = grouping_peer
    client = await Client(url, codec="json").connect()
    try:
        welcome = await client.hello("ann")
        assert "group" not in hellos[-1] and welcome["group"] is False
    finally:
        await client.close()
