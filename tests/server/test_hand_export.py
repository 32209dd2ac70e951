"""``GET /api/tables/{id}/hands`` through HTTP on a live server (SPEC "HTTP"):

* a long history is streamed: a chunked body whose every chunk holds a
  bounded number of hands, read from the store (memory, and Redis with its
  ranged reads) a batch at a time, and exactly the export of every hand;
* a quarantined table (``server/STORAGE.md``, "Quarantine") never serves its
  unfinished match (RULES G-2), whether its stored state is unreadable or
  readable.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import replace
from urllib.parse import urlsplit

import httpx
import msgpack
import orjson
import pytest
import redis.asyncio as aioredis

from cardhall.engine import phh
from cardhall.server.store.base import Checkpoint, Store, StoreUnavailable
from cardhall.server.store.format import pack_state, unpack_state
from cardhall.server.store.keys import Keys
from cardhall.server.store.memory import MemoryStore
from cardhall.server.store.redis import RedisStore
from tests.conftest import until
from tests.games import quick
from tests.server.conftest import TEST_SETTINGS, LiveServer, running_server
from tests.server.play import play

SETTINGS = replace(TEST_SETTINGS, event_buffer=256, store_retry=0.1)
PREFIX = "export"
#: the most hands a chunk of the body may hold (the server's batch is below it)
CHUNK_HANDS = 64
COPIES = 300  # hands of the long history


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
def stores(request) -> tuple[str, Callable[[], Store]]:
    """The kind and a maker of each server's store: one memory store kept
    across restarts, or a new Redis store on the test's own Redis."""
    if request.param == "memory":
        kept = MemoryStore(1024, keep_states=True)
        return "memory", lambda: kept
    redis_server = request.getfixturevalue("redis_server")
    return redis_server.url, lambda: RedisStore(redis_server.url, prefix=PREFIX, stream_bound=1024)


async def _get_chunks(base: str, path: str) -> tuple[int, dict[str, str], list[bytes], bool]:
    """GET ``path`` over a raw socket: status, headers, the body's chunks as
    the server framed them (one item, the whole body, when it is not
    chunked), and whether the body ended properly (its final empty chunk, or
    its ``Content-Length``)."""
    url = urlsplit(base)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {url.netloc}\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 20)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    if headers.get("transfer-encoding") != "chunked":
        return status, headers, [body], len(body) == int(headers.get("content-length", -1))
    chunks = []
    while True:
        size_line, found, body = body.partition(b"\r\n")
        if not found:
            return status, headers, chunks, False
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return status, headers, chunks, True
        if len(body) < size + 2:
            return status, headers, chunks, False
        chunks.append(body[:size])
        assert body[size:size + 2] == b"\r\n"
        body = body[size + 2:]


async def _finished_bot_match(srv: LiveServer, game: str) -> str:
    """A bots-only table of ``game`` whose first match ended (quick options)."""
    seats = 2
    async with httpx.AsyncClient(base_url=srv.http) as http:
        spec = {"game": game, "seats": seats, "bots": seats,
                "options": quick(game, pause=0, bot_think=0)}
        table = (await http.post("/api/tables", json=spec)).json()["table"]

        async def finished() -> bool:
            return (await http.get(f"/api/tables/{table}")).json()["status"] == "finished"

        await until(finished, 60, f"the end of the {game} match")
    return table


async def _store_long_history(kind: str, store: Store, table: str, records: list[dict]) -> None:
    """``records`` as the stored hands of the closed table ``table`` (its state gone, G-9)."""
    if kind == "memory":
        await store.commit([Checkpoint(table, {"id": table}, [], records)])
        await store.delete_table(table)
        return
    db = aioredis.Redis.from_url(kind)
    await db.rpush(Keys(PREFIX).hands(table), *[msgpack.packb(r) for r in records])
    await db.aclose()


