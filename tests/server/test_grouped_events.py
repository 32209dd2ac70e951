"""Grouped events (protocol 1.7, SPEC "Batching and grouping") from a real
server, over raw websockets on both subprotocols, with ``batch`` true and false.

A player says ``hello`` with ``group: true`` and plays a few actions of a
no-limit Hold'em table against a bot, watched by two spectators, one with
``group`` and one without, and followed by a second connection of the player
without ``group``. Then:

* a connection with ``group`` receives no ``event`` frame: its events come in
  ``events`` frames only, whose elements carry no envelope field, whose seqs
  follow its snapshot and each other without a gap;
* the ``events`` frames, expanded (element i: ``seq`` + i, the frame's
  ``table`` and ``ts``), are exactly the ``event`` frames the connection without
  ``group`` gets for the same view (both spectators; the player's two
  connections, ``legal`` included);
* every frame matches the schemas (:class:`~cardhall.protocol.schemas.FrameValidator`,
  each connection its own, ``batch`` frames and the frames in them);
* a ``join`` with ``since`` by a connection with ``group`` gets the missed
  events in ``events`` frames, then ``ok`` with the last ``seq``.

The asserts marked ``[1.7 server]`` hold only once the server sends ``events``
frames and ``welcome.group``; the others hold of any 1.6 server too.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import replace
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from cardhall.protocol import compact
from cardhall.protocol.codec import CODECS, JSON, MSGPACK
from cardhall.protocol.frames import expand_events
from cardhall.protocol.schemas import FrameValidator, SchemaViolation
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, LiveServer, RedisServer, running_server

Frame = dict[str, Any]

ENVELOPE = {"type", "table", "seq", "ts"}
#: how many game actions the player plays before it lets its turn wait
ACTIONS = 4
SUBPROTOCOL = {"json": JSON, "msgpack": MSGPACK}


class Raw:
    """One websocket to the server, read as it comes: :attr:`messages` holds
    every websocket message decoded (a ``batch`` as one), :attr:`frames` every
    frame in order (a ``batch``'s frames one by one, ``events`` frames as they
    are); each message is checked by this connection's own validator."""

    def __init__(self, url: str, codec: str, *, batch: bool, group: bool, compact: bool = False) -> None:
        self.url, self.batch, self.group, self.compact = url, batch, group, compact
        self.subprotocol = SUBPROTOCOL[codec]
        self.codec = CODECS[self.subprotocol]
        self.validator = FrameValidator()
        self.messages: list[Frame] = []
        #: the compact arrays received (1.8), as they came
        self.arrays: list[list[Any]] = []
        self.frames: list[Frame] = []
        self.welcome: Frame = {}
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Frame]] = {}
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None

    async def open(self, name: str, token: str | None = None) -> Raw:
        self._ws = await connect(self.url, subprotocols=[self.subprotocol], compression=None,  # type: ignore[list-item]
                                 max_size=2**24)
        self._reader = asyncio.get_running_loop().create_task(self._read())
        hello: Frame = {"type": "hello", "name": name, "batch": self.batch, "group": self.group}
        if self.compact:
            hello["compact"] = True
        if token is not None:
            hello["token"] = token
        self.welcome = await self.request(hello)
        return self

    async def _read(self) -> None:
        assert self._ws is not None
        async for payload in self._ws:
            message = self.codec.load(payload, 1 << 30)
            self.messages.append(message)
            try:
                self.validator.check_server(message)
            except SchemaViolation:
                pass  # recorded in validator.failures, asserted at the end
            batched = isinstance(message, dict) and message.get("type") == "batch"
            for frame in message["frames"] if batched else [message]:
                if isinstance(frame, list):  # a compact array (1.8): kept, and read as its events frame
                    self.arrays.append(frame)
                    frame = compact.expand(frame, self.welcome["layouts"])
                self.frames.append(frame)
                fut = self._pending.pop(frame.get("re"), None) if isinstance(frame.get("re"), int) else None
                if fut is not None and not fut.done():
                    fut.set_result(frame)

    async def request(self, message: Frame) -> Frame:
        """Send ``message`` with a fresh ``id``; its reply (an ``error`` fails the test)."""
        assert self._ws is not None
        assert self.validator.client_errors(message) == [], message
        rid = next(self._ids)
        fut: asyncio.Future[Frame] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        await self._ws.send(self.codec.encode({**message, "id": rid}))
        async with asyncio.timeout(30):
            reply = await fut
        assert reply["type"] != "error", reply
        return reply

    def events(self, table: str) -> list[Frame]:
        """Every event of ``table`` received so far as ``event`` frames, in
        order (the ``events`` frames expanded: element i is ``seq`` + i)."""
        out: list[Frame] = []
        for frame in self.frames:
            if frame.get("table") != table:
                continue
            if frame["type"] == "event":
                out.append(frame)
            elif frame["type"] == "events":
                out += expand_events(frame)
        return out

    def last_seq(self, table: str) -> int:
        held = [f["seq"] for f in self.frames if f.get("table") == table and f["type"] == "snapshot"]
        return max([*held, *(f["seq"] for f in self.events(table))], default=0)

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            await asyncio.wait({self._reader}, timeout=5)
            self._reader.cancel()


