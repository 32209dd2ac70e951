"""``rename`` through the public protocol (SPEC "Names", 1.4), over real
websockets against a live server: in every game a seated player renamed
during a hand, on its turn, keeps its seat and acts on; the other player and
a spectator get ``renamed`` with the seat; ``info.occupants``, later ``chat``
events and a fresh join's snapshot show the new name; the table it owns
stays its own. A spectator's rename (seat null), a refused name (nothing
changes), the rate per player, the name kept with the token (memory, Redis,
a restart on the same Redis), two nodes of a cluster on one Redis (a
player connected to one node, seated at a table the other serves), and
the stores' part: the name by id, the token's record, the caches, the
keys' expiry and a rewrite after Redis lost its data."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import msgpack
import pytest
import redis.asyncio as aioredis

from cardhall.clients.client import Client, ServerError
from cardhall.engine.bots.random_bot import RandomBot
from cardhall.engine.rng import FairRandom
from cardhall.server.limits import RENAME_BURST
from cardhall.server.store.base import Store
from cardhall.server.store.keys import Keys
from cardhall.server.store.memory import MemoryStore
from cardhall.server.store.redis import RedisStore
from cardhall.server.table.inputs import REJOIN, Join, Rename
from tests.conftest import until
from tests.games import GAMES
from tests.server.conftest import TEST_SETTINGS, RedisServer, running_server
from tests.server.play import event_frames, play
from tests.server.table.harness import code, two_players

#: nothing times out while the test looks, no pauses between streets
SLOW_CLOCKS = {"pause": 0, "bot_think": 0, "action_clock": 120, "time_bank": 120}
#: a table that waits (three seats, one bot): no game events between the requests
WAITING = {"pause": 0, "bot_think": 0}


def _renamed(client: Client, table: str) -> list[dict[str, Any]]:
    """The ``renamed`` events ``client`` received at ``table``, in order."""
    return [f["event"] for f in event_frames(client, table) if f["event"]["type"] == "renamed"]


async def _next(client: Client, table: str, kind: str) -> dict[str, Any]:
    """The next event of type ``kind`` at ``table`` from ``client``'s inbox."""
    return (await client.next_event(table, timeout=30, where=lambda f: f["event"]["type"] == kind))["event"]


def _occupant(info: dict[str, Any], seat: int) -> dict[str, Any]:
    return next(o for o in info["occupants"] if o["seat"] == seat)


@pytest.mark.parametrize("game", GAMES)
async def test_a_player_renamed_on_its_turn_keeps_its_seat_and_plays_on(live, game):
    ann = await live.client("ann")
    bob = await live.client("bob", codec="json")
    eve = await live.client("eve")
    table = await ann.create_table(game, seats=2, options=SLOW_CLOCKS)
    await eve.join(table, role="spectator")
    await ann.join(table, role="player", seat=1)
    await bob.join(table, role="player", seat=2)  # the last seat: the match starts
    bob_plays = asyncio.get_running_loop().create_task(play(bob, table, "bob's moves", timeout=120))
    try:
        turn = await ann.next_event(table, timeout=60, where=lambda f: "legal" in f)  # ann's turn, mid-hand
        assert (await ann.rename("  Zoë   the\u00a0great ")) == "Zoë the great"
        expected = {"type": "renamed", "player": ann.player, "seat": 1, "name": "Zoë the great"}
        assert await _next(eve, table, "renamed") == expected
        assert await _next(ann, table, "renamed") == expected
        await until(lambda: _renamed(bob, table) == [expected], timeout=30, what="bob told of the new name")
        # still ann's seat and ann's turn: she acts on it, and the hand goes on
        action = RandomBot(FairRandom(b"ann's move")).choose({}, turn["legal"])
        before = ann.seqs[table]
        assert (await ann.act(table, action, turn=turn["turn"]["id"]))["type"] == "ok"
        assert ann.seqs[table] > before  # the action's events came before its ok
        # later chat, a fresh join's snapshot and the owner's control
        await ann.chat(table, "hello")
        chat = await _next(eve, table, "chat")
        assert (chat["seat"], chat["name"], chat["from"]) == (1, "Zoë the great", ann.player)
        carol = await live.client("carol")
        snap = await carol.join(table, role="spectator")
        assert _occupant(snap["info"], 1)["name"] == "Zoë the great"
        assert _occupant(snap["info"], 1)["player"] == ann.player
        assert snap["info"]["owner"] == ann.player
        await ann.act(table, {"type": "spectator_chat", "on": False})
        assert await _next(eve, table, "spectator_chat") == {"type": "spectator_chat", "on": False}
        assert not bob_plays.done() or bob_plays.exception() is None
    finally:
        bob_plays.cancel()
        with contextlib.suppress(asyncio.CancelledError, ServerError, ConnectionError, TimeoutError):
            await bob_plays


