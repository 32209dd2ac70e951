"""Security checks over real websockets.

* tokens: 128 bits from ``secrets`` (the CSPRNG), all different, balanced bits,
  stored only as their SHA-256 (memory store and Redis), never sent to anyone
  but their player;
* nobody acts for another seat, at a table they have not joined, or as a
  spectator (every kind of action and control);
* several clients and spectators at two tables of different games at once,
  whole matches: every frame each connection received is exactly what its
  viewer may see (:mod:`tests.security.leaks`), and the checker itself catches
  a planted leak;
* G-2: the match's commitment is published when the table is created, before
  anyone sits down (and the next match's at the end of this one), no frame or
  HTTP answer carries the seed before the reveal, and the revealed seed hashes
  to it (``tests/protocol/test_g2_replay.py`` replays every card from it);
* limits, each configurable and answered with its code: frame size
  (``frame_too_large``), frame rate (``rate_limited``), tables per player and
  per address (``too_many_tables``, over websockets and HTTP), connections per
  address (handshake refused with 403, the load generator's way around it:
  other loopback addresses). ``tests/server/test_bad_input.py`` and
  ``tests/server/test_session.py`` test the defaults; here the settings.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
from dataclasses import replace

import httpx
import pytest
from websockets.exceptions import InvalidStatus

from cardhall.clients.client import Client, ServerError
from cardhall.engine.rng import FairRandom
from tests.conftest import require, until
from tests.games import quick
from tests.security.leaks import TableRecord, check_frames
from tests.server.conftest import REDIS_SERVER, TEST_SETTINGS, RedisServer, running_server
from tests.server.play import cards_in, play, remember_seat

FAST = {"pause": 0, "bot_think": 0}


async def _code(coro) -> str:
    with pytest.raises(ServerError) as err:
        await coro
    return err.value.code


# -- tokens ----------------------------------------------------------------------------------------
async def _tokens_and_store(live, count: int, monkeypatch) -> tuple[list[str], list[str]]:
    import cardhall.server.players as players_module

    drawn: list[str] = []
    real = players_module.secrets.token_urlsafe

    def spy(nbytes: int) -> str:
        token = real(nbytes)
        drawn.append(token)
        return token

    monkeypatch.setattr(players_module.secrets, "token_urlsafe", spy)
    c = await Client(live.url, codec="json").connect()
    tokens = []
    for i in range(count):  # each hello without a token makes a new player
        tokens.append((await c.hello(f"p{i}", token=None))["token"])
        c.token = None
    await c.close()
    return tokens, drawn


def _check_tokens(tokens: list[str], drawn: list[str]) -> None:
    assert tokens == drawn, "every token comes from secrets.token_urlsafe"
    raw = [base64.urlsafe_b64decode(t + "=" * (-len(t) % 4)) for t in tokens]
    assert all(len(r) == 16 for r in raw), "128 bits each"
    assert len(set(tokens)) == len(tokens)
    bits = "".join(f"{int.from_bytes(r, 'big'):0128b}" for r in raw)
    ones = bits.count("1") / len(bits)
    assert abs(ones - 0.5) < 0.02, ones  # 300 x 128 bits: 5 sigma is 0.013
    for position in range(128):  # no bit stuck (300 draws per position)
        share = sum(bits[i * 128 + position] == "1" for i in range(len(raw))) / len(raw)
        assert 0.3 < share < 0.7, (position, share)


async def test_tokens_are_128_bits_from_secrets_and_stored_only_hashed(monkeypatch):
    settings = replace(TEST_SETTINGS, rate=1e6, burst=1e6)
    async with running_server(settings) as live:
        tokens, drawn = await _tokens_and_store(live, 300, monkeypatch)
        _check_tokens(tokens, drawn)
        stored = live.hall.store._players  # token hash -> (player, name)
        assert set(stored) == {hashlib.sha256(t.encode()).hexdigest() for t in tokens}
        assert not any(t in repr(stored) for t in tokens), "a token stored in clear"
        # a token one character off names nobody
        c = await Client(live.url).connect()
        wrong = tokens[0][:-1] + ("A" if tokens[0][-1] != "A" else "B")
        assert await _code(c.hello("x", token=wrong)) == "unknown_token"
        await c.close()


async def test_tokens_in_redis_are_stored_only_hashed(monkeypatch):
    require(REDIS_SERVER is not None, "redis-server is not installed (set CARDHALL_REDIS_SERVER)")
    import redis

    server = RedisServer(REDIS_SERVER)  # type: ignore[arg-type]
    server.start()
    try:
        settings = replace(TEST_SETTINGS, rate=1e6, burst=1e6, redis_url=server.url, redis_prefix="sec")
        async with running_server(settings) as live:
            tokens, drawn = await _tokens_and_store(live, 40, monkeypatch)
        assert tokens == drawn
        r = redis.Redis.from_url(server.url)
        everything = []  # every key and every value the service wrote
        for key in r.scan_iter(count=1000):
            kind = r.type(key)
            value = (r.hgetall(key) if kind == b"hash" else r.lrange(key, 0, -1) if kind == b"list"
                     else r.smembers(key) if kind == b"set" else r.xrange(key) if kind == b"stream" else r.get(key))
            everything.append(key + repr(value).encode())
        players = {key.removeprefix(b"sec:player:") for key in r.scan_iter(match="sec:player:*", count=1000)}
        r.close()
        dump = b"".join(everything)
        assert all(t.encode() not in dump for t in tokens), "a token stored in clear in Redis"
        assert set(players) == {hashlib.sha256(t.encode()).hexdigest().encode() for t in tokens}
    finally:
        server.close()


# -- acting for others ------------------------------------------------------------------------------
async def _turn_frame(client: Client, table: str) -> dict:
    """The next event that puts ``client``'s seat to act (with its legal actions)."""
    return await client.next_event(table, timeout=20, where=lambda f: "legal" in f)