def _grouped_stream(conn: Raw, table: str, after: int) -> None:
    """``conn`` (with ``group``) got every event of ``table`` after ``after``
    in ``events`` frames only, gap-free, each element without an envelope field."""
    kinds = {f["type"] for f in conn.frames}
    assert "event" not in kinds, "an event frame to a connection with group"  # [1.7 server]
    groups = [f for f in conn.frames if f["type"] == "events" and f["table"] == table]
    assert groups, "no events frame"  # [1.7 server]
    expected = after + 1
    for frame in groups:
        assert frame["seq"] == expected, f"events frame at seq {frame['seq']}, {expected} expected"  # [1.7 server]
        assert frame["events"], "an empty events frame"  # [1.7 server]
        for item in frame["events"]:
            assert not ENVELOPE & set(item), f"an element with {sorted(ENVELOPE & set(item))}"  # [1.7 server]
            assert set(item) <= {"event", "turn", "legal"} and ("legal" not in item or "turn" in item)
        expected += len(frame["events"])
    if not conn.batch:
        assert not any(isinstance(m, dict) and m["type"] == "batch" for m in conn.messages)


def _same_view(grouped: Raw, plain: Raw, table: str) -> int:
    """The events of ``table`` both connections hold (after the later of their
    snapshots) are the same frames: ``grouped``'s expanded ``events`` frames are
    ``plain``'s ``event`` frames. Returns how many were compared."""
    assert "events" not in {f["type"] for f in plain.frames}, "an events frame to a connection without group"
    theirs = {f["seq"]: f for f in plain.events(table)}
    ours = {f["seq"]: f for f in grouped.events(table)}
    common = sorted(theirs.keys() & ours.keys())
    assert common, "no event both connections received"  # [1.7 server] (the expansion finds none before)
    assert common == list(range(common[0], common[-1] + 1))
    assert common[-1] == max(theirs) == max(ours)
    for seq in common:
        assert ours[seq] == theirs[seq], f"seq {seq}: grouped {ours[seq]} != plain {theirs[seq]}"  # [1.7 server]
    return len(common)


async def _play(player: Raw, table: str, seat: int) -> int:
    """Play ``seat`` (check, else fold: the match cannot end within a few
    actions; ``continue`` when the table waits for it) until :data:`ACTIONS`
    game actions are made; returns the ``seq`` of the turn it then leaves open."""
    answered: set[int] = set()
    actions = 0
    done = 0
    while True:
        await until(lambda done=done: len(player.events(table)) > done, 60, "the next event for the player")  # [1.7 server]
        frames = player.events(table)
        for frame in frames[done:]:
            assert frame["event"]["type"] != "match_ended", "the match ended while the player played"
            turn = frame.get("turn")
            if turn is None or turn["seat"] != seat or turn["id"] in answered:
                continue
            if "legal" in frame:
                if actions == ACTIONS:
                    return int(frame["seq"])
                types = {a["type"] for a in frame["legal"]}
                action = {"type": "check" if "check" in types else "fold"}
                answered.add(turn["id"])
                await player.request({"type": "act", "table": table, "action": action, "turn": turn["id"]})
                actions += 1
            elif turn.get("continue"):
                answered.add(turn["id"])
                await player.request({"type": "act", "table": table, "action": {"type": "continue"}, "turn": turn["id"]})
        done = len(frames)