async def test_a_spectator_a_refused_name_and_the_same_name(live):
    ann = await live.client("ann")
    eve = await live.client("eve", codec="json")
    table = await ann.create_table("loco_poker", seats=3, bots=1, options=WAITING)
    await ann.join(table, role="player", seat=1)
    await eve.join(table, role="spectator")
    assert await eve.rename("Eve 2") == "Eve 2"
    expected = {"type": "renamed", "player": eve.player, "seat": None, "name": "Eve 2"}
    assert await _next(ann, table, "renamed") == expected
    assert await _next(eve, table, "renamed") == expected
    await eve.chat(table, "hi")
    assert (await _next(ann, table, "chat"))["name"] == "Eve 2"
    # refused names: bad_request naming the request; nothing changes, nobody is told
    for bad in ("bot 3", "", "x" * 41, "a\nb", "\u200b", 7):
        await ann.send({"type": "rename", "name": bad, "id": "r1"})
        frame = await ann.next_frame()
        while frame.get("re") != "r1":
            frame = await ann.next_frame()
        assert (frame["type"], frame["code"]) == ("error", "bad_request"), bad
    with pytest.raises(ServerError) as err:
        await ann.request({"type": "rename"})
    assert err.value.code == "bad_request"
    # the same name again: ok, nothing to tell; the only renamed event up to a later chat is eve's
    assert await ann.rename("ann") == "ann"
    await ann.chat(table, "marker")
    after = await eve.next_event(table, where=lambda f: f["event"]["type"] == "chat" and f["event"]["text"] == "marker")
    assert after["event"]["name"] == "ann"
    assert _renamed(eve, table) == [expected]
    assert _occupant((await eve.join(table, role="spectator"))["info"], 1)["name"] == "ann"


async def test_before_hello_and_past_the_rate(live):
    fresh = await Client(live.url, record=True).connect()
    with pytest.raises(ServerError) as err:
        await fresh.request({"type": "rename", "name": "early"})
    assert err.value.code == "hello_required"
    await fresh.close()
    ann = await live.client("ann")
    other = await Client(live.url).connect()
    await other.hello("x", token=ann.token)  # the same player on a second connection shares the count
    for i in range(int(RENAME_BURST)):
        await (ann, other)[i % 2].rename(f"ann {i}")
    assert await ann.rename(f"ann {int(RENAME_BURST) - 1}") == f"ann {int(RENAME_BURST) - 1}"  # unchanged: free
    await other.send({"type": "rename", "name": "one too many", "id": "flood"})
    frame = await other.next_frame()
    while frame.get("re") != "flood":
        frame = await other.next_frame()
    assert (frame["type"], frame["code"]) == ("error", "rate_limited")
    bob = await live.client("bob")
    assert await bob.rename("bobby") == "bobby"  # another player has its own budget
    await other.close()


async def _welcome_name(url: str, token: str) -> str:
    client = await Client(url).connect()
    try:
        return str((await client.hello("ignored", token=token))["name"])
    finally:
        await client.close()