@pytest.mark.parametrize("game", ["no_limit_holdem", "alamo"])
async def test_a_long_history_is_streamed_a_bounded_batch_at_a_time(stores, game):
    kind, make = stores
    store = make()
    settings = SETTINGS if kind == "memory" else replace(SETTINGS, redis_url=kind, redis_prefix=PREFIX)
    async with running_server(settings, store if kind == "memory" else None) as srv:
        played = await _finished_bot_match(srv, game)
        one_match = await srv.hall.store.hands(played)
        assert one_match
        records = [{**one_match[i % len(one_match)], "match": 1 + i // 50, "seq": i + 1} for i in range(COPIES)]
        long = "t_" + "0123456789ab"
        await _store_long_history(kind, srv.hall.store, long, records)

        status, headers, chunks, complete = await _get_chunks(srv.http, f"/api/tables/{long}/hands")
        assert status == 200 and complete
        assert headers.get("transfer-encoding") == "chunked" and "content-length" not in headers
        body = b"".join(chunks)
        if game in phh.GAME_VARIANTS:
            assert headers["content-type"].startswith("text/plain")
            per_chunk = [len(re.findall(rb"^\[\d+\]$", c, re.M)) for c in chunks]
            assert body.decode() == phh.dumps_all({**r["hand"], "_cardhall_match": r["match"]} for r in records)
        else:
            assert headers["content-type"] == "application/json"
            per_chunk = [c.count(b'{"match":') for c in chunks]
            assert orjson.loads(body) == {"table": long, "game": game,
                                          "hands": [{"match": r["match"], "hand": r["hand"]} for r in records]}
        assert sum(per_chunk) == COPIES
        assert max(per_chunk) <= CHUNK_HANDS and len([n for n in per_chunk if n]) >= COPIES // CHUNK_HANDS

        # the table that played is still open: its finished match is served, and only it
        async with httpx.AsyncClient(base_url=srv.http) as http:
            r = await http.get(f"/api/tables/{played}/hands")
            assert r.status_code == 200
            served = (len(phh.loads_all(r.text)) if game in phh.GAME_VARIANTS else len(r.json()["hands"]))
            assert served == len(one_match)
            assert (await http.get("/api/tables/t_000000000000/hands")).status_code == 404
    if kind != "memory":
        await store.close()


async def _two_hands_then_stop(srv: LiveServer) -> list[str]:
    """Two fixed-limit tables, two people each, two hands played at each (the
    match goes on: stacks of 2,000 cannot bust in two hands); then everyone leaves."""
    tables, clients = [], []
    for n in range(2):
        ann, bob = await srv.client(f"ann{n}"), await srv.client(f"bob{n}")
        table = await ann.create_table("fixed_limit_holdem", seats=2, options={
            "pause": 0, "action_clock": 120, "starting_stacks": 2000})
        await ann.join(table, role="player", seat=1)
        await bob.join(table, role="player", seat=2)
        for _ in range(2):
            await asyncio.gather(play(ann, table, "a", until="hand_end", timeout=60),
                                 play(bob, table, "b", until="hand_end", timeout=60))
        tables.append(table)
        clients += [ann, bob]
    for c in clients:
        await c.close()
    return tables


async def _state(store: Store, table: str) -> dict:
    if isinstance(store, MemoryStore):
        state = store.state(table)
    else:
        assert isinstance(store, RedisStore)
        blob = await store.raw_state(table)
        state = None if blob is None else unpack_state(blob)
    assert state is not None
    return state


async def _put(store: Store, table: str, blob: bytes) -> None:
    if isinstance(store, MemoryStore):
        store.put_raw_state(table, blob)
    else:
        assert isinstance(store, RedisStore)
        await store.client.set(store.keys.state(table), blob)


async def test_a_quarantined_table_never_serves_its_unfinished_match(stores):
    kind, make = stores
    settings = SETTINGS if kind == "memory" else replace(SETTINGS, redis_url=kind, redis_prefix=PREFIX)
    async with running_server(settings, make() if kind == "memory" else None) as srv:
        unreadable, broken = await _two_hands_then_stop(srv)
        async with httpx.AsyncClient(base_url=srv.http) as http:
            for table in (unreadable, broken):  # open: the running match is not served (G-2)
                assert (await http.get(f"/api/tables/{table}/hands")).text == ""
    store = make()
    assert len(await store.hands(unreadable)) == 2 and len(await store.hands(broken)) == 2
    state = await _state(store, broken)
    assert state["match"] == 1 and state["status"] == "running"
    await _put(store, unreadable, b"\x92\xa3not a checkpoint")
    await _put(store, broken, pack_state({**state, "status": "broken"}))
    if kind != "memory":
        await store.close()
    async with running_server(settings, make() if kind == "memory" else None) as srv:
        assert set(srv.hall.quarantined) == {unreadable, broken} and not srv.hall.tables
        async with httpx.AsyncClient(base_url=srv.http) as http:
            for table in (unreadable, broken):
                r = await http.get(f"/api/tables/{table}/hands")
                assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
                assert phh.loads_all(r.text) == [], f"{table}: hands of its unfinished match were served"


class _HandsFailMidway(MemoryStore):
    """A memory store whose hand reads fail past the first 64 records, as a
    Redis that stops answering in the middle of a long export."""

    async def hands_range(self, table: str, start: int, stop: int) -> list[dict]:
        if start >= CHUNK_HANDS:
            raise StoreUnavailable("redis: ConnectionError: the store stopped answering")
        return await super().hands_range(table, start, stop)


async def test_a_store_failing_midway_cuts_the_export_off():
    store = _HandsFailMidway(1024, keep_states=True)
    async with running_server(SETTINGS, store) as srv:
        played = await _finished_bot_match(srv, "no_limit_holdem")
        one_match = await store.hands(played)
        records = [{**one_match[i % len(one_match)], "match": 1, "seq": i + 1} for i in range(COPIES)]
        long = "t_" + "fedcba987654"
        await _store_long_history("memory", store, long, records)
        status, headers, chunks, complete = await _get_chunks(srv.http, f"/api/tables/{long}/hands")
        assert status == 200 and chunks  # the first hands went out
        assert not complete, "a partial history ended as if it were whole"
        async with httpx.AsyncClient(base_url=srv.http) as http:  # and the server goes on
            assert (await http.get("/healthz")).status_code == 200