def _compact_only(conn: Raw) -> None:
    """``conn`` (with ``compact``, 1.8) got its events as compact arrays
    only: no ``events`` or ``event`` frame came as a map."""
    maps = [f for m in conn.messages if isinstance(m, dict)
            for f in (m["frames"] if m["type"] == "batch" else [m]) if isinstance(f, dict)]
    assert conn.arrays, "no compact array"
    assert not {"event", "events"} & {f["type"] for f in maps}, "an event as a map to a compact connection"
    assert conn.welcome["compact"] is True and conn.welcome["group"] is True


@pytest.mark.parametrize("form", ["group", "compact"])
@pytest.mark.parametrize("batch", [True, False], ids=["batch", "no_batch"])
@pytest.mark.parametrize("codec", ["json", "msgpack"])
async def test_grouped_events_are_the_event_frames_of_one_step(live: LiveServer, codec: str, batch: bool, form: str):
    """``form`` "compact": the connections with ``group`` say ``compact`` too
    (1.8): their arrays, expanded, are the same ``events`` frames."""
    conns: list[Raw] = []

    async def raw(name: str, group: bool, token: str | None = None) -> Raw:
        conn = await Raw(live.url, codec, batch=batch, group=group, compact=group and form == "compact").open(name, token)
        conns.append(conn)
        return conn

    try:
        ann = await raw("ann", group=True)
        assert ann.welcome["minor"] >= 7 and ann.welcome["group"] is True  # [1.7 server]
        eve = await raw("eve", group=True)     # a spectator with group
        pat = await raw("pat", group=False)    # a spectator without
        assert pat.welcome["group"] is False  # [1.7 server]
        table = (await ann.request({"type": "create_table", "game": "no_limit_holdem", "seats": 2, "bots": 1,
                                    "options": {"pause": 0, "bot_think": 0, "starting_stacks": 400}}))["table"]
        eve_snap = await eve.request({"type": "join", "table": table, "role": "spectator"})
        pat_snap = await pat.request({"type": "join", "table": table, "role": "spectator"})
        ann_snap = await ann.request({"type": "join", "table": table, "role": "player", "seed": "ann"})
        seat = ann_snap["you"]
        # the player's second connection, without group, sees the same seat (legal actions included)
        twin = await raw("ann", group=False, token=ann.welcome["token"])
        twin_snap = await twin.request({"type": "join", "table": table, "role": "player"})
        assert twin_snap["you"] == seat
        open_turn = await _play(ann, table, seat)
        latest = live.hall.latest_seq(table)
        assert latest == open_turn, "the table moved on while the player's turn was open"
        for conn in (ann, eve, pat, twin):
            await until(lambda conn=conn: conn.last_seq(table) == latest, 30, "every connection at the open turn")

        for conn, snap in ((ann, ann_snap), (eve, eve_snap)):
            _grouped_stream(conn, table, snap["seq"])
        assert _same_view(eve, pat, table) >= ACTIONS
        assert _same_view(ann, twin, table) >= 1
        assert any("legal" in f for f in ann.events(table))

        # a join with since, by a connection with group: the missed events grouped, then ok
        late = await raw("lee", group=True)
        since = pat_snap["seq"]
        before = len(late.frames)
        ok = await late.request({"type": "join", "table": table, "role": "spectator", "since": since})
        assert ok["type"] == "ok" and ok["seq"] == latest
        answer = late.frames[before:late.frames.index(ok)]
        assert answer and {f["type"] for f in answer} == {"events"}  # [1.7 server]
        _grouped_stream(late, table, since)
        assert [f["seq"] for f in late.events(table)] == list(range(since + 1, latest + 1))
        assert late.events(table) == [f for f in pat.events(table) if f["seq"] > since]  # [1.7 server]

        for conn in conns:
            assert conn.validator.failures == [], conn.validator.failures[:3]
            assert conn.validator.checked["events" if conn.group else "event:no_limit_holdem:turn"] > 0  # [1.7 server]
            if conn.compact:
                _compact_only(conn)
            else:
                assert not conn.arrays and conn.welcome["compact"] is False
    finally:
        for conn in conns:
            await conn.close()