async def test_the_name_stays_with_the_token_in_memory(live):
    ann = await live.client("ann")
    table = await ann.create_table("loco_poker", seats=3, bots=1, options=WAITING)
    await ann.join(table, role="player", seat=1)
    await ann.rename("Ann B.")
    await ann.close()
    assert await _welcome_name(live.url, ann.token) == "Ann B."
    back = await Client(live.url).connect()
    await back.hello("ignored", token=ann.token)
    snap = await back.join(table, role="player")
    assert snap["you"] == 1 and _occupant(snap["info"], 1)["name"] == "Ann B."
    await back.close()


@pytest.mark.redis
async def test_the_name_stays_with_the_token_on_redis_and_after_a_restart(redis_server: RedisServer):
    settings = replace(TEST_SETTINGS, redis_url=redis_server.url, redis_prefix="rename")
    async with running_server(settings) as srv:
        ann = await srv.client("ann")
        table = await ann.create_table("loco_poker", seats=3, bots=1, options=WAITING)
        await ann.join(table, role="player", seat=1)
        await ann.rename("Ann R.")
        await ann.close()
        assert await _welcome_name(srv.url, ann.token) == "Ann R."
        assert await srv.hall.store.player_name(ann.player) == "Ann R."
        assert await srv.hall.store.player_name("p_never_renamed") is None
    async with running_server(settings) as srv:  # a new process's cache: read from Redis
        assert await _welcome_name(srv.url, ann.token) == "Ann R."
        back = await Client(srv.url).connect()
        await back.hello("ignored", token=ann.token)
        await until(lambda: table in srv.hall.tables, timeout=20, what="the table restored")
        snap = await back.join(table, role="player")
        assert snap["you"] == 1 and _occupant(snap["info"], 1)["name"] == "Ann R."
        await back.close()


@pytest.mark.redis
async def test_a_rename_on_one_node_reaches_a_table_another_node_serves(redis_server: RedisServer):
    base = replace(TEST_SETTINGS, redis_url=redis_server.url, redis_prefix="rename-nodes", placement="local",
                   lease_ttl=1.5, lease_renew=0.3)
    async with running_server(replace(base, node_id="a")) as a, running_server(replace(base, node_id="b")) as b:
        await until(lambda: {"a", "b"} <= set(a.hall.topology.node.live) and {"a", "b"} <= set(b.hall.topology.node.live),
                    timeout=20, what="each node sees the other")
        bob = await b.client("bob")
        table = await bob.create_table("loco_poker", seats=3, bots=1, options=WAITING)
        assert table in b.hall.tables
        await bob.join(table, role="player", seat=2)
        ann = await a.client("ann")  # on node a; the table is served by node b
        await ann.join(table, role="player", seat=1)
        assert await ann.rename("Ann on A") == "Ann on A"
        expected = {"type": "renamed", "player": ann.player, "seat": 1, "name": "Ann on A"}
        assert await _next(bob, table, "renamed") == expected
        assert await _next(ann, table, "renamed") == expected
        assert b.hall.tables[table].machine.seats[1].name == "Ann on A"
        await ann.chat(table, "from a")
        assert (await _next(bob, table, "chat"))["name"] == "Ann on A"


# -- the stores ------------------------------------------------------------------------------------

@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def store(request) -> AsyncIterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
        return
    server = request.getfixturevalue("redis_server")
    redis_store = RedisStore(server.url, prefix="names", player_ttl=3600)
    try:
        yield redis_store
    finally:
        await redis_store.close()


