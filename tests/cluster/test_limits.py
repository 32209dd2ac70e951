"""The per-address and per-player limits through nginx in front of three nodes
(SPEC "Limits", deploy/README.md "Limits for newcomers"): a client whose
connections and requests are spread over the nodes (nginx's ``least_conn``,
the ``least_loaded`` placement) meets each limit at the same count as on one
node, with the same code:

* open tables per address: the fourth table of ``--max-tables-per-address 3``
  is refused (``too_many_tables``, HTTP 429), whichever node it would go to;
* new players per address: the fourth ``hello`` without a token of
  ``--new-players-per-address 3`` is refused (``rate_limited``);
* chat per player: one player's connections on three nodes share one budget;
  and per address: its players on three nodes share one address budget
  (``rate_limited`` "from this address"), another address's players are not affected;
* websockets per address: the fourth of ``--max-connections-per-ip 3`` is
  refused at its handshake (403), and one closed makes room again.

Each test speaks from a loopback address of its own (``127.0.0.N``: nginx
forwards it, the nodes trust nginx), so the tests share one cluster for the
module without sharing a count.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio
from websockets.exceptions import InvalidStatus

from cardhall.clients.client import Client, ServerError
from cardhall.server.chat import ADDRESS_BURST, ADDRESS_RATE, BURST, RATE
from cardhall.server.store.redis_limits import HOLD
from tests.cluster.conftest import require_cluster_tools
from tests.cluster.harness import Cluster
from tests.conftest import code_of, until

pytestmark = [pytest.mark.redis, pytest.mark.asyncio(loop_scope="module")]

#: the limits under test, small; the bots and the frame rate out of the way
LIMITS = ["--max-tables-per-address", "3", "--max-tables-per-player", "20", "--new-players-per-address", "3",
          "--new-players-window", "3600", "--max-connections-per-ip", "3", "--bot-think-floor", "0"]
WAITING_TABLE = {"game": "loco_poker", "seats": 3}  # nobody plays it


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(request: pytest.FixtureRequest) -> AsyncIterator[Cluster]:
    """Three nodes with :data:`LIMITS` behind nginx, for the whole module
    (the logs printed if a test of the module failed)."""
    require_cluster_tools()
    made = Cluster(3, node_args=LIMITS)
    await made.start()
    failed = request.session.testsfailed
    try:
        yield made
    finally:
        if request.session.testsfailed > failed:
            print(made.log_tails())
        await made.stop()


async def client(cluster: Cluster, address: str, token: str | None = None, name: str = "p") -> Client:
    """A client through nginx from ``address`` (a loopback address), after its ``hello``."""
    c = await Client(cluster.nginx.ws, local_addr=(address, 0)).connect()
    await c.hello(name, token=token)
    return c


async def where(cluster: Cluster, tables: list[str]) -> dict[str, str]:
    """The node serving each of ``tables``, from ``GET /api/cluster`` (the nodes' heartbeats)."""
    async with httpx.AsyncClient(base_url=cluster.nginx.http) as http:
        nodes = (await http.get("/api/cluster", headers={"X-Operator-Key": cluster.operator_key})).json()["nodes"]
    return {t: n["id"] for n in nodes for t in n.get("table_ids", ()) if t in tables}


async def test_the_fourth_table_from_one_address_is_refused_on_any_node(cluster: Cluster):
    address = "127.0.0.11"
    first = await client(cluster, address)
    spread = [first, await client(cluster, address, token=first.token), await client(cluster, address, name="q")]
    made: list[str] = []
    try:
        codes = []
        for i in range(6):  # round the connections: each request may reach another node, each table another node
            try:
                made.append(await spread[i % 3].create_table(**WAITING_TABLE))
                codes.append("ok")
            except ServerError as exc:
                codes.append(f"{exc.code}: {exc.message.rpartition(' per ')[2]}")
        assert codes == ["ok"] * 3 + ["too_many_tables: client address"] * 3, codes
        await until(lambda: _located(cluster, made), 15, "the tables' nodes known")
        assert len(set((await where(cluster, made)).values())) >= 2  # more than one node held them
        transport = httpx.AsyncHTTPTransport(local_address=address)
        async with httpx.AsyncClient(base_url=cluster.nginx.http, transport=transport) as http:
            for headers in ({}, {"Authorization": f"Bearer {first.token}"}):
                r = await http.post("/api/tables", json=WAITING_TABLE, headers=headers)
                assert r.status_code == 429 and r.json()["code"] == "too_many_tables", r.text
            r = await http.post(f"/api/ops/tables/{made[0]}/close", headers={"X-Operator-Key": cluster.operator_key})
            assert r.status_code in (200, 202), r.text
            # closed on its node: its count is released there, for every node
            await until(lambda: _created(http), 15, "the address's room back")
    finally:
        for c in spread:
            await c.close()


async def _created(http: httpx.AsyncClient) -> bool:
    r = await http.post("/api/tables", json=WAITING_TABLE)
    assert r.status_code in (201, 429), r.text
    return r.status_code == 201


async def _located(cluster: Cluster, tables: list[str]) -> bool:
    return len(await where(cluster, tables)) == len(tables)


async def test_the_fourth_new_player_from_one_address_is_refused_on_any_node(cluster: Cluster):
    address = "127.0.0.12"
    spread = [await Client(cluster.nginx.ws, local_addr=(address, 0)).connect() for _ in range(3)]
    try:
        codes, tokens = [], []
        for i in range(6):
            spread[i % 3].token = None  # hello without a token: a new player
            codes.append(await code_of(spread[i % 3].hello(f"p{i}")))
            tokens.append(spread[i % 3].token)
        assert codes == ["ok"] * 3 + ["rate_limited: 3600 s from one address; say hello with your token, or retry later"] * 3, codes
        assert await code_of(spread[1].hello("again", token=tokens[0])) == "ok"  # a token is never limited
    finally:
        for c in spread:
            await c.close()


async def test_one_players_chat_on_three_nodes_shares_one_budget(cluster: Cluster):
    address = "127.0.0.13"
    first = await client(cluster, address)
    spread = [first, await client(cluster, address, token=first.token), await client(cluster, address, token=first.token)]
    try:
        table = await first.create_table(**WAITING_TABLE)
        for c in spread:
            await c.join(table, role="spectator")
        started = time.monotonic()
        sent = 0
        while True:
            code = await code_of(spread[sent % 3].chat(table, f"line {sent}"))
            if code != "ok":
                break
            sent += 1
            assert sent < 3 * BURST, "every connection had a budget of its own"
        elapsed = time.monotonic() - started
        assert code == "rate_limited: 10 s", code
        assert BURST <= sent <= BURST + int(elapsed * RATE), (sent, elapsed)  # one bucket: refilled only by time
    finally:
        for c in spread:
            await c.close()


async def test_the_players_of_one_address_on_three_nodes_share_one_chat_budget(cluster: Cluster):
    """Three players (the address's new-player and websocket allowance), one
    connection each, use up the address's burst with their own; a fourth
    player said hello on one of those connections is refused on the address's
    count; a player from another address is not. The connection that changes
    players joins no table (``hello`` again needs that): its messages are
    counted first, then answered ``not_joined`` (SPEC "Chat", the order of the checks)."""
    address = "127.0.0.15"
    spread = [await client(cluster, address, name=f"n{i}") for i in range(3)]
    elsewhere = [await client(cluster, "127.0.0.16", name=f"o{i}") for i in range(2)]
    try:
        table = await elsewhere[0].create_table(**WAITING_TABLE)
        for c in spread[:2] + elsewhere:
            await c.join(table, role="spectator")
        started = time.monotonic()
        codes = [await code_of(spread[i % 3].chat(table, f"line {i}")) for i in range(int(ADDRESS_BURST))]
        assert [c.partition(":")[0] for c in codes] == ["ok", "ok", "not_joined"] * int(BURST), codes
        fourth = spread[2]
        await fourth.hello("fourth", token=elsewhere[1].token)
        extra = 0
        while True:
            try:
                await fourth.chat(table, f"extra {extra}")
            except ServerError as exc:
                if exc.code == "not_joined":
                    extra += 1
                    assert extra < BURST, "the address's count never refused"
                    continue
                refused = exc
                break
        elapsed = time.monotonic() - started
        assert refused.code == "rate_limited" and "from this address" in refused.message, refused
        assert extra <= int(elapsed * ADDRESS_RATE), (extra, elapsed)  # one bucket: refilled only by time
        assert await code_of(elsewhere[0].chat(table, "another address")) == "ok"
    finally:
        for c in spread + elsewhere:
            await c.close()


async def _open(cluster: Cluster, address: str) -> Client | None:
    """A websocket through nginx from ``address``, or None when its handshake is refused (403)."""
    c = Client(cluster.nginx.ws, local_addr=(address, 0))
    try:
        return await c.connect()
    except InvalidStatus as exc:
        assert exc.response.status_code == 403, exc
        return None


async def test_the_fourth_websocket_from_one_address_is_refused_on_any_node(cluster: Cluster):
    address = "127.0.0.14"
    held = [await _open(cluster, address) for _ in range(3)]
    try:
        assert all(held)
        assert [await _open(cluster, address) for _ in range(3)] == [None] * 3  # whichever node each reaches
        gone = held.pop()
        assert gone is not None
        await gone.close()
        reopened: list[Client] = []

        async def reopen() -> bool:
            c = await _open(cluster, address)
            if c is not None:
                reopened.append(c)
            return c is not None
        took = await until(reopen, HOLD + 10, "a websocket admitted once one closed")
        held += reopened
        assert took <= HOLD + 5, took  # a refusal is held on its node for HOLD at most
        assert await _open(cluster, address) is None
    finally:
        for c in held:
            if c is not None:
                await c.close()