async def test_nobody_acts_for_another_seat_or_where_not_joined(live):
    ann = await live.client("ann")
    bob = await live.client("bob", codec="json")
    eve = await live.client("eve")
    table = await ann.create_table("no_limit_holdem", seats=2, options=FAST)
    other = await ann.create_table("no_limit_holdem", seats=2, bots=2, options={**FAST, "bot_think": 0.05})
    await ann.join(table, role="player", seat=1)
    await bob.join(table, role="player", seat=2)  # full: the match starts
    t = live.hall.tables[table].machine
    await until(lambda: t.turn_seat is not None, 30, "a seat's turn")
    seats = {1: ann, 2: bob}
    mover_seat = t.turn_seat
    mover, waiter = seats[mover_seat], seats[3 - mover_seat]
    turn_id, seq = t.turn_id, t.seq
    legal = t.turn_legal[0]["type"]
    # the other seat, with the mover's turn id and a seat field naming the mover's seat
    assert await _code(waiter.request({"type": "act", "table": table, "action": {"type": legal},
                                       "turn": turn_id, "seat": t.turn_seat})) == "not_your_turn"
    # a player who did not join this table, with the seat field too
    assert await _code(eve.request({"type": "act", "table": table, "action": {"type": legal},
                                    "seat": t.turn_seat})) == "not_joined"
    # hello naming another player's id makes a new player, not that one
    impostor = await Client(live.url).connect()
    welcome = await impostor.request({"type": "hello", "name": "ann", "player": ann.player})
    assert welcome["player"] != ann.player
    assert await _code(impostor.join(table, role="player", seat=t.turn_seat)) in ("seat_taken", "match_running")
    # joined as a spectator: still nobody's seat
    await eve.join(table, role="spectator")
    assert await _code(eve.act(table, {"type": legal}, turn=turn_id)) == "not_a_player"
    # a player at one table acting at another it only watches, or never joined
    await mover.join(other, role="spectator")
    assert await _code(mover.act(other, {"type": "fold"})) == "not_a_player"
    assert await _code(waiter.act(other, {"type": "fold"})) == "not_joined"
    # nothing changed
    assert (t.turn_id, t.seq) == (turn_id, seq)
    # the mover acts, naming the other seat: the action is its own seat's
    await mover.request({"type": "act", "table": table, "action": {"type": legal}, "turn": turn_id,
                         "seat": 3 - t.turn_seat})
    acted = [rec for rec in live.hall.tables[table].buffer if rec.seq > seq and rec.event.data.get("seat") is not None]
    assert acted and acted[0].event.data["seat"] == mover_seat, acted[0].event.data
    for c in (ann, bob, eve, impostor):
        await c.close()