async def test_a_store_keeps_the_name_by_id_and_in_the_tokens_record(store: Store):
    await store.save_player("p_1", "ab" * 32, "ann")
    await store.save_player("p_1", "cd" * 32, "ann")  # a second token of the same player (another device)
    assert await store.find_player("cd" * 32) == ("p_1", "ann")
    assert await store.player_name("p_1") is None
    await store.rename_player("p_1", "ab" * 32, "Ann B.")
    assert await store.player_name("p_1") == "Ann B."
    assert await store.find_player("ab" * 32) == ("p_1", "Ann B.")
    assert await store.find_player("cd" * 32) == ("p_1", "Ann B.")
    await store.forget_player("ab" * 32)  # this process forgets one token: the other keeps the name
    assert await store.find_player("cd" * 32) == ("p_1", "Ann B.")
    await store.rename_player("p_2", "", "Guest")  # no token known: the name by id alone
    assert await store.player_name("p_2") == "Guest"


@pytest.mark.redis
async def test_redis_nodes_read_the_name_keep_it_in_their_caches_and_write_it_back(redis_server: RedisServer):
    one = RedisStore(redis_server.url, prefix="names", player_ttl=3600)
    two = RedisStore(redis_server.url, prefix="names", player_ttl=3600)
    db = aioredis.Redis.from_url(redis_server.url)
    keys = Keys("names")
    try:
        await one.save_player("p_1", "ab" * 32, "ann")
        assert await two.find_player("ab" * 32) == ("p_1", "ann")  # now in two's cache
        await one.rename_player("p_1", "", "Ann B.")  # the token's record found by the player's id
        assert msgpack.unpackb(await db.get(keys.player("ab" * 32))) == ["p_1", "Ann B."]
        assert 0 < await db.ttl(keys.player_name("p_1")) <= 3600
        assert await two.find_player("ab" * 32) == ("p_1", "ann")  # its cache, until told
        two.player_renamed("p_1", "ab" * 32, "Ann B.")
        assert await two.find_player("ab" * 32) == ("p_1", "Ann B.")
        # a record a cut write left with the old name reads as the renamed one on a node without it
        await db.set(keys.player("ab" * 32), msgpack.packb(["p_1", "ann"]))
        fresh = RedisStore(redis_server.url, prefix="names")
        assert await fresh.find_player("ab" * 32) == ("p_1", "Ann B.")
        await fresh.close()
        await db.persist(keys.player_name("p_1"))
        await one.touch_players(["p_1"])
        assert 0 < await db.ttl(keys.player_name("p_1")) <= 3600
        await db.flushall()  # Redis lost its data: the players this node knows are written again, renamed too
        await one.rewrite([])
        assert await one.player_name("p_1") == "Ann B."
    finally:
        await db.aclose()
        await one.close()
        await two.close()


# -- the table machine -----------------------------------------------------------------------------

def test_the_table_names_the_seat_and_learns_a_missed_rename_from_a_join():
    bench = two_players()
    bench.join("w", "wes")  # a spectator
    logged = bench.m.logged
    bench.step(Rename("p_nobody", "x"))  # neither seated nor watching: nothing happens, nothing is logged
    assert bench.m.logged == logged and not [r for r in bench.records if r.event.type == "renamed"]
    bench.step(Rename("wes", "Wes"))
    bench.step(Rename("bob", "Bob B."))
    assert [r.event.data for r in bench.records if r.event.type == "renamed"] == [
        {"type": "renamed", "player": "wes", "seat": None, "name": "Wes"},
        {"type": "renamed", "player": "bob", "seat": 2, "name": "Bob B."}]
    assert bench.m.seats[2].name == "Bob B." and bench.m.seats[2].player == "bob"
    # a join as a player with another name than the seat's (the table missed a rename): the seat takes it
    answer = bench.join("a2", "ann", "Ann A.", role="player")
    assert code(answer) == "join" and bench.m.seats[1].name == "Ann A."
    assert bench.last("renamed").event.data == {"type": "renamed", "player": "ann", "seat": 1, "name": "Ann A."}
    # the server's own join of a moved table keeps the seat's name, whatever name it carries
    renames = len([r for r in bench.records if r.event.type == "renamed"])
    bench.step(Join("a3", "ann", "old name", REJOIN, "player"))
    assert bench.m.seats[1].name == "Ann A."
    assert len([r for r in bench.records if r.event.type == "renamed"]) == renames
