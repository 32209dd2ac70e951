"""The operator key (``X-Operator-Key``, SPEC "HTTP", deploy/README.md) over
real HTTP: every operator endpoint refuses in the JSON error shape (403
``not_operator``; an unknown table 404 ``unknown_table``), and a client
address that sent :data:`~cardhall.server.http_api.OPERATOR_TRIES` wrong keys
(at an operator endpoint, or at ``POST /api/tables``) gets 429
``rate_limited`` with ``Retry-After`` for every operator request, the right key
included, while other addresses go on. The addresses are the ones a trusted
proxy (127.0.0.1 here) forwards in ``X-Forwarded-For``.
"""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest

from cardhall.server import http_api
from cardhall.server.config import Settings
from cardhall.server.ratelimit import AddressBudget
from tests.server.conftest import TEST_SETTINGS, running_server

KEY = "sesame"
SETTINGS: Settings = replace(TEST_SETTINGS, operator_key=KEY, trusted_proxies=("127.0.0.1",))
TABLE = {"game": "loco_poker", "seats": 2, "bots": 2, "options": {"pause": 0, "bot_think": 0}}

#: every operator endpoint: method, path (``{table}``: an open table's id), and a body for POST /api/tables
ENDPOINTS = [
    ("GET", "/api/ops/tables/{table}", None),
    ("POST", "/api/ops/tables/{table}/close", None),
    ("GET", "/api/cluster", None),
    ("POST", "/api/tables", TABLE),  # an operator request only when it carries the key
]


def _headers(address: str, key: str | None = None) -> dict[str, str]:
    """A request from client ``address`` (through the trusted proxy), carrying ``key`` when given."""
    out = {"X-Forwarded-For": address}
    if key is not None:
        out["X-Operator-Key"] = key
    return out


async def _call(http: httpx.AsyncClient, endpoint: tuple[str, str, object], table: str,
                headers: dict[str, str]) -> httpx.Response:
    method, path, body = endpoint
    return await http.request(method, path.format(table=table), json=body, headers=headers)


def _error_of(r: httpx.Response, status: int, code: str) -> dict[str, object]:
    """``r``'s JSON error body, checked to be ``status`` with ``code`` in the SPEC's HTTP error shape."""
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/json", r.headers
    body = r.json()
    assert body["type"] == "error" and body["code"] == code and isinstance(body["message"], str), body
    assert set(body) == {"type", "code", "message"}, body
    return body


def _retry_after(r: httpx.Response) -> int:
    """``r``: 429 ``rate_limited``; its ``Retry-After``, whole seconds within one window."""
    _error_of(r, 429, "rate_limited")
    seconds = int(r.headers["retry-after"])
    assert 1 <= seconds <= http_api.OPERATOR_WINDOW, seconds
    return seconds


async def _open_table(http: httpx.AsyncClient) -> str:
    r = await http.post("/api/tables", json=TABLE, headers=_headers("198.51.100.1", KEY))
    assert r.status_code == 201, r.text
    return str(r.json()["table"])


@pytest.mark.parametrize("endpoint", ENDPOINTS[:3], ids=lambda e: f"{e[0]} {e[1]}")
async def test_a_missing_or_wrong_key_is_a_json_error(endpoint: tuple[str, str, object]):
    async with running_server(SETTINGS) as live, httpx.AsyncClient(base_url=live.http) as http:
        table = await _open_table(http)
        _error_of(await _call(http, endpoint, table, _headers("203.0.113.1")), 403, "not_operator")
        _error_of(await _call(http, endpoint, table, _headers("203.0.113.1", "nope")), 403, "not_operator")
        assert table in live.hall.tables  # nothing was done


async def test_a_wrong_key_at_table_creation_is_refused_and_creates_nothing():
    async with running_server(SETTINGS) as live, httpx.AsyncClient(base_url=live.http) as http:
        r = await http.post("/api/tables", json=TABLE, headers=_headers("203.0.113.1", "nope"))
        _error_of(r, 403, "not_operator")
        assert not live.hall.tables
        # without the header it is an ordinary creation, never a failed try
        for _ in range(http_api.OPERATOR_TRIES + 1):
            assert (await http.post("/api/tables", json=TABLE, headers=_headers("203.0.113.2"))).status_code == 201
        assert (await http.get("/api/cluster", headers=_headers("203.0.113.2", KEY))).status_code == 200


