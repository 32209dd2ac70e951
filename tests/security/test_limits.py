"""Limits a newcomer cannot walk around (deploy/README.md "Limits for newcomers", SPEC "Limits").

Each test runs a real server on loopback (in this process, or a ``cardhall
serve`` subprocess where its log is the point) and speaks to it only through
the websocket protocol and HTTP: tables per client address whatever the
player, anonymous HTTP creation limited by default, the bot think floor of
tables that play by themselves, new players per address, idle players
forgotten (in memory and in Redis) but never one holding a seat (G-5), a
refused frame answered with its request's ``re``, creation refused while
Redis is down, an aborted POST logged in one line, a POST body bounded.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import replace
from typing import Any

import httpx
import pytest

from cardhall.clients.client import Client, ServerError
from cardhall.server.config import Settings
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, RedisServer, free_port, running_server

#: the service's own defaults for every limit this file checks (TEST_SETTINGS lifts them)
DEFAULTS = Settings()


def default_limits() -> Settings:
    """TEST_SETTINGS with the service's default limits back (and an operator key)."""
    return replace(TEST_SETTINGS, max_tables_per_address=DEFAULTS.max_tables_per_address,
                   new_players_per_address=DEFAULTS.new_players_per_address,
                   new_players_window=DEFAULTS.new_players_window, bot_think_floor=DEFAULTS.bot_think_floor,
                   operator_key="ops-key")

WAITING_TABLE = {"game": "loco_poker", "seats": 3}  # nobody plays it: no CPU while the test runs


async def _code(awaitable: Any) -> str:
    try:
        await awaitable
    except ServerError as exc:
        return exc.code
    return "ok"


async def test_a_second_hello_does_not_get_more_tables_from_the_same_address():
    settings = replace(TEST_SETTINGS, max_tables_per_player=2, max_tables_per_address=3)
    async with running_server(settings) as live:
        c = await live.client("first")
        first = c.player
        for _ in range(2):
            await c.create_table(**WAITING_TABLE)
        assert await _code(c.create_table(**WAITING_TABLE)) == "too_many_tables"  # the player's limit
        c.token = None
        assert (await c.hello("second"))["player"] != first  # a new player on the same connection
        await c.create_table(**WAITING_TABLE)  # the address's third
        assert await _code(c.create_table(**WAITING_TABLE)) == "too_many_tables"  # the address's limit
        other = await live.client("third")  # a new connection does not help either
        assert await _code(other.create_table(**WAITING_TABLE)) == "too_many_tables"
        async with httpx.AsyncClient(base_url=live.http) as http:  # nor HTTP, with a token or without
            r = await http.post("/api/tables", json=WAITING_TABLE)
            assert r.status_code == 429 and r.json()["code"] == "too_many_tables"
            r = await http.post("/api/tables", json=WAITING_TABLE, headers={"Authorization": f"Bearer {other.token}"})
            assert r.status_code == 429 and r.json()["code"] == "too_many_tables"
        assert len(live.hall.tables) == 3
        await c.close()
        await other.close()


async def test_anonymous_http_creation_is_limited_by_default_and_the_operator_key_lifts_it():
    assert DEFAULTS.max_tables_per_address > 0
    async with running_server(default_limits()) as live:
        async with httpx.AsyncClient(base_url=live.http) as http:
            statuses = [(await http.post("/api/tables", json=WAITING_TABLE)).status_code
                        for _ in range(DEFAULTS.max_tables_per_address + 5)]
            assert statuses.count(201) == DEFAULTS.max_tables_per_address
            assert set(statuses[DEFAULTS.max_tables_per_address:]) == {429}
            r = await http.post("/api/tables", json=WAITING_TABLE, headers={"X-Operator-Key": "ops-key"})
            assert r.status_code == 201


async def test_tables_that_play_by_themselves_get_the_bot_think_floor():
    floor = DEFAULTS.bot_think_floor
    assert floor > 0
    fast = {"game": "loco_poker", "seats": 3, "bots": 3, "options": {"bot_think": 0, "pause": 0}}
    async with running_server(default_limits()) as live:
        async with httpx.AsyncClient(base_url=live.http) as http:
            r = await http.post("/api/tables", json={**fast, "bots": 2})  # nobody owns it
            assert r.status_code == 201
            assert r.json()["info"]["options"]["bot_think"] == floor
            r = await http.get(f"/api/tables/{r.json()['table']}")
            assert r.json()["options"]["bot_think"] == floor
            r = await http.post("/api/tables", json=fast, headers={"X-Operator-Key": "ops-key"})
            assert r.json()["info"]["options"]["bot_think"] == 0  # the operator's table keeps its pace
            slow = {**fast, "options": {"bot_think": 2 * floor}}
            assert (await http.post("/api/tables", json=slow)).json()["info"]["options"]["bot_think"] == 2 * floor
        owner = await live.client("owner")
        only_bots = await owner.create_table("loco_poker", seats=3, bots=3, options={"bot_think": 0})
        with_seat = await owner.create_table("loco_poker", seats=3, bots=2, options={"bot_think": 0})
        async with httpx.AsyncClient(base_url=live.http) as http:
            assert (await http.get(f"/api/tables/{only_bots}")).json()["options"]["bot_think"] == floor
            assert (await http.get(f"/api/tables/{with_seat}")).json()["options"]["bot_think"] == 0
        await owner.close()


