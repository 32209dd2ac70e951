"""A ``join`` without ``since`` from a connection already watching the table
(SPEC "Resuming and reconnecting"): its answer is a ``snapshot`` at ``seq`` s;
no event up to s reaches the connection after it sent the join (events of the
join's own step are inside the snapshot), and every event after s follows,
each once, in order. The re-join is sent in the same write as an action, so
the action's events and the join often share one step of the table."""

from __future__ import annotations

import asyncio
from typing import Any

from websockets.asyncio.client import connect

from cardhall.protocol.codec import CODECS, JSON

CODEC = CODECS[JSON]


def _frames(payload: Any) -> list[dict[str, Any]]:
    frame = CODEC.decode(payload, 1 << 24)
    return frame["frames"] if frame.get("type") == "batch" else [frame]


def _action(frame: dict[str, Any]) -> dict[str, Any]:
    if frame.get("turn", {}).get("continue"):
        return {"type": "continue"}
    kinds = [a["type"] for a in frame["legal"]]  # check or fold: the match lasts (never all in against the bot)
    return {"type": "check" if "check" in kinds else "fold"}


async def test_a_rejoin_without_since_gets_every_event_after_its_snapshot_and_none_before(live):
    async with connect(live.url, subprotocols=[JSON]) as ws:  # type: ignore[list-item]
        await ws.send(CODEC.encode({"type": "hello", "name": "ann", "batch": True, "id": "h"}))
        await ws.send(CODEC.encode({"type": "create_table", "game": "no_limit_holdem", "seats": 2, "bots": 1,
                                    "options": {"pause": 0, "bot_think": 0, "starting_stacks": 2000}, "id": "c"}))
        table = None
        while table is None:
            for f in _frames(await asyncio.wait_for(ws.recv(), 10)):
                if f["type"] == "table_created":
                    table = f["table"]
        await ws.send(CODEC.encode({"type": "join", "table": table, "role": "player", "id": "j"}))
        last = None  # the seq of the newest event or snapshot applied
        you = None
        rejoins = 0
        waiting: str | None = None  # the id of the re-join not answered yet
        while rejoins < 12:
            for f in _frames(await asyncio.wait_for(ws.recv(), 10)):
                if f["type"] == "snapshot":
                    assert last is None or f["seq"] >= last, (last, f["seq"])
                    if waiting is not None:
                        assert f.get("re") == waiting
                        waiting = None
                        rejoins += 1
                    last, you = f["seq"], f["you"]
                elif f["type"] == "event":
                    assert f["seq"] == last + 1, f"event {f['seq']} after {last}: a gap, a repeat or an event the snapshot holds"
                    last = f["seq"]
                elif f["type"] == "ok" or f["type"] == "error":
                    assert f["type"] == "ok" or f["code"] == "stale_turn", f
                    continue
                else:
                    continue
                turn = f.get("turn")
                if turn is not None and turn["seat"] == you and waiting is None and (turn.get("continue") or f.get("legal")):
                    waiting = f"r{rejoins}"
                    act = {"type": "act", "table": table, "action": _action(f), "turn": f["turn"]["id"], "id": f"a{rejoins}"}
                    await ws.send(CODEC.encode(act))
                    await ws.send(CODEC.encode({"type": "join", "table": table, "role": "player", "id": waiting}))
        assert rejoins == 12


async def test_the_answer_to_a_join_without_an_id_has_re_null(live):
    async with connect(live.url, subprotocols=[JSON]) as ws:  # type: ignore[list-item]
        await ws.send(CODEC.encode({"type": "hello", "name": "ann", "id": "h"}))
        await ws.send(CODEC.encode({"type": "create_table", "game": "loco_poker", "seats": 3, "bots": 1, "id": "c"}))
        table = None
        while table is None:
            for f in _frames(await asyncio.wait_for(ws.recv(), 10)):
                if f["type"] == "table_created":
                    table = f["table"]
        for join in ({"type": "join", "table": table, "role": "spectator"},
                     {"type": "join", "table": table, "role": "spectator", "id": None}):
            await ws.send(CODEC.encode(join))
            while True:
                frame = next((f for f in _frames(await asyncio.wait_for(ws.recv(), 10)) if f["type"] == "snapshot"), None)
                if frame is not None:
                    break
            assert "re" in frame and frame["re"] is None, frame  # a reply, not a snapshot sent on its own