async def test_a_server_without_an_operator_key_refuses_every_key():
    async with running_server(replace(SETTINGS, operator_key=None)) as live, \
            httpx.AsyncClient(base_url=live.http) as http:
        _error_of(await http.get("/api/cluster", headers=_headers("203.0.113.1", "")), 403, "not_operator")
        _error_of(await http.get("/api/cluster", headers=_headers("203.0.113.1")), 403, "not_operator")


async def test_an_unknown_table_is_404_unknown_table():
    async with running_server(SETTINGS) as live, httpx.AsyncClient(base_url=live.http) as http:
        for endpoint in ENDPOINTS[:2]:
            _error_of(await _call(http, endpoint, "t_nope", _headers("203.0.113.1", KEY)), 404, "unknown_table")


async def test_the_right_key_works_and_is_never_throttled():
    async with running_server(SETTINGS) as live, httpx.AsyncClient(base_url=live.http) as http:
        ops = _headers("203.0.113.1", KEY)
        tables = []
        for _ in range(http_api.OPERATOR_TRIES + 1):
            r = await http.post("/api/tables", json=TABLE, headers=ops)
            assert r.status_code == 201, r.text
            tables.append(r.json()["table"])
            assert (await http.get("/api/cluster", headers=ops)).status_code == 200
        r = await http.get(f"/api/ops/tables/{tables[0]}", headers=ops)
        assert r.status_code == 200 and r.json()["state"] is not None
        assert (await http.post(f"/api/ops/tables/{tables[0]}/close", headers=ops)).status_code == 202


@pytest.mark.parametrize("where", ["ops", "create"])
async def test_wrong_keys_throttle_their_address_even_with_the_right_key(where: str):
    async with running_server(SETTINGS) as live, httpx.AsyncClient(base_url=live.http) as http:
        table = await _open_table(http)
        guesser = "203.0.113.1"
        for i in range(http_api.OPERATOR_TRIES):
            wrong = _headers(guesser, f"guess-{i}")
            r = await (http.get("/api/cluster", headers=wrong) if where == "ops"
                       else http.post("/api/tables", json=TABLE, headers=wrong))
            _error_of(r, 403, "not_operator")
        # past the allowance: every operator request from that address, the right key too
        for endpoint in ENDPOINTS:
            _retry_after(await _call(http, endpoint, table, _headers(guesser, KEY)))
            _retry_after(await _call(http, endpoint, table, _headers(guesser, "another guess")))
        _retry_after(await http.get("/api/cluster", headers=_headers(guesser)))
        assert table in live.hall.tables and len(live.hall.tables) == 1  # nothing closed, nothing created
        # the same address's requests that are not an operator's go on
        assert (await http.post("/api/tables", json=TABLE, headers=_headers(guesser))).status_code == 201
        assert (await http.get(f"/api/tables/{table}", headers=_headers(guesser))).status_code == 200
        # another address is not throttled
        other = _headers("203.0.113.2", KEY)
        assert (await http.get("/api/cluster", headers=other)).status_code == 200
        assert (await http.get(f"/api/ops/tables/{table}", headers=other)).status_code == 200
        assert (await http.post("/api/tables", json=TABLE, headers=other)).status_code == 201


def test_the_failures_kept_are_bounded_and_refill():
    failures = AddressBudget(count=2, window=10.0)
    assert failures.wait("a", 0.0) == 0.0
    assert failures.take("a", 0.0) and failures.wait("a", 0.0) == 0.0
    assert failures.take("a", 0.0) and failures.wait("a", 0.0) == pytest.approx(5.0)
    assert failures.wait("a", 4.0) == pytest.approx(1.0) and failures.wait("a", 5.0) == 0.0
    assert failures.wait("b", 0.0) == 0.0 and len(failures) == 1  # asking keeps nothing
    for i in range(5000):  # addresses whose buckets refilled are dropped as new ones come
        failures.take(f"x{i}", 100.0 + i * 10.0)
    assert len(failures) <= 1024