async def test_new_players_per_address_are_limited_but_a_token_always_comes_back():
    settings = replace(TEST_SETTINGS, new_players_per_address=3, new_players_window=3600)
    async with running_server(settings) as live:
        c = await Client(live.url).connect()
        tokens = []
        for i in range(3):
            c.token = None  # each hello without a token: a new player
            tokens.append((await c.hello(f"p{i}"))["token"])
        c.token = None
        await c.send({"type": "hello", "name": "p4", "id": "fourth"})
        frame = await c.next_frame(5)
        assert frame["type"] == "error" and frame["code"] == "rate_limited" and frame["re"] == "fourth", frame
        assert (await c.hello("again", token=tokens[0]))["token"] == tokens[0]  # a known player is not new
        assert len(set(tokens)) == 3
        await c.close()


async def test_an_idle_player_is_forgotten_but_a_seated_one_is_not():
    settings = replace(TEST_SETTINGS, player_expiry=0.5)
    async with running_server(settings) as live:
        async with httpx.AsyncClient(base_url=live.http) as http:
            table = (await http.post("/api/tables", json=WAITING_TABLE)).json()["table"]
        idle = await live.client("idle")
        seated = await live.client("seated")
        owner = await live.client("owner")
        await seated.join(table, seat=1)
        await owner.create_table(**WAITING_TABLE)
        idle_token, seated_token, seated_id, idle_id = idle.token, seated.token, seated.player, idle.player
        players = live.hall.players
        sweeps: list[bool] = []  # each sweep that ran: whether the idle player was gone after it
        sweep = players.sweep

        async def counted(*args: Any, **kw: Any) -> int:
            before = players.sweeps
            forgotten = await sweep(*args, **kw)
            if players.sweeps != before:
                sweeps.append(players.get(idle_id) is None)
            return forgotten

        players.sweep = counted  # type: ignore[method-assign]
        for c in (idle, seated, owner):
            await c.close()  # disconnected; the seat is kept (G-5), the table stays open

        # past the expiry and a sweep (every 0.2 s here): the idle player is forgotten; then two sweeps
        # more, which would forget the others too had they no seat or table (they went idle with it);
        # a hello now would renew them
        await until(lambda: True in sweeps and len(sweeps) - sweeps.index(True) >= 3, 30,
                    "the sweep that forgets the idle player, and two more")
        back = await Client(live.url).connect()
        assert await _code(back.hello("back", token=idle_token)) == "unknown_token"
        assert (await back.hello("back", token=owner.token))["player"] == owner.player
        assert (await back.hello("back", token=seated_token))["player"] == seated_id
        snapshot = await back.join(table)  # as a player: the seat it kept (G-5)
        assert snapshot["you"] == 1, snapshot["you"]
        await back.close()


@pytest.mark.redis
async def test_an_idle_players_redis_keys_expire_but_a_seated_players_do_not(redis_server: RedisServer):
    import redis

    from cardhall.server.players import token_hash
    from cardhall.server.store.keys import Keys

    # 1 s: the shortest time a Redis key can be given (whole seconds)
    settings = replace(TEST_SETTINGS, redis_url=redis_server.url, redis_prefix="limits", player_expiry=1.0)
    async with running_server(settings) as live:
        async with httpx.AsyncClient(base_url=live.http) as http:
            table = (await http.post("/api/tables", json=WAITING_TABLE)).json()["table"]
        db = redis.Redis.from_url(redis_server.url)

        def redis_ms() -> int:
            seconds, micro = db.time()
            return seconds * 1000 + micro // 1000

        try:
            idle = await live.client("idle")
            seated = await live.client("seated")
            await seated.join(table, seat=1)
            tokens = (idle.token, seated.token)
            keys = [Keys("limits").player(token_hash(t)) for t in tokens]
            seated_id = seated.player
            await idle.close()
            await seated.close()
            # when the seated player's keys expire unless a sweep renews them (Redis's clock, ms)
            first_expiry = int(db.execute_command("PEXPIRETIME", keys[1]))
            assert first_expiry > 0, first_expiry
            # past the expiry: the idle player's keys have expired in Redis; then past the time at which
            # the seated player's keys, written with them, would have expired too had no sweep renewed them
            await until(lambda: not db.exists(keys[0]), 30, "the idle player's keys expired in Redis")
            await until(lambda: redis_ms() > first_expiry, 30, "Redis's clock past the seated player's expiry")
            assert db.exists(keys[1]), "the seated player's keys, renewed by the sweeps, are there"
        finally:
            db.close()
    async with running_server(settings) as live:  # a new process: nothing in memory, only Redis
        c = await Client(live.url).connect()
        assert await _code(c.hello("back", token=tokens[0])) == "unknown_token"
        assert (await c.hello("back", token=tokens[1]))["player"] == seated_id
        await c.close()


