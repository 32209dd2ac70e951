"""``Settings.trusted_proxies`` (``cardhall serve --trusted-proxy``), over real
websockets and HTTP on loopback: the per-address limits count the address a
trusted proxy forwards in ``X-Forwarded-For``, and only then; from any other
peer the header is ignored and the socket's peer counts (uvicorn's own default,
trusting 127.0.0.1, would let any local client claim any address).
"""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from cardhall.protocol.codec import JSON
from cardhall.server.config import Settings
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, LiveServer, running_server

ONE_PER_ADDRESS = replace(TEST_SETTINGS, max_connections_per_ip=1)


async def _open(live: LiveServer, forwarded: str | None, local: str = "127.0.0.1") -> ClientConnection:
    """A websocket from ``local`` (a loopback address) whose handshake carries ``X-Forwarded-For: forwarded``."""
    headers = {"X-Forwarded-For": forwarded} if forwarded is not None else {}
    return await connect(live.url, subprotocols=[JSON], additional_headers=headers,
                         local_addr=(local, 0), open_timeout=5)


async def _refused(live: LiveServer, forwarded: str | None, local: str = "127.0.0.1") -> bool:
    """Whether that websocket's handshake is refused (403: too many from its address)."""
    try:
        ws = await _open(live, forwarded, local)
    except InvalidStatus as exc:
        assert exc.response.status_code == 403
        return True
    await ws.close()
    return False


async def _addresses(live: LiveServer, count: int) -> list[str]:
    """The client addresses of the server's connections, once it holds ``count`` of them."""
    await until(lambda: len(live.hall.connections) == count, 30, f"{count} connections held by the server")
    return sorted(c.address for c in live.hall.connections)


async def test_without_trusted_proxies_forwarded_for_is_ignored():
    async with running_server(ONE_PER_ADDRESS) as live:
        first = await _open(live, "203.0.113.1")
        assert await _addresses(live, 1) == ["127.0.0.1"]
        assert await _refused(live, "203.0.113.2")  # another forwarded address, the same peer
        assert await _refused(live, None)
        await first.close()


async def test_a_trusted_proxy_names_the_client():
    settings = replace(ONE_PER_ADDRESS, trusted_proxies=("127.0.0.1",))
    async with running_server(settings) as live:
        a = await _open(live, "203.0.113.1")
        b = await _open(live, "203.0.113.2")
        assert await _addresses(live, 2) == ["203.0.113.1", "203.0.113.2"]
        assert await _refused(live, "203.0.113.1")  # the same client again, through the proxy
        # a chain: the last untrusted hop is the client
        assert await _refused(live, "198.51.100.9, 203.0.113.2")
        c = await _open(live, "203.0.113.2, 198.51.100.9")
        assert await _addresses(live, 3) == ["198.51.100.9", "203.0.113.1", "203.0.113.2"]
        # the proxy's own connection, without the header, is counted as the proxy's
        d = await _open(live, None)
        assert await _addresses(live, 4) == ["127.0.0.1", "198.51.100.9", "203.0.113.1", "203.0.113.2"]
        # another peer is not trusted: its header is ignored
        e = await _open(live, "203.0.113.7", local="127.0.0.2")
        assert "127.0.0.2" in await _addresses(live, 5)
        assert await _refused(live, "203.0.113.8", local="127.0.0.2")
        for ws in (a, b, c, d, e):
            await ws.close()


async def test_an_untrusted_peer_cannot_claim_an_address():
    settings = replace(ONE_PER_ADDRESS, trusted_proxies=("10.9.9.9",))
    async with running_server(settings) as live:
        first = await _open(live, "203.0.113.1")
        assert await _addresses(live, 1) == ["127.0.0.1"]
        assert await _refused(live, "203.0.113.2")
        await first.close()


async def test_a_trusted_network():
    settings = replace(ONE_PER_ADDRESS, trusted_proxies=("10.0.0.0/8", "127.0.0.0/30"))
    async with running_server(settings) as live:
        a = await _open(live, "203.0.113.1", local="127.0.0.2")
        b = await _open(live, "203.0.113.2", local="127.0.0.3")
        c = await _open(live, "203.0.113.3", local="127.0.0.4")  # outside 127.0.0.0/30
        assert await _addresses(live, 3) == ["127.0.0.4", "203.0.113.1", "203.0.113.2"]
        for ws in (a, b, c):
            await ws.close()


async def _create(http: httpx.AsyncClient, forwarded: str) -> int:
    r = await http.post("/api/tables", json={"game": "loco_poker"}, headers={"X-Forwarded-For": forwarded})
    if r.status_code != 201:
        assert r.json()["code"] == "too_many_tables", r.text
    return r.status_code


@pytest.mark.parametrize(("trusted", "expected"), [
    ((), [201, 429, 429]),  # every request is 127.0.0.1's
    (("127.0.0.1",), [201, 201, 429]),  # one table per forwarded address
    (("10.9.9.9",), [201, 429, 429]),  # not from that proxy: 127.0.0.1's
])
async def test_tables_per_address_over_http(trusted: tuple[str, ...], expected: list[int]):
    settings: Settings = replace(TEST_SETTINGS, max_tables_per_address=1, trusted_proxies=trusted)
    async with running_server(settings) as live, httpx.AsyncClient(base_url=live.http) as http:
        got = [await _create(http, "203.0.113.1"), await _create(http, "203.0.113.2"),
               await _create(http, "203.0.113.1")]
        assert got == expected


@pytest.mark.parametrize(("trusted", "accepted"), [((), False), (("127.0.0.1",), True), (("10.9.9.9",), False)])
async def test_forwarded_proto_counts_only_from_a_trusted_proxy(trusted: tuple[str, ...], accepted: bool):
    # the page served by the service itself is always allowed (its own https:// origin behind a TLS
    # proxy), but the scheme comes from X-Forwarded-Proto: only a trusted proxy may say it is https
    settings = replace(TEST_SETTINGS, allowed_origins=("https://elsewhere.example",), trusted_proxies=trusted)
    async with running_server(settings) as live:
        own = live.http.replace("http://", "https://")  # the Host header is the server's address
        try:
            ws = await connect(live.url, subprotocols=[JSON], additional_headers={"X-Forwarded-Proto": "https"},
                               origin=own, open_timeout=5)
        except InvalidStatus as exc:
            assert exc.response.status_code == 403
            assert not accepted
        else:
            await ws.close()
            assert accepted