@pytest.mark.redis
async def test_a_connection_on_another_node_gets_the_owners_events_grouped(redis_server: RedisServer):
    """Two nodes on one Redis: the table is node a's, the spectators watch
    from node b, one with ``group`` and one without. Node b regroups the
    owner's event frames (``server/cluster/relay.py``): the grouped one gets
    ``events`` frames only, gap-free, standing for exactly the other's
    ``event`` frames."""
    base = replace(TEST_SETTINGS, redis_url=redis_server.url, redis_prefix="grouped", placement="local")
    conns: list[Raw] = []
    async with running_server(replace(base, node_id="a")) as a, running_server(replace(base, node_id="b")) as b:
        owner = await a.client("ann")
        try:
            table = await owner.create_table("no_limit_holdem", seats=3, bots=3,
                                             options={"pause": 0, "bot_think": 0.01, "starting_stacks": 4000})
            assert table in a.hall.tables and table not in b.hall.tables
            grouped = await Raw(b.url, "json", batch=True, group=True).open("eve")
            plain = await Raw(b.url, "msgpack", batch=True, group=False).open("pat")
            tight = await Raw(b.url, "msgpack", batch=True, group=False, compact=True).open("kit")
            conns += [grouped, plain, tight]
            snap = await grouped.request({"type": "join", "table": table, "role": "spectator"})
            tight_snap = await tight.request({"type": "join", "table": table, "role": "spectator"})
            other = await plain.request({"type": "join", "table": table, "role": "spectator"})
            target = other["seq"] + 15
            for conn in conns:
                await until(lambda conn=conn: conn.last_seq(table) >= target, 60, "15 events relayed by node b")
            _grouped_stream(grouped, table, snap["seq"])
            assert "events" not in {f["type"] for f in plain.frames}
            ours = {f["seq"]: f for f in grouped.events(table)}
            theirs = {f["seq"]: f for f in plain.events(table)}
            common = range(other["seq"] + 1, min(max(ours), max(theirs)) + 1)  # the table plays on meanwhile
            assert len(common) >= 15 and all(ours[seq] == theirs[seq] for seq in common)
            # the compact one (1.8): arrays only, each game event under its layout, standing for the same frames
            _grouped_stream(tight, table, tight_snap["seq"])
            _compact_only(tight)
            hers = {f["seq"]: f for f in tight.events(table)}
            assert all(hers[seq] == theirs[seq] for seq in common if seq in hers) and len(hers.keys() & common) >= 15
            laid = {kind for _, kind, _ in tight.welcome["layouts"]}
            written = [e[0] if isinstance(e[0], (list, dict)) else e for a in tight.arrays for e in a[3:]
                       if isinstance(e, list)] + [e for a in tight.arrays for e in a[3:] if isinstance(e, dict)]
            assert written and not any(isinstance(e, dict) and e["type"] in laid for e in written), \
                "an event with a layout written whole"
            assert all(f.validator.failures == [] for f in conns)
        finally:
            for conn in conns:
                await conn.close()
            await owner.close()


async def test_the_reference_client_reads_compact_arrays_as_event_frames(live: LiveServer):
    """``Client(compact=True)`` (1.8) expands each array under its welcome's
    layouts: it holds the same ``event`` frames as a client without it, with
    the schemas checked on every message (the arrays included)."""
    from cardhall.clients.client import Client

    owner = await live.client("ann")
    tight = Client(live.url, compact=True, record=True, validator=FrameValidator())
    plain = Client(live.url, record=True, validator=FrameValidator())
    try:
        for conn in (tight, plain):
            await conn.connect()
            await conn.hello("eve")
        assert tight.layouts and plain.layouts == []
        table = await owner.create_table("no_limit_holdem", seats=3, bots=3,
                                         options={"pause": 0, "bot_think": 0.01, "starting_stacks": 4000})
        snaps = [await conn.join(table, role="spectator") for conn in (tight, plain)]
        start = max(snap["seq"] for snap in snaps)
        for conn in (tight, plain):
            await until(lambda conn=conn: conn.seqs.get(table, 0) >= start + 20, 60, "20 events")
        assert tight.gaps == plain.gaps == 0
        ours = {f["seq"]: f for f in tight.frames if f.get("type") == "event"}
        theirs = {f["seq"]: f for f in plain.frames if f.get("type") == "event"}
        common = [seq for seq in range(start + 1, start + 21)]
        assert all(ours[seq] == theirs[seq] for seq in common)
        assert tight.checker is not None and tight.checker.checked["compact"] > 0 and tight.checker.failures == []
    finally:
        for conn in (tight, plain, owner):
            await conn.close()
