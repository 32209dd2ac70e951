"""The Python client library over a real server on loopback: both
subprotocols, and automatic reconnect that resumes the event stream without
a gap after the server drops the socket or closes it with a code that asks
the client to resume (1001, 4012, a code the client does not know)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from websockets.asyncio.server import ServerConnection, serve

from cardhall.clients.bots import BotPlayer
from cardhall.clients.client import Client
from cardhall.protocol.codec import JSON, MSGPACK
from cardhall.protocol.frames import PROTOCOL_MINOR, PROTOCOL_VERSION
from cardhall.server.connection import CLOSE_GOING_AWAY, CLOSE_RESUBSCRIBE, CLOSE_SLOW_CONSUMER
from tests.conftest import until
from tests.server.conftest import running_server


@pytest.fixture
async def live():
    async with running_server() as srv:
        yield srv


def _server_side(live, client):
    return [c for c in list(live.hall.connections) if c.player is not None and c.player.id == client.player]


@pytest.mark.parametrize("codec", ["msgpack", "json"])
async def test_reconnect_after_the_server_drops_resumes_gap_free(live, codec):
    ann = await Client(live.url, codec=codec, record=True, reconnect=True).connect()
    await ann.hello("ann")
    table = await ann.create_table("loco_poker", seats=2, bots=1,
                                   options={"pause": 0, "bot_think": 0.03, "points_to_win": 6})
    player = BotPlayer(ann, table, "random", bot_seed=b"r")
    playing = asyncio.get_running_loop().create_task(player.play(timeout=60))
    drops = 0
    for _ in range(3):  # drop the socket three times mid-match, from the server's side
        held = ann.seqs.get(table, 0)  # mid-match: once the client has received a few more events
        await until(lambda held=held: ann.seqs.get(table, 0) >= held + 3 or playing.done(), 60, "events of the match")
        if playing.done():
            break
        for conn in _server_side(live, ann):
            conn.drop(CLOSE_SLOW_CONSUMER, "test drop")
            drops += 1
        await until(lambda drops=drops: ann.reconnects >= drops or playing.done(), 60, "the client reconnects")
    results = await playing
    assert drops >= 1 and ann.reconnects >= 1
    assert results and results[0]["winners"]
    seqs = [f["seq"] for f in ann.frames if f.get("type") in ("event", "snapshot") and f.get("table") == table
            and "re" not in f]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "the events resumed with a gap or a repeat"
    assert ann.gaps == 0
    assert any(f["type"] == "event" and f["event"] == {"type": "presence", "seat": player.seat, "connected": False}
               for f in ann.frames)  # the table saw the drop, and the client caught up on it
    await ann.close()


@pytest.mark.parametrize("code", [CLOSE_RESUBSCRIBE, CLOSE_GOING_AWAY, 4321], ids=["4012", "1001", "unknown"])
async def test_a_close_asking_to_resume_makes_the_client_join_again_with_since(live, code):
    """The server closes the websocket with 4012 (a node lost track of a table: protocol 1.2), 1001,
    or a code this client does not know (SPEC "Versioning": treated like 1001): ``Client(reconnect=True)``
    reconnects, says ``hello`` with its token, joins its table again with ``since`` = the last ``seq``
    it held and gets the missed events (``ok``, not a fresh snapshot); its open turn is still its own,
    and the event stream goes on gap-free. Its own close() later does not reconnect."""
    ann = await Client(live.url, codec="json", record=True, reconnect=True).connect()
    await ann.hello("ann")
    table = await ann.create_table("no_limit_holdem", seats=2, bots=1,
                                   options={"pause": 0, "bot_think": 0, "starting_stacks": 200})
    snapshot = await ann.join(table, role="player")
    me = snapshot["you"]
    while True:  # until ann has a decision to take (a solo table's `continue` turns are taken on the way)
        frame = await ann.next_event(table, where=lambda f: (f.get("turn") or {}).get("seat") == me)
        if not frame["turn"].get("continue"):
            break
        await ann.act(table, {"type": "continue"}, turn=frame["turn"]["id"])
    turn, legal = frame["turn"], {a["type"] for a in frame["legal"]}
    held, first = ann.seqs[table], ann.closed
    assert first is not None and ann.close_codes == []
    for conn in _server_side(live, ann):
        conn.close(code, "test close")
    assert (await asyncio.wait_for(first, 10))[0] == code
    await ann.wait_ready(10)  # the reconnect has said hello and joined again
    assert ann.reconnects == 1 and ann.close_codes == [code]
    hello, join = [m for m in ann.sent if m["type"] in ("hello", "join")][-2:]
    assert hello["type"] == "hello" and hello["token"] == ann.token
    assert (join["type"], join["table"], join["role"], join["since"]) == ("join", table, "player", held)
    answer = next(f for f in ann.frames if f.get("re") == join["id"])
    assert answer["type"] == "ok" and answer["seq"] >= held  # the missed events, not a fresh snapshot
    await ann.act(table, {"type": "check" if "check" in legal else "fold"}, turn=turn["id"])
    stream = [f for f in ann.frames if f.get("table") == table and "re" not in f]
    assert all(f["type"] == "event" for f in stream), "a snapshot nobody asked for"
    seqs = [snapshot["seq"]] + [f["seq"] for f in stream]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "the events resumed with a gap or a repeat"
    assert seqs[-1] > answer["seq"] and ann.gaps == 0  # the action's events came after the resume
    await ann.close()
    assert ann.reconnects == 1 and len(ann.close_codes) == 2  # no reconnect after its own close()
    with pytest.raises(ConnectionError):
        await ann.ping()


async def test_events_iterator_ends_on_close_and_requests_fail_after(live):
    c = await Client(live.url, codec="json").connect()
    await c.hello("ann")
    assert (await c.ping())["type"] == "pong"

    started = asyncio.Event()

    async def read_all():
        started.set()  # from here it runs, without yielding, until the iterator waits for a frame
        return [f async for f in c.events()]

    reading = asyncio.get_running_loop().create_task(read_all())
    await started.wait()  # the iterator is waiting when the client closes
    await c.close()
    assert await asyncio.wait_for(reading, 5) == []
    with pytest.raises(ConnectionError):
        await c.ping()


async def test_no_reconnect_without_asking(live):
    c = await Client(live.url).connect()
    await c.hello("ann")
    for conn in _server_side(live, c):
        conn.drop(CLOSE_SLOW_CONSUMER, "test drop")
    with pytest.raises(ConnectionError):
        await c.next_frame(5)
    assert c.reconnects == 0
    await c.close()


async def test_client_games_is_the_catalogue(live, frame_validator):
    ann = await Client(live.url, record=True).connect()
    await ann.hello("ann")
    before = frame_validator.checked["catalogue"]
    catalogue = await ann.games()
    assert frame_validator.checked["catalogue"] == before + 1
    async with httpx.AsyncClient(base_url=live.http) as http:
        assert catalogue == (await http.get("/api/games")).json()
    await ann.close()


async def test_a_late_reply_to_a_request_given_up_on_is_dropped():
    """A request whose ``timeout`` passed raises TimeoutError; its reply, arriving later, is not put in the
    inbox as a frame nobody asked for, while an error answering no request of this client still is."""
    release = asyncio.Event()

    async def handler(ws: ServerConnection) -> None:
        async for raw in ws:
            rid = json.loads(raw)["id"]
            await release.wait()  # the answer comes once the client has given up
            await ws.send(json.dumps({"type": "ok", "re": rid}))
            await ws.send(json.dumps({"type": "error", "code": "bad_request", "message": "no such request", "re": 999}))

    server = await serve(handler, "127.0.0.1", 0, subprotocols=[JSON, MSGPACK])  # type: ignore[list-item]
    port = next(iter(server.sockets)).getsockname()[1]
    client = await Client(f"ws://127.0.0.1:{port}/ws", codec="json").connect()
    try:
        with pytest.raises(TimeoutError):
            await client.request({"type": "ping"}, timeout=0.05)
        release.set()
        frame = await client.next_frame(timeout=5)
        assert frame["type"] == "error" and frame["re"] == 999, frame  # the late ok came first and was dropped
        assert client.inbox.empty()
    finally:
        await client.close()
        server.close()
        await server.wait_closed()


async def test_a_resume_keeps_asking_while_the_table_is_unavailable():
    """A reconnect's ``join`` answered ``unavailable`` (a store failover stalls the table: it may last many
    seconds) is asked again, backing off, within ``reconnect_for``: here for 6.5 s, longer than twenty tries
    a quarter of a second apart, and the table stays joined, with no error left in the inbox. Another
    table, available, is joined again meanwhile, not after it."""
    loop = asyncio.get_running_loop()
    connections: list[ServerConnection] = []
    refused: list[float] = []  # when each resuming join of t_1 was answered unavailable
    other: list[int] = []  # how many refusals t_1 had got when t_2's resuming join came

    async def handler(ws: ServerConnection) -> None:
        connections.append(ws)
        async for raw in ws:
            msg = json.loads(raw)
            if msg["type"] == "hello":
                await ws.send(json.dumps({"type": "welcome", "re": msg["id"], "player": "p_0123456789abcdef",
                                          "name": "ann", "token": "k" * 32, "protocol": PROTOCOL_VERSION,
                                          "minor": PROTOCOL_MINOR, "group": False, "compact": False}))
            elif len(connections) == 1:  # the first joins
                await ws.send(json.dumps({"type": "ok", "re": msg["id"]}))
            elif msg["table"] == "t_2":
                other.append(len(refused))
                await ws.send(json.dumps({"type": "ok", "re": msg["id"]}))
            elif not refused or loop.time() - refused[0] < 6.5:
                refused.append(loop.time())
                await ws.send(json.dumps({"type": "error", "code": "unavailable", "re": msg["id"],
                                          "message": "the table cannot save its state right now; retry shortly"}))
            else:
                await ws.send(json.dumps({"type": "ok", "re": msg["id"]}))

    server = await serve(handler, "127.0.0.1", 0, subprotocols=[JSON, MSGPACK])  # type: ignore[list-item]
    port = next(iter(server.sockets)).getsockname()[1]
    client = await Client(f"ws://127.0.0.1:{port}/ws", codec="json", reconnect=True, reconnect_for=30.0).connect()
    try:
        await client.hello("ann")
        await client.join("t_1", "spectator")
        await client.join("t_2", "spectator")
        await connections[0].close(CLOSE_RESUBSCRIBE, "resubscribe")
        await until(lambda: client.reconnects == 1, timeout=30, what="the reconnect")
        assert refused[-1] - refused[0] >= 5.5 and len(refused) >= 4, refused  # asked again, backing off
        assert other and other[0] < len(refused), (other, refused)  # t_2 did not wait for t_1
        assert client.joined == {"t_1": "spectator", "t_2": "spectator"} and client.inbox.empty()
    finally:
        await client.close()
        server.close()
        await server.wait_closed()