async def test_spectators_cannot_act_in_any_way(live):
    owner = await live.client("owner")
    table = await owner.create_table("no_limit_holdem", seats=3, bots=3, options={**FAST, "bot_think": 0.05})
    spectator = await live.client("spectator", codec="json")
    await spectator.join(table, role="spectator")
    t = live.hall.tables[table].machine
    for kind in ("fold", "check", "call", "bet", "raise", "all_in", "continue", "sit_out", "sit_in", "show",
                 "muck", "snowfall", "play"):
        action = {"type": kind}
        if kind in ("bet", "raise"):
            action["amount"] = 100
        assert await _code(spectator.act(table, action, turn=t.turn_id)) == "not_a_player", kind
    for kind in ("start", "pause", "resume", "rematch"):
        assert await _code(spectator.act(table, {"type": kind})) == "not_owner", kind
    assert t.status == "running" and not t.paused
    for c in (owner, spectator):
        await c.close()


# -- who sees what ------------------------------------------------------------------------------------
async def _read_all(client: Client, tables: set[str], until: str = "match_ended") -> None:
    """Read ``client``'s events until every table in ``tables`` sent ``until``."""
    done: set[str] = set()
    while done != tables:
        frame = await client.next_event(timeout=60)
        if frame["event"]["type"] == until:
            done.add(frame["table"])


async def test_no_frame_carries_a_card_its_viewer_may_not_see_at_concurrent_tables(live):
    games = ["no_limit_holdem", "avalanche"]
    ann = await live.client("ann", codec="msgpack")
    bob = await live.client("bob", codec="json")
    carl = await live.client("carl", codec="msgpack")
    ann_b = await Client(live.url, codec="json", record=True).connect()  # ann's second connection
    await ann_b.hello("ann", token=ann.token)
    dan = await live.client("dan", codec="json")  # watches both
    eve = await live.client("eve", codec="msgpack")  # watches the first
    a = await ann.create_table(games[0], seats=3, bots=1, options=quick(games[0], **FAST))
    b = await carl.create_table(games[1], seats=3, bots=1, options=quick(games[1], **FAST))
    for watcher, table in ((dan, a), (dan, b), (eve, a), (carl, a)):
        await watcher.join(table, role="spectator")
    snaps = {}
    for client, table, seat in ((ann, a, 1), (bob, a, 2), (carl, b, 1), (ann_b, b, 2)):
        snaps[(id(client), table)] = await client.join(table, role="player", seat=seat, seed=f"seed {seat}")
        remember_seat(client, table, seat)
    await asyncio.wait_for(asyncio.gather(
        play(ann, a, "a", snapshot=snaps[(id(ann), a)]), play(bob, a, "b", snapshot=snaps[(id(bob), a)]),
        play(carl, b, "c", snapshot=snaps[(id(carl), b)]), play(ann_b, b, "d", snapshot=snaps[(id(ann_b), b)]),
        _read_all(dan, {a, b}), _read_all(eve, {a})), 120)
    records = {t: TableRecord(live.hall.tables[t]) for t in (a, b)}
    joined = {id(ann): {a}, id(bob): {a}, id(carl): {a, b}, id(ann_b): {b}, id(dan): {a, b}, id(eve): {a}}
    for client in (ann, bob, carl, ann_b, dan, eve):
        assert not check_frames(client.frames, records, client.player, client.codec), client.name
        got = {f["table"] for f in client.frames if f.get("type") in ("event", "snapshot")}
        assert got <= joined[id(client)], (client.name, got)
        assert client.gaps == 0
    # tokens go to their own player only
    for client in (bob, carl, dan, eve):
        assert ann.token not in repr(client.frames)
    # the checker is not blind: another seat's hole cards planted in bob's frames are caught
    private = next(rec for rec in records[a].records.values() if rec.event.private and 1 in rec.event.private)
    secret = sorted(cards_in(private.event.private[1]))
    assert secret
    planted = [*bob.frames, {"type": "event", "table": a, "seq": private.seq,
                             "event": {**private.event.data, **private.event.private[1]}, "ts": 0.0}]
    assert check_frames(planted, records, bob.player, bob.codec)
    for c in (ann, bob, carl, ann_b, dan, eve):
        await c.close()


