"""Fuzzing the live server with hypothesis-driven frames.

Two clients (``cardhall.v1.msgpack`` and ``cardhall.v1.json``) sit at a table
of their own against a bot and watch a table of six bots. Hypothesis sends
them valid messages and the same with one field replaced by anything (huge
ints, NaN, deep lists, strings of every kind, wrong types), removed or added,
or a mangled ``type`` or ``id``; and raw payloads: garbage, truncated frames,
the wrong frame kind, oversize frames, deep nesting, bare scalars. After each
frame the client sends a ``ping``. Every example checks that:

* the frame got exactly one answer: its reply, or an ``error`` with a code of
  the protocol (never ``internal``), echoing a valid ``id`` as ``re``;
* a message the schemas (``protocol/schemas/client.json``) refuse got an ``error``;
* the connection still works (the ``ping`` is answered).

The last test checks that the server never crashed, no table broke, the bot
table still plays and a new client can play, and that every frame either
client received was exactly what its viewer may see
(:func:`tests.security.leaks.check_frames`).

Default: 600 messages and 300 raw payloads per subprotocol (~20 s);
``--runslow`` runs ten times as many, ``CARDHALL_FUZZ_EXAMPLES=N`` sets N.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgpack
import orjson
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed

from cardhall.protocol.errors import CODES
from cardhall.protocol.schemas import FrameValidator
from tests.conftest import until
from tests.fuzz.conftest import EXAMPLES, ServerThread, SyncClient
from tests.fuzz.strategies import Context, messages, raw_payloads
from tests.security.leaks import TableRecord, check_frames

#: uvicorn's keepalive pings draw from the random module in the server's thread while
#: hypothesis draws in this one; hypothesis notices and warns (nothing to fix here)
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")

CODECS = ("msgpack", "json")


def _examples(request: pytest.FixtureRequest, default: int) -> int:
    if EXAMPLES:
        return EXAMPLES
    return default * 10 if request.config.getoption("--runslow") else default


class Arena:
    """The fuzzing clients, what they know, and the tables they use."""

    def __init__(self, server: ServerThread) -> None:
        self.server = server
        self.url = server.live.url  # type: ignore[union-attr]
        self.validator = FrameValidator()
        self.clients = {codec: SyncClient(self.url, codec) for codec in CODECS}
        self.ctx = {codec: Context() for codec in CODECS}
        host = self.clients["msgpack"]
        host.hello("host")
        self.bots_table = host.request({"type": "create_table", "game": "no_limit_holdem", "seats": 6,
                                        "bots": ["random"] * 6,
                                        "options": {"pause": 0, "bot_think": 0.2, "auto_rematch": True}})["table"]
        for codec, client in self.clients.items():
            if codec != "msgpack":
                client.hello(f"fuzz {codec}")
            play = client.request({"type": "create_table", "game": "loco_poker", "seats": 2, "bots": ["random"],
                                   "options": {"pause": 0, "bot_think": 0, "points_to_win": 3}})["table"]
            assert client.request({"type": "join", "table": self.bots_table})["type"] == "snapshot"
            assert client.request({"type": "join", "table": play, "role": "player", "seat": 1})["type"] == "snapshot"
            self.ctx[codec].tables += [self.bots_table, play]
        self.started_seq = self.seq(self.bots_table)

    def seq(self, table: str) -> int:
        return self.server.call(lambda live: live.hall.tables[table].machine.seq)

    def learn(self, codec: str, frames: list[dict[str, Any]]) -> None:
        """Remember new tables and turn ids (so later frames reach real ones)."""
        ctx = self.ctx[codec]
        for f in frames:
            if f.get("type") == "table_created" and len(ctx.tables) < 12:
                ctx.tables.append(f["table"])
            turn = f.get("turn")
            if isinstance(turn, dict) and isinstance(turn.get("id"), int):
                ctx.turns = (ctx.turns + [turn["id"]])[-8:]
                if f.get("legal"):
                    ctx.legal = (f["table"], turn["id"], f["legal"])


@pytest.fixture(scope="module")
def arena(server_thread: ServerThread) -> Arena:
    return Arena(server_thread)


def _valid_id(rid: Any) -> bool:
    return (isinstance(rid, int) and not isinstance(rid, bool)) or (isinstance(rid, str) and len(rid) <= 64)


def _check_errors(frames: list[dict[str, Any]]) -> None:
    for f in frames:
        if f.get("type") == "error":
            assert f.get("code") in CODES, f
            assert f["code"] != "internal", f"the server failed on a frame: {f}"


def _exchange(client: SyncClient, send: Any, rid: Any,
              raw: bool = False) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Send (``send()``), then a ping; returns (answers to the frame, every frame read).
    A frame with a valid id is answered by the frame with ``re`` = id, whenever
    it comes (a table answers after its step: maybe after the ping's pong);
    without one, by a frame with no ``re`` (an ``error`` for a bad id, sent at once).
    ``raw``: any frame before the pong answers (the payload's own id is unknown)."""
    start = len(client.frames)
    send()
    ping = client.new_id()
    client.send({"type": "ping", "id": ping})
    answers: list[dict[str, Any]] = []
    got_pong = False
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        frame = client.next_frame(15)
        if frame.get("type") == "event" or (frame.get("type") == "snapshot" and "re" not in frame
                                            and (rid is not None or raw)):
            continue  # (the answer to a join without an id is a snapshot without re)
        if frame.get("type") == "pong" and frame.get("re") == ping:
            got_pong = True
        elif rid is not None:
            if frame.get("re") == rid:
                answers.append(frame)
        elif raw:
            if not got_pong:
                answers.append(frame)
        elif frame.get("re") is None:
            answers.append(frame)
        if got_pong and (answers or raw):
            break
    assert got_pong, "the connection stopped answering"
    return answers, client.frames[start:]


