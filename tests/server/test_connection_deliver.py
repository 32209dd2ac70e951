"""A connection's ``deliver``: a step's frames for it leave as one message
through ``send_now`` when they can, wait in the queue (in order, after what
was queued before) when they cannot, and past the queue's limit the
connection is dropped as a slow consumer."""

from __future__ import annotations

import asyncio
from typing import Any

from cardhall.protocol.codec import CODECS, MSGPACK
from cardhall.server.connection import Connection
from cardhall.server.fanout import Fanout

CODEC = CODECS[MSGPACK]


def _connection(writable: list[bool], written: list[Any], limit: int = 100, batch: bool = True) -> Connection:
    async def send_raw(message: dict[str, Any]) -> None:  # the ASGI path: never reached while writable
        written.append(("asgi", message.get("bytes")))

    def send_now(payload: Any) -> bool:
        if not writable[0]:
            return False
        written.append(("now", payload))
        return True

    sent: list[int] = []
    conn = Connection(1, CODEC, send_raw, limit=limit, send_now=send_now, on_sent=sent.append,
                      on_drop=lambda c, reason: written.append(("dropped", reason)),
                      abort=lambda: written.append(("aborted", None)))
    conn.batch = batch
    return conn


def test_a_steps_frames_leave_as_one_batch_message() -> None:
    written: list[Any] = []
    conn = _connection([True], written)
    frames = [CODEC.encode({"type": "event", "seq": i}) for i in (1, 2, 3)]
    conn.deliver(frames)
    assert written == [("now", CODEC.batch(frames))]
    assert CODEC.decode(written[0][1])["frames"] == [{"type": "event", "seq": i} for i in (1, 2, 3)]
    assert conn.queued == 0


def test_without_batches_each_frame_is_its_own_message() -> None:
    written: list[Any] = []
    conn = _connection([True], written, batch=False)
    frames = [CODEC.encode({"seq": i}) for i in (1, 2)]
    conn.deliver(frames)
    assert written == [("now", frames[0]), ("now", frames[1])]


def test_frames_that_cannot_leave_wait_in_order_behind_the_queue() -> None:
    async def scenario() -> list[Any]:
        written: list[Any] = []
        writable = [False]
        conn = _connection(writable, written)
        conn.start()
        first = CODEC.encode({"seq": 1})
        conn.push(first)
        later = [CODEC.encode({"seq": 2}), CODEC.encode({"seq": 3})]
        conn.deliver(later)
        assert conn.queued == 3  # nothing written past what waits
        writable[0] = True
        conn.deliver([CODEC.encode({"seq": 4})])
        await asyncio.sleep(0)
        return written

    written = asyncio.run(scenario())
    sent = [f for kind, payload in written if kind in ("now", "asgi") for f in CODEC.decode(payload)["frames"]]
    assert [f["seq"] for f in sent] == [1, 2, 3, 4]


def test_past_the_limit_the_connection_is_dropped() -> None:
    written: list[Any] = []
    conn = _connection([False], written, limit=3)
    conn.deliver([CODEC.encode({"seq": i}) for i in range(4)])
    assert written == [("dropped", "slow_consumer"), ("aborted", None)]
    assert conn.closed and conn.queued == 0


def test_the_fanout_hands_each_connection_its_frames_in_one_call() -> None:
    from cardhall.engine.base import Event
    from cardhall.server.table.records import EventRecord

    written: list[Any] = []
    conn = _connection([True], written)
    records = [EventRecord(seq, Event({"type": "note", "n": seq}), 0.0) for seq in (1, 2)]
    fanout = Fanout("t1", lambda key: conn if key == 1 else None)
    assert fanout.publish(records, {None: [1, 2]}) == 2
    assert len(written) == 1
    assert [f["seq"] for f in CODEC.decode(written[0][1])["frames"]] == [1, 2]