# -- G-2 --------------------------------------------------------------------------------------------------
async def test_G2_commitment_published_before_anyone_sits_and_the_reveal_matches(live):
    async with httpx.AsyncClient(base_url=live.http) as http:
        created = (await http.post("/api/tables", json={"game": "loco_poker", "seats": 2,
                                                        "options": {**FAST, "points_to_win": 1}})).json()
        table, commitment = created["table"], created["commitment"]
        assert created["info"]["taken"] == 0 and len(commitment) == 64
        assert (await http.get(f"/api/tables/{table}")).json()["commitment"] == commitment
        seed_hex = live.hall.tables[table].machine.server_seed.hex()
        ann = await live.client("ann")
        bob = await live.client("bob", codec="json")
        snaps = [await ann.join(table, role="player", seat=1, seed="ann"),
                 await bob.join(table, role="player", seat=2)]
        remember_seat(ann, table, 1)
        remember_seat(bob, table, 2)
        assert all(s["info"]["commitment"] == commitment for s in snaps)
        during = [(await http.get(path)).text for path in ("/api/tables", f"/api/tables/{table}",
                                                            f"/api/tables/{table}/hands")]
        frames = await asyncio.wait_for(asyncio.gather(play(ann, table, "a", snapshot=snaps[0]),
                                                       play(bob, table, "b", snapshot=snaps[1])), 60)
        assert all(seed_hex not in text for text in during)
        ended = frames[0][-1]["event"]
        started = next(f["event"] for f in frames[0] if f["event"]["type"] == "match_started")
        assert started["commitment"] == commitment and ended["commitment"] == commitment
        assert ended["server_seed"] == seed_hex and hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest() == commitment
        assert ended["client_seeds"] == {"1": "ann"}
        before = [f for f in ann.frames + bob.frames if f.get("type") != "event" or f["seq"] < frames[0][-1]["seq"]]
        assert seed_hex not in repr(before), "the seed before its reveal"
        # the next match's commitment is out with this match's end, before anyone sits down again
        nxt = ended["next_commitment"]
        assert (await http.get(f"/api/tables/{table}")).json()["commitment"] == nxt
        assert live.hall.tables[table].machine.server_seed.hex() not in repr(ann.frames + bob.frames)
        # the revealed seeds deal the cards the players were dealt (first deal; every card:
        # tests/protocol/test_g2_replay.py)
        from cardhall.engine.registry import engine_class

        replay = engine_class("loco_poker").new([1, 2], {"points_to_win": 1},
                                                FairRandom(bytes.fromhex(seed_hex), [b"ann"]))
        dealt = replay.start()
        start = next(i for i, f in enumerate(frames[0]) if f["event"]["type"] == "match_started")
        assert [f["event"] for f in frames[0][start + 1:start + 1 + len(dealt)]] == [e.view(1) for e in dealt]
    await ann.close()
    await bob.close()


