"""Table passwords tried, counted per player and per client address on every
node together (SPEC "Limits", "Private tables"; server/limits.py,
server/store/redis_buckets.py): in memory and in Redis, the same counts and
refusals, a right password given back; two :class:`RedisLimits` on one
prefix share one count; and two live nodes on one Redis refuse a player's
and an address's tries made on the other node. Per connection the count
stays on its node (``test_private_tables.py``)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest

from cardhall.clients.client import Client
from cardhall.protocol.errors import ProtocolError
from cardhall.server.config import Settings
from cardhall.server.limits import PASSWORD_TRIES, Limits, MemoryLimits
from cardhall.server.store.redis import RedisStore
from cardhall.server.store.redis_limits import RedisLimits
from tests.server.conftest import TEST_SETTINGS, LiveServer, RedisServer, running_server
from tests.server.test_private_tables import create, join, refused

#: the refusal once the tries are spent: the wait is the bucket's time to the
#: next try (10 s when full), one second less for each that passed since
REFUSAL = re.compile(r"too many table passwords tried: retry in ([1-9]|10) s")


def refusal_of(text: str | None) -> bool:
    """Whether ``text`` is ``rate_limited: `` and the documented refusal."""
    return text is not None and text.startswith("rate_limited: ") and bool(REFUSAL.fullmatch(text[14:]))


async def _refusal(awaitable: Any) -> str | None:
    """``code: message`` of the ProtocolError ``awaitable`` raises, None if it returns."""
    try:
        await awaitable
    except ProtocolError as exc:
        return f"{exc.code}: {exc.message}"
    return None


async def _redis_limits(url: str, prefix: str, stores: list[RedisStore], name: str) -> RedisLimits:
    store = RedisStore(url, prefix=prefix, timeout=3.0)
    stores.append(store)
    return RedisLimits(store, Settings(), f"{name}|{len(stores)}", lambda: [])


@pytest.fixture(params=["memory", "redis"])
async def two(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Limits, Limits]]:
    """Two nodes' limits sharing one count: in memory one :class:`MemoryLimits`
    twice (one process), in Redis two :class:`RedisLimits` on one prefix."""
    if request.param == "memory":
        one = MemoryLimits(Settings())
        yield one, one
        return
    url = request.getfixturevalue("redis_server").url
    stores: list[RedisStore] = []
    try:
        yield await _redis_limits(url, "pw", stores, "n1"), await _redis_limits(url, "pw", stores, "n2")
    finally:
        for store in stores:
            await store.close()


async def test_tries_count_per_player_and_per_address_and_right_ones_come_back(two: tuple[Limits, Limits]) -> None:
    n1, n2 = two
    for i in range(PASSWORD_TRIES):  # one player's tries from addresses a and b, on both nodes
        await (n1, n2)[i % 2].password_try("p1", "ab"[i % 2])
    for node in (n1, n2):
        assert refusal_of(await _refusal(node.password_try("p1", "c")))
    await n2.password_right("p1", "c")  # a right one given back: the player may try once more
    assert await _refusal(n1.password_try("p1", "c")) is None
    assert await _refusal(n1.password_try("p1", "c")) is not None
    # address a: p1 used 3 of its tries; two more players, then a's count is full for anyone
    await n2.password_try("p2", "a")
    await n1.password_try(None, "a")  # an HTTP request's: its address only
    assert refusal_of(await _refusal(n2.password_try("p3", "a")))
    assert await _refusal(n1.password_try(None, "a")) is not None
    assert await _refusal(n1.password_try("p3", "d")) is None  # p3's token went with a's refusal; d is fresh


@pytest.mark.redis
async def test_two_nodes_refuse_the_tries_made_on_the_other(redis_server: RedisServer) -> None:
    """A guesser's wrong passwords on node a count on node b, per player (its
    token from another address) and per address (another player there)."""
    base = replace(TEST_SETTINGS, redis_url=redis_server.url, redis_prefix="pwnodes", placement="local")
    async with running_server(replace(base, node_id="a")) as a, running_server(replace(base, node_id="b")) as b:
        ann = await a.client("ann")
        table = (await create(ann, {"password": "sesame"}))["table"]
        guesser = await _from(a, "127.0.0.2", "guesser")
        for n in range(PASSWORD_TRIES):
            assert (await refused(join(guesser, table, password=f"guess {n}"))).code == "bad_password"
        same_player = await _from(b, "127.0.0.3", "guesser", token=guesser.token)  # b, another address
        limited = await refused(join(same_player, table, password="sesame"))  # even the right one
        assert refusal_of(f"{limited.code}: {limited.message}")
        neighbour = await _from(b, "127.0.0.2", "neighbour")  # b, the guesser's address, another player
        assert (await refused(join(neighbour, table, password="sesame"))).code == "rate_limited"
        elsewhere = await _from(b, "127.0.0.4", "elsewhere")
        assert (await join(elsewhere, table, password="sesame"))["you"] == 1
        for client in (ann, guesser, same_player, neighbour, elsewhere):
            await client.close()


async def _from(node: LiveServer, address: str, name: str, token: str | None = None) -> Client:
    """A client of ``node`` connecting from local ``address`` (``token``: an existing player's)."""
    client = await Client(node.url, record=True, local_addr=(address, 0)).connect()
    await client.hello(name, token=token)
    return client
