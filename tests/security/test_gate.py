"""Connection admission (``server/gate.py``, ``server/http_protocol.py``,
``server/ws_protocol.py``) against a real server on loopback: one client cannot
stall the server with a huge request head, hold connections that never finish
their request, get past the per-address or the total connection limit with
half-open connections, or flood websocket ping frames.

Raw clients are asyncio streams (the server runs in the test's event loop);
every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import re
import resource
import socket
import subprocess
import sys
import time
from dataclasses import replace

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from cardhall.protocol.codec import JSON
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, free_port, running_server

UPGRADE = (b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


async def _raw(port: int, data: bytes = b"", local: str = "127.0.0.1") -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(local, 0))
    if data:
        writer.write(data)
        await writer.drain()
    return reader, writer


async def _answer(reader: asyncio.StreamReader, timeout: float = 5.0) -> bytes:
    """Everything the server sends until it closes (at most ``timeout`` s; then TimeoutError)."""
    out = b""
    async with asyncio.timeout(timeout):
        while chunk := await reader.read(65536):
            out += chunk
    return out


async def _ws(url: str, local: str = "127.0.0.1") -> ClientConnection:
    return await connect(url, subprotocols=[JSON], local_addr=(local, 0), open_timeout=5)


async def _admitted(url: str, local: str = "127.0.0.1", timeout: float = 30.0) -> ClientConnection:
    """A websocket from ``local``, opened once the server admits one: it refuses
    (InvalidStatus) until it has heard of the connections that went away."""
    opened: list[ClientConnection] = []

    async def admitted() -> bool:
        try:
            opened.append(await _ws(url, local))
        except InvalidStatus:
            return False
        return True

    await until(admitted, timeout, f"a websocket from {local} admitted")
    return opened[0]


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


async def test_a_request_head_over_the_bound_gets_431_and_healthz_answers_meanwhile():
    async with running_server(TEST_SETTINGS) as live:  # the default bound: 16 KiB
        port = _port(live.http)
        reader, writer = await _raw(port, b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: ")
        async with httpx.AsyncClient(base_url=live.http, timeout=5) as http:
            writer.write(b"a" * (1 << 20))  # never ends: a 1 MiB header value, and more would follow
            drained = asyncio.ensure_future(writer.drain())
            assert (await http.get("/healthz")).status_code == 200
            answer = await _answer(reader)
            assert answer.startswith(b"HTTP/1.1 431 "), answer[:100]
            assert answer.endswith(b"request head over 16384 bytes")
            await asyncio.gather(drained, return_exceptions=True)
            assert (await http.get("/healthz")).status_code == 200
        writer.close()
        # a head just under the bound is served
        head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: "
        reader, writer = await _raw(port, head + b"p" * (16384 - len(head) - 4) + b"\r\n\r\n")
        assert (await _answer(reader)).startswith(b"HTTP/1.1 200 ")
        writer.close()


async def test_a_websocket_upgrade_the_websocket_layer_cannot_read_is_answered_not_held():
    async with running_server(TEST_SETTINGS) as live:
        # under the 16 KiB head bound, but one header line over the websocket parser's 8 KiB
        reader, writer = await _raw(_port(live.http), UPGRADE[:-2] + b"X-Pad: " + b"p" * 10_000 + b"\r\n\r\n")
        answer = await _answer(reader)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:100]
        writer.close()


@pytest.mark.parametrize("sent", [b"", b"GET /heal", b"GET / HTTP/1.1\r\nHost: x\r\n", UPGRADE[:-2]],
                         ids=["nothing", "partial request line", "headers never ended", "upgrade never ended"])
async def test_an_incomplete_request_is_closed_after_the_handshake_timeout(sent):
    async with running_server(replace(TEST_SETTINGS, handshake_timeout=0.5)) as live:
        reader, writer = await _raw(_port(live.http), sent)
        answer = await _answer(reader)
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:100]
        assert answer.endswith(b"request not complete within 0.5 s")
        writer.close()


async def test_the_timeout_bounds_each_request_of_a_kept_alive_connection_not_an_open_websocket():
    async with running_server(replace(TEST_SETTINGS, handshake_timeout=0.5)) as live:
        ws = await _ws(live.url)
        reader, writer = await _raw(_port(live.http), b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /heal")
        answer = await _answer(reader)  # the first request is answered, the second never ends: 408
        assert answer.startswith(b"HTTP/1.1 200 ") and b"HTTP/1.1 408 " in answer, answer
        writer.close()
        await ws.send(json.dumps({"type": "ping", "id": 1}))  # the websocket outlived the timeout
        assert json.loads(await asyncio.wait_for(ws.recv(), 5))["type"] == "pong"
        await ws.close()


async def test_half_open_connections_count_against_the_per_address_limit():
    settings = replace(TEST_SETTINGS, max_connections_per_ip=3)  # the default handshake timeout: 10 s
    async with running_server(settings) as live:
        port = _port(live.http)
        idle = [await _raw(port, data) for data in (b"", b"GET /", b"GET / HTTP/1.1\r\n")]
        with pytest.raises(InvalidStatus) as refused:
            await _ws(live.url)
        assert refused.value.response.status_code == 403
        assert refused.value.response.body == b"too many connections from this address"
        async with httpx.AsyncClient(base_url=live.http, timeout=5) as http:  # plain HTTP too
            r = await http.get("/healthz")
            assert r.status_code == 403 and r.text == "too many connections from this address"
        other = await _ws(live.url, local="127.0.0.2")  # another address is not affected
        for _, writer in idle:
            writer.close()
        again = await _admitted(live.url)  # once the server hears of the closes: the address is under its limit
        await again.send(json.dumps({"type": "ping", "id": 1}))
        assert json.loads(await asyncio.wait_for(again.recv(), 5))["type"] == "pong"
        await again.close()
        await other.close()


async def test_past_the_total_cap_a_new_connection_gets_503_and_existing_ones_keep_working():
    settings = replace(TEST_SETTINGS, max_connections=4, handshake_timeout=30)
    async with running_server(settings) as live:
        port = _port(live.http)
        held = [await _ws(live.url), await _ws(live.url, local="127.0.0.2")]
        idle = [await _raw(port), await _raw(port, local="127.0.0.3")]
        for local in ("127.0.0.1", "127.0.0.4"):
            with pytest.raises(InvalidStatus) as refused:
                await _ws(live.url, local=local)
            assert refused.value.response.status_code == 503
            assert refused.value.response.body == b"server at its connection limit; try again later"
        reader, writer = await _raw(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = await _answer(reader)
        assert answer.startswith(b"HTTP/1.1 503 ") and answer.endswith(b"try again later"), answer
        writer.close()
        for i, ws in enumerate(held):
            await ws.send(json.dumps({"type": "ping", "id": i}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 5)) == {"type": "pong", "re": i}
        idle[0][1].close()  # one leaves: a new connection is admitted
        again = await _admitted(live.url, local="127.0.0.5")
        for ws in [*held, again]:
            await ws.close()
        idle[1][1].close()
        async with httpx.AsyncClient(base_url=live.http, timeout=5) as http:  # the operator sees the refusals
            scraped: list[httpx.Response] = []

            async def scrape() -> bool:  # answered 503 until the server hears of the closes
                scraped.append(await http.get("/metrics"))
                return scraped[-1].status_code == 200

            await until(scrape, 30, "/metrics answered once the connections closed")
            r = scraped[-1]
            refused = re.search(r'^cardhall_connections_refused_total\{status="503"\} (\S+)$', r.text, re.M)
            assert refused and float(refused.group(1)) >= 3  # the three above, and any retry of the loops
            assert "cardhall_tcp_connections " in r.text


async def test_websocket_ping_frames_take_from_the_frame_rate_limit():
    settings = replace(TEST_SETTINGS, rate=0.01, burst=5.0, rate_strikes=3)
    async with running_server(settings) as live:
        ws = await _ws(live.url)
        for i in range(5):  # the burst: each ping is answered
            await asyncio.wait_for(await ws.ping(str(i)), 5)
        # the bucket is empty for the connection's data frames too
        await ws.send(json.dumps({"type": "ping", "id": 9}))
        error = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert error["type"] == "error" and error["code"] == "rate_limited" and error["re"] == 9, error
        for i in range(10):  # a flood of ping frames: unanswered, then the connection is closed for it
            try:
                await ws.ping(f"flood {i}")
            except Exception:
                break
        await asyncio.wait_for(ws.wait_closed(), 5)
        assert ws.close_code == 4008 and ws.close_reason == "rate_limited", (ws.close_code, ws.close_reason)


def test_cardhall_serve_flags_set_the_limits():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(port),
                             "--log-level", "warning", "--max-connections", "2", "--max-connections-per-ip", "0",
                             "--max-header-bytes", "4096", "--handshake-timeout", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    async def check() -> None:
        first: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

        async def listening() -> bool:
            try:
                first.append(await _raw(port))
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                return False
            return True

        await until(listening, 60, "cardhall serve listening")
        reader, writer = first[0]
        held = await _raw(port)
        third = await _raw(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (await _answer(third[0])).startswith(b"HTTP/1.1 503 ")  # past --max-connections 2
        third[1].close()
        for r, w in (held, (reader, writer)):  # after --handshake-timeout 1 each is answered 408
            assert (await _answer(r)).startswith(b"HTTP/1.1 408 ")
            w.close()
        answers: list[bytes] = []

        async def admitted() -> bool:  # answered 503 until the server has seen them close
            r, w = await _raw(port, b"GET / HTTP/1.1\r\nX: " + b"a" * 5000)
            answers.append(await _answer(r))
            w.close()
            return not answers[-1].startswith(b"HTTP/1.1 503 ")

        await until(admitted, 30, "a connection admitted once the others closed")
        answer = answers[-1]
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:100]  # a head over 4096 bytes

    try:
        asyncio.run(check())
    finally:
        proc.terminate()
        proc.wait(15)


def test_the_total_cap_is_lowered_to_fit_the_open_file_limit():
    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (600, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(port),
                             "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=low_limit, text=True)
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:  # the warning is logged before it listens
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                time.sleep(0.05)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=15)
    assert "max_connections 10000 lowered to 280 to fit the open-file limit 600" in err, err[-2000:]