# -- limits ---------------------------------------------------------------------------------------------
async def test_connections_per_address_limit_and_other_addresses():
    settings = replace(TEST_SETTINGS, max_connections_per_ip=3)
    async with running_server(settings) as live:
        held = [await Client(live.url).connect() for _ in range(3)]
        with pytest.raises(InvalidStatus) as refused:
            await Client(live.url).connect()
        assert refused.value.response.status_code == 403
        # the same limit, per address: another loopback address is another address
        other = [await Client(live.url, local_addr=("127.0.0.2", 0)).connect() for _ in range(3)]
        for c in held + other:
            assert (await c.ping())["type"] == "pong"
        await held.pop().close()
        await until(lambda: sum(1 for c in live.hall.connections if c.address == "127.0.0.1") < 3, 30,
                    "the server hearing of the close")
        again = await Client(live.url).connect()
        assert (await again.ping())["type"] == "pong"
        for c in held + other + [again]:
            await c.close()


async def test_limits_are_configurable_and_answered_with_their_codes():
    settings = replace(TEST_SETTINGS, max_frame=1024, max_tables_per_player=1,
                       max_tables_per_address=2)
    async with running_server(settings) as live:
        for codec in ("msgpack", "json"):
            c = await live.client(codec, codec=codec)
            pad = "x" * 900
            assert (await c.request({"type": "ping", "pad": pad}))["type"] == "pong"  # under 1 KiB
            await c.send({"type": "ping", "id": 7, "pad": pad * 2})  # not read: its id cannot be echoed
            frame = await c.next_frame(5)
            assert frame["type"] == "error" and frame["code"] == "frame_too_large", frame
            assert (await c.ping())["type"] == "pong"
            await c.close()
        # tables: one per player over websockets and over HTTP with the player's token ...
        ann = await live.client("ann")
        await ann.create_table("loco_poker")
        assert await _code(ann.create_table("loco_poker")) == "too_many_tables"
        async with httpx.AsyncClient(base_url=live.http) as http:
            r = await http.post("/api/tables", json={"game": "loco_poker"}, headers={"Authorization": f"Bearer {ann.token}"})
            assert r.status_code == 429 and r.json()["code"] == "too_many_tables"
            # ... and two per address in all: ann's table over the websocket and one without a token
            assert (await http.post("/api/tables", json={"game": "loco_poker"})).status_code == 201
            r = await http.post("/api/tables", json={"game": "loco_poker"})
            assert r.status_code == 429 and r.json()["code"] == "too_many_tables"
        await ann.close()


def _holds_a_token(bucket) -> bool:  # type: ignore[no-untyped-def]
    """A connection's frame bucket (server/ratelimit.py) would let a frame through now."""
    return bucket.tokens + (time.monotonic() - bucket.stamp) * bucket.rate >= 1.0


async def test_rate_limit_answers_rate_limited_on_both_subprotocols():
    # a burst of 10, refilled at 2 a second: 30 pings read within 2.5 s get 15 to 20 refusals
    settings = replace(TEST_SETTINGS, rate=2, burst=10, rate_strikes=1000)
    async with running_server(settings) as live:
        for codec in ("msgpack", "json"):
            c = await Client(live.url, codec=codec).connect()
            for i in range(30):
                await c.send({"type": "ping", "id": i})
            frames = [await c.next_frame(5) for _ in range(30)]
            refused = [f for f in frames if f["type"] == "error"]
            assert 15 <= len(refused) <= 20 and {f["code"] for f in refused} == {"rate_limited"}, codec
            assert all(f["type"] == "pong" for f in frames if f["type"] != "error")
            await until(lambda: all(_holds_a_token(conn.bucket) for conn in live.hall.connections), 30,
                        "the connection's bucket holding a token again")
            assert (await c.ping())["type"] == "pong"  # the bucket refills: the connection goes on
            await c.close()
