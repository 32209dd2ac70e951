"""Websocket ``permessage-deflate`` (RFC 7692, ``Settings.ws_deflate``,
``cardhall serve --ws-deflate``) on the real server over loopback.

Negotiated only when the server has it on and the client offers it, always
without context takeover either way (``server/ws_protocol.py``, ``DEFLATE``).
A table's events reach a deflate connection whole and in order through the
fast path (``send_now``), the same frames as a plain connection gets, and every
data frame to a deflate connection is compressed (RSV1) and decompresses on its
own: the raw client here reads the frames as they travelled, with a fresh zlib
stream per message. The same payload sent to several connections is compressed
once per negotiated window: a client that asked for a smaller window gets a
frame compressed within it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import string
import struct
import zlib
from dataclasses import replace
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from cardhall.protocol.codec import JSON
from cardhall.server.app import serving
from cardhall.server.store.memory import MemoryStore
from cardhall.server.ws_protocol import CardhallWebSocketProtocol
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, running_server

DEFLATE_ON = replace(TEST_SETTINGS, ws_deflate=True)
#: what the server answers a client offering websockets' default (client_max_window_bits without a value)
NEGOTIATED = ("permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
              "server_max_window_bits=12; client_max_window_bits=12")
TAIL = b"\x00\x00\xff\xff"  # RFC 7692 7.2.2: removed from each compressed message, appended to read it


class RawClient:
    """A websocket client over a bare TCP stream: the upgrade written by hand
    (``extensions``: the ``Sec-WebSocket-Extensions`` offered, None for none),
    the server's frames read as they arrive (:meth:`frame`), client frames
    sent masked and uncompressed (RFC 7692 lets a client leave RSV1 clear)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, headers: dict[str, str]) -> None:
        self.reader, self.writer, self.headers = reader, writer, headers
        self.bits = 0  # the server's negotiated window (0: no deflate)
        for param in headers.get("sec-websocket-extensions", "").split(";"):
            name, _, value = param.strip().partition("=")
            if name == "permessage-deflate":
                self.bits = 15
            elif name == "server_max_window_bits":
                self.bits = int(value)

    @classmethod
    async def open(cls, port: int, extensions: str | None) -> RawClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        key = base64.b64encode(os.urandom(16)).decode()
        offer = f"Sec-WebSocket-Extensions: {extensions}\r\n" if extensions else ""
        writer.write((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                      f"Sec-WebSocket-Protocol: {JSON}\r\n{offer}\r\n").encode())
        head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)).decode("latin-1")
        status, *lines = head.strip().split("\r\n")
        assert status.startswith("HTTP/1.1 101"), head
        headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
        return cls(reader, writer, headers)

    @property
    def local(self) -> tuple[str, int]:
        return self.writer.get_extra_info("sockname")[:2]

    def send(self, frame: dict[str, Any]) -> None:
        data = json.dumps(frame).encode()
        mask = os.urandom(4)
        assert len(data) < 126
        self.writer.write(bytes([0x81, 0x80 | len(data)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    async def frame(self) -> tuple[bool, int, bytes]:
        """The next data frame from the server: (RSV1 set, opcode, payload as sent); pings are skipped."""
        while True:
            first, second = await self.reader.readexactly(2)
            assert first & 0x80 and not second & 0x80, "a final, unmasked frame"
            length = second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", await self.reader.readexactly(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", await self.reader.readexactly(8))
            payload = await self.reader.readexactly(length)
            if first & 0x0F in (1, 2):
                return bool(first & 0x40), first & 0x0F, payload

    async def message(self) -> bytes:
        """The next message's payload: decompressed on its own (a fresh zlib stream: no context
        takeover) when deflate was negotiated, which must then have compressed it."""
        compressed, _, payload = await self.frame()
        assert compressed == bool(self.bits), (compressed, self.bits)
        if not compressed:
            return payload
        return zlib.decompressobj(wbits=-self.bits).decompress(payload + TAIL)

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


def _frames(payload: str | bytes) -> list[dict[str, Any]]:
    frame = json.loads(payload)
    return frame["frames"] if frame.get("type") == "batch" else [frame]


def _extensions(ws: ClientConnection) -> str | None:
    assert ws.response is not None
    return ws.response.headers.get("Sec-WebSocket-Extensions")


@pytest.mark.parametrize("on", [True, False], ids=["setting-on", "setting-off"])
async def test_deflate_is_negotiated_only_when_on_and_offered(on):
    async with running_server(DEFLATE_ON if on else TEST_SETTINGS) as live:
        async with (connect(live.url, subprotocols=[JSON]) as offering,  # type: ignore[list-item]
                    connect(live.url, subprotocols=[JSON], compression=None) as plain):  # type: ignore[list-item]
            assert _extensions(offering) == (NEGOTIATED if on else None)
            assert [e.name for e in offering.protocol.extensions] == (["permessage-deflate"] if on else [])
            assert _extensions(plain) is None and plain.protocol.extensions == []
            for ws in (offering, plain):  # both are served (the answer leaves through send_now)
                await ws.send(json.dumps({"type": "hello", "name": "ann", "id": "h"}))
                [welcome] = _frames(await asyncio.wait_for(ws.recv(), 10))
                assert welcome["re"] == "h" and welcome["type"] != "error", welcome


async def _request(ws: ClientConnection, frame: dict[str, Any]) -> dict[str, Any]:
    """Send ``frame`` (with an id) and return its answer; other frames before it are dropped."""
    await ws.send(json.dumps(frame))
    while True:
        for f in _frames(await asyncio.wait_for(ws.recv(), 10)):
            if f.get("re") == frame["id"]:
                assert f["type"] != "error", f
                return f


class Seat:
    """A player over a ``websockets`` connection, raw JSON frames: checks, or folds, on each of its turns
    (never all in against the bot: the match goes on, no seat busts and leaves a person alone)."""

    def __init__(self, ws: ClientConnection, table: str, seat: int) -> None:
        self.ws, self.table, self.seat = ws, table, seat
        self.acted = 0
        self.seqs: list[int] = []
        self.answered: set[int] = set()

    async def play(self) -> None:
        """Join the seat, then act on every turn (``acted``: the actions answered ``ok``) until
        cancelled, checking that the events' ``seq`` follow the snapshot's without a gap."""
        await self.ws.send(json.dumps({"type": "join", "table": self.table, "role": "player", "seat": self.seat,
                                       "id": "j"}))
        while True:
            for f in _frames(await self.ws.recv()):
                assert f["type"] != "error", f
                if f["type"] == "ok":
                    self.acted += 1
                if f["type"] not in ("event", "snapshot"):
                    continue
                assert f["type"] == "snapshot" or f["seq"] == self.seqs[-1] + 1, (self.seqs[-1:], f["seq"])
                self.seqs.append(f["seq"])
                turn = f.get("turn")  # a snapshot carries the turn too when the seat is to act on joining
                if turn and turn["seat"] == self.seat and "legal" in f and turn["id"] not in self.answered:
                    self.answered.add(turn["id"])
                    kinds = [a["type"] for a in f["legal"]]
                    action = {"type": "check" if "check" in kinds else "fold"}
                    await self.ws.send(json.dumps({"type": "act", "table": self.table, "action": action,
                                                   "turn": turn["id"], "id": f"a{turn['id']}"}))


async def test_a_tables_events_arrive_whole_on_deflate_and_plain_connections():
    """No-limit Hold'em, a deflate player, a plain player and a bot; a deflate and a plain
    spectator read the same events (the deflate one frame by frame, each compressed)."""
    async with serving(DEFLATE_ON, MemoryStore(DEFLATE_ON.event_buffer, keep_states=True)) as (_, port):
        url = f"ws://127.0.0.1:{port}/ws"
        async with (connect(url, subprotocols=[JSON]) as ann,  # type: ignore[list-item]
                    connect(url, subprotocols=[JSON], compression=None) as bob):  # type: ignore[list-item]
            assert _extensions(ann) == NEGOTIATED and _extensions(bob) is None
            raw = await RawClient.open(port, "permessage-deflate; client_max_window_bits")
            plain = await RawClient.open(port, None)
            assert raw.headers["sec-websocket-extensions"] == NEGOTIATED and raw.bits == 12
            assert "sec-websocket-extensions" not in plain.headers
            await _request(ann, {"type": "hello", "name": "ann", "batch": True, "id": "h"})
            await _request(bob, {"type": "hello", "name": "bob", "batch": True, "id": "h"})
            created = await _request(ann, {"type": "create_table", "game": "no_limit_holdem", "seats": 3, "bots": 1,
                                           "options": {"pause": 0, "bot_think": 0}, "id": "c"})
            table = created["table"]
            watched: dict[RawClient, list[dict[str, Any]]] = {raw: [], plain: []}
            for watcher in watched:
                watcher.send({"type": "hello", "name": "watcher", "batch": True, "id": "h"})
                watcher.send({"type": "join", "table": table, "role": "spectator", "id": "j"})

            async def watch(watcher: RawClient) -> None:
                while True:
                    watched[watcher].extend(f for f in _frames(await watcher.message()) if f["type"] != "ok")

            readers = [asyncio.create_task(watch(w)) for w in watched]
            try:
                await until(lambda: all(any(f.get("re") == "j" for f in got) for got in watched.values())
                            or any(r.done() for r in readers), 10, "the spectators' snapshots")  # before the match
                seats = [Seat(ann, table, 1), Seat(bob, table, 2)]
                players = [asyncio.create_task(s.play()) for s in seats]
                readers += players
                await until(lambda: all(s.acted >= 4 for s in seats) or any(r.done() for r in readers), 30,
                            "four actions of each player")
                last = max(s.seqs[-1] for s in seats)
                await until(lambda: all(got[-1].get("seq", 0) >= last for got in watched.values())
                            or any(r.done() for r in readers), 10, "the spectators catching up")
                for r in readers:
                    assert not r.done(), r.result()  # a reader's failed assertion shows here
            finally:
                for r in readers:
                    r.cancel()
            seen = {w: [f for f in got if f["type"] == "event" and f["seq"] <= last] for w, got in watched.items()}
            assert seen[raw] == seen[plain], "the deflate spectator read other events than the plain one"
            seqs = [e["seq"] for e in seen[raw]]
            assert seqs == list(range(seqs[0], last + 1))
            acted = [e["event"] for e in seen[raw] if e["event"]["type"] == "action"]
            assert {a["seat"] for a in acted} >= {1, 2, 3}, acted  # both people and the bot played
            for s in seats:  # each player's own stream: in order, through to the last action seen
                assert s.seqs == list(range(s.seqs[0], s.seqs[-1] + 1))
            await raw.close()
            await plain.close()


def _protocol(server: Any, client: tuple[str, int]) -> CardhallWebSocketProtocol:
    """The server's websocket protocol of the connection from ``client`` (its local address)."""
    found = [p for p in server.server_state.connections
             if isinstance(p, CardhallWebSocketProtocol) and p.client == client]
    assert len(found) == 1, found
    return found[0]


async def test_send_now_compresses_a_payload_once_per_window_and_refuses_while_paused():
    """``send_now`` on deflate connections: True (the fast path), RSV1 frames; one payload sent to
    three connections in a row gives the same bytes to the two with the same window, and the third
    (which asked for a 10-bit window) a frame compressed within its window; text and binary alike."""
    async with serving(DEFLATE_ON, MemoryStore(DEFLATE_ON.event_buffer)) as (server, port):
        a = await RawClient.open(port, "permessage-deflate; client_max_window_bits")
        b = await RawClient.open(port, "permessage-deflate")
        small = await RawClient.open(port, "permessage-deflate; server_max_window_bits=10")
        plain = await RawClient.open(port, None)
        assert (a.bits, b.bits, small.bits, plain.bits) == (12, 12, 10, 0), [c.headers for c in (a, b, small, plain)]
        clients = [a, b, small, plain]
        protocols = [_protocol(server, c.local) for c in clients]
        rng = random.Random(7)
        # repeats 3,000 characters apart: inside a 12-bit window (4,096), outside a 10-bit one (1,024)
        block = "".join(rng.choice(string.ascii_letters) for _ in range(3000))
        for payload in (block * 2, (block * 2).encode()):
            assert all(p.send_now(payload) for p in protocols)
            frames = [await asyncio.wait_for(c.frame(), 10) for c in clients]
            opcode = 1 if isinstance(payload, str) else 2
            assert [f[:2] for f in frames] == [(True, opcode)] * 3 + [(False, opcode)]
            assert frames[0][2] == frames[1][2] and len(frames[0][2]) < 4000, "the same frame, the repeat found"
            assert len(frames[2][2]) > 4000, "compressed again for the 10-bit window, which cannot reach the repeat"
            data = payload.encode() if isinstance(payload, str) else payload
            for client, (_, _, sent) in zip(clients, frames, strict=True):
                got = zlib.decompressobj(wbits=-client.bits).decompress(sent + TAIL) if client.bits else sent
                assert got == data
        protocols[0].pause_writing()  # the transport's buffer is full: nothing written, the caller waits
        try:
            assert protocols[0].send_now("later") is False
        finally:
            protocols[0].resume_writing()
        assert protocols[0].send_now("now") is True
        assert await asyncio.wait_for(a.message(), 10) == b"now"
        for c in clients:
            await c.close()