async def test_a_rate_limited_request_is_answered_with_its_re():
    settings = replace(TEST_SETTINGS, rate=1, burst=3, rate_strikes=1000)
    async with running_server(settings) as live:
        for codec in ("msgpack", "json"):
            c = await Client(live.url, codec=codec).connect()
            ids = [f"act-{i}" for i in range(12)]
            for rid in ids:
                await c.send({"type": "act", "id": rid, "table": "t_0", "action": {"type": "fold"}})
            frames = [await c.next_frame(5) for _ in ids]
            assert [f["re"] for f in frames] == ids, frames  # every request answered, in order
            codes = {f["code"] for f in frames}
            assert codes == {"hello_required", "rate_limited"}, codes
            await c.close()


@pytest.mark.redis
async def test_create_table_while_redis_is_stopped_is_refused(redis_server: RedisServer):
    settings = replace(TEST_SETTINGS, redis_url=redis_server.url, redis_prefix="limits", redis_timeout=0.5,
                       store_retry=0.1)
    async with running_server(settings) as live:
        c = await live.client("owner")
        await c.create_table(**WAITING_TABLE)
        redis_server.stop()
        assert await _code(c.create_table(**WAITING_TABLE)) == "unavailable"
        async with httpx.AsyncClient(base_url=live.http, timeout=10) as http:
            r = await http.post("/api/tables", json=WAITING_TABLE)
        assert r.status_code == 503 and r.json()["code"] == "unavailable", r.text
        assert len(live.hall.tables) == 1
        await c.close()


async def test_an_aborted_post_logs_one_line_and_no_traceback(tmp_path):
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(port),
                                 "--log-level", "info"], stdout=subprocess.DEVNULL, stderr=err, cwd=tmp_path)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:
            async def healthy() -> bool:
                assert proc.poll() is None, f"the server exited:\n{log.read_text(errors='replace')}"
                try:
                    return (await http.get("/healthz")).status_code == 200
                except httpx.HTTPError:
                    return False

            await until(healthy, 60, "the server answering /healthz")
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            # Expect: 100-continue: the server says when it has read the head and awaits the body
            writer.write(b"POST /api/tables HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 4000\r\nExpect: 100-continue\r\n\r\n")
            await writer.drain()
            assert (await asyncio.wait_for(reader.readline(), 30)).startswith(b"HTTP/1.1 100 ")
            writer.write(b'{"game": "loco')  # a part of the body, then the client goes away
            await writer.drain()
            writer.close()
            await writer.wait_closed()
            await until(lambda: "disconnected before its body" in log.read_text(errors="replace"), 30,
                        "the aborted POST logged")
            assert (await http.get("/healthz")).status_code == 200  # still serving
    finally:
        proc.terminate()
        proc.wait(20)
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text
    assert "disconnected before its body" in text, text


@pytest.mark.redis
async def test_a_player_stored_before_players_expired_is_found_and_moved_to_its_expiring_keys(redis_server: RedisServer):
    import hashlib

    import msgpack
    import redis

    token = "old-token-of-a-player"
    hashed = hashlib.sha256(token.encode()).hexdigest()
    r = redis.Redis.from_url(redis_server.url)
    r.hset("limits:players", hashed, msgpack.packb(["p_0ld", "old"]))  # the layout of STORAGE.md's P:players
    settings = replace(TEST_SETTINGS, redis_url=redis_server.url, redis_prefix="limits", player_expiry=3600.0)
    try:
        async with running_server(settings) as live:
            c = await Client(live.url).connect()
            assert (await c.hello("x", token=token))["player"] == "p_0ld"
            await c.close()
        assert not r.hexists("limits:players", hashed)
        assert 0 < r.ttl(f"limits:player:{hashed}") <= 3600
        assert r.get("limits:player-id:p_0ld") == hashed.encode()
    finally:
        r.close()


async def test_a_post_body_over_the_frame_limit_is_refused_unread(live):
    async with httpx.AsyncClient(base_url=live.http) as http:
        body = b'{"game": "loco_poker", "pad": "' + b"x" * (TEST_SETTINGS.max_frame + 10) + b'"}'
        r = await http.post("/api/tables", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and r.json()["code"] == "frame_too_large"

        async def chunks():  # no Content-Length: the bound holds while reading
            yield body[:1000]
            yield body[1000:]
        r = await http.post("/api/tables", content=chunks(), headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and r.json()["code"] == "frame_too_large"
    assert not live.hall.tables