@pytest.mark.parametrize("codec", CODECS)
def test_fuzzed_messages_get_one_answer_and_the_connection_goes_on(arena: Arena, codec: str,
                                                                   request: pytest.FixtureRequest) -> None:
    client = arena.clients[codec]

    @settings(max_examples=_examples(request, 600), deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        message = data.draw(messages(arena.ctx[codec]))
        try:
            payload = client.codec.encode(message)
        except (TypeError, ValueError, OverflowError, orjson.JSONEncodeError):
            assume(False)
        seen = client.codec.decode(payload, 1 << 30)  # what the server reads
        if "id" in seen and seen["id"] is None:  # the server takes an id of null as no id (lenient; SPEC: no id)
            del seen["id"]
        rid = seen.get("id") if _valid_id(seen.get("id")) else None
        answers, frames = _exchange(client, lambda: client.send_raw(payload), rid)
        _check_errors(frames)
        assert len(answers) == 1, (seen, answers)
        answer = answers[0]
        event(f"{seen.get('type')!r:.20} -> {answer['type']} {answer.get('code', '')}")
        if "id" in seen and rid is None:  # an id of the wrong type or too long
            assert answer["type"] == "error" and answer.get("re") is None, (seen, answer)
        if arena.validator.client_errors(seen):
            assert answer["type"] == "error", f"the schemas refuse {seen!r} but the server answered {answer!r}"
        arena.learn(codec, frames)

    run()


@pytest.mark.parametrize("codec", CODECS)
def test_raw_payloads_get_an_error_and_the_connection_goes_on(arena: Arena, codec: str,
                                                              request: pytest.FixtureRequest) -> None:
    client = arena.clients[codec]
    binary = codec == "msgpack"

    @settings(max_examples=_examples(request, 300), deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(payload=raw_payloads(binary))
    def run(payload: bytes | str) -> None:
        answers, frames = _exchange(client, lambda: client.send_raw(payload), None, raw=True)
        _check_errors(frames)
        assert len(answers) == 1, (payload[:80], answers)
        answer = answers[0]
        if answer["type"] == "error":
            assert answer["code"] in ("malformed", "frame_too_large", "unknown_type", "bad_request"), answer
        else:  # only a well-formed ping (deep but within the parsers' limits) is answered otherwise
            assert answer == {"type": "pong", "re": 1}, answer

    run()


def test_wrong_frame_kind_is_malformed_on_both_subprotocols(arena: Arena) -> None:
    for codec, payload in (("msgpack", '{"type":"ping","id":1}'), ("json", msgpack.packb({"type": "ping", "id": 1})),
                           ("json", b'{"type":"ping","id":1}')):
        client = arena.clients[codec]
        answers, _ = _exchange(client, lambda c=client, p=payload: c.send_raw(p), None, raw=True)
        assert [a.get("code") for a in answers] == ["malformed"], (codec, payload, answers)


def test_a_frame_over_the_websocket_limit_closes_only_that_connection(arena: Arena) -> None:
    limit = arena.server.settings.ws_max_size
    for codec in CODECS:
        victim = SyncClient(arena.url, codec)
        with pytest.raises((ConnectionClosed, OSError)):
            # the server may close while the frame is still being sent (a broken pipe, or the close seen)
            victim.send_raw(b"\x00" * (limit + 1) if codec == "msgpack" else "x" * (limit + 1))
            while True:
                victim.next_frame(10)
        # the close frame may still be on its way after a broken pipe
        asyncio.run(until(lambda v=victim: v.ws.protocol.close_rcvd is not None, 60, "the server's close frame"))
        assert victim.ws.protocol.close_rcvd.code == 1009
    for client in arena.clients.values():
        assert client.request({"type": "ping"})["type"] == "pong"


def by_identity(frames: list[dict[str, Any]]) -> list[tuple[str | None, list[dict[str, Any]]]]:
    """One connection's frames split at each ``welcome``: who it was while it read them
    (a fuzzed ``hello`` may make it another player once it left every table)."""
    parts: list[tuple[str | None, list[dict[str, Any]]]] = [(None, [])]
    for f in frames:
        if f.get("type") == "welcome":
            parts.append((f["player"], []))
        parts[-1][1].append(f)
    return parts


def test_the_server_never_crashed_nothing_leaked_and_tables_still_play(arena: Arena) -> None:
    """Runs last: the whole module's frames, checked."""
    assert arena.server.alive

    def inspect(live: Any) -> dict[str, Any]:
        metrics = live.hall.metrics
        return {
            "internal": metrics.errors_by_code.labels("internal")._value.get(),
            "broken": metrics.broken._value.get(),
            "records": {t.id: TableRecord(t) for t in live.hall.tables.values()},
        }

    asyncio.run(until(lambda: arena.seq(arena.bots_table) > arena.started_seq + 10, 60,
                      "the bot table goes on playing"))
    for client in arena.clients.values():  # read what is still on its way
        client.request({"type": "ping"})
    state = arena.server.call(inspect)
    assert state["internal"] == 0 and state["broken"] == 0
    for client in arena.clients.values():
        problems: list[str] = []
        for player, frames in by_identity(client.frames):
            problems += check_frames(frames, state["records"], player, client.codec)
        assert not problems, problems[:5]
        assert client.request({"type": "ping"})["type"] == "pong"
    # a newcomer plays a table to its first decision and acts
    newcomer = SyncClient(arena.url, "json")
    newcomer.hello("after the fuzz")
    table = newcomer.request({"type": "create_table", "game": "no_limit_holdem", "seats": 2, "bots": ["random"],
                              "options": {"pause": 0, "bot_think": 0}})["table"]
    first = len(newcomer.frames)
    newcomer.request({"type": "join", "table": table, "role": "player", "seat": 1})
    seen = first  # frames are read by request() too: every frame since the join is looked at once
    frame: dict[str, Any] = {}
    continued: set[Any] = set()
    deadline = time.monotonic() + 60
    while "legal" not in frame and time.monotonic() < deadline:
        if seen == len(newcomer.frames):
            newcomer.next_frame(10)
            continue
        frame = newcomer.frames[seen]
        seen += 1
        turn = frame.get("turn") or {}
        if "legal" not in frame and turn.get("continue") and turn.get("seat") == 1 and turn["id"] not in continued:
            continued.add(turn["id"])  # solo play: the table waits for us (G-4)
            assert newcomer.request({"type": "act", "table": table, "action": {"type": "continue"},
                                     "turn": turn["id"]})["type"] == "ok"
    assert "legal" in frame
    legal = frame["legal"][0]
    action = {"type": legal["type"]}
    if legal.get("min") is not None and legal["type"] != "call":
        action["amount"] = legal["min"]
    assert newcomer.request({"type": "act", "table": table, "action": action,
                             "turn": frame["turn"]["id"]})["type"] == "ok"
    newcomer.close()

