"""Redis trouble while tables play, against a real
``redis-server`` of the test's own, with the service in this process:

* Redis stopped for a few seconds mid-game, then started again (its
  append-only file brings the data back): tables stall (requests refused with
  ``unavailable``, clocks stopped, bots waiting), ``/healthz`` answers 503
  ``degraded`` and ``/metrics`` ``cardhall_store_up 0``; when Redis answers,
  every table commits what it held and goes on. Nothing acknowledged is lost,
  every client's ``seq`` runs gap-free, and what Redis holds is exactly what
  the clients saw.
* Redis back *empty* (no persistence): the service writes every table, its
  recent events and the players again from memory, and a later restart
  recovers from that.
* Redis hanging (SIGSTOP: the socket stays open): commands time out, the same
  stall, the same recovery on SIGCONT.
"""

from __future__ import annotations

import asyncio
import logging
import re
import signal
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis

from cardhall.clients.client import Client, ServerError
from cardhall.engine.bots.random_bot import RandomBot
from cardhall.engine.rng import FairRandom
from cardhall.server.table.clock import PausedClock
from tests.conftest import until
from tests.games import quick
from tests.server.conftest import TEST_SETTINGS, LiveServer, RedisServer, running_server
from tests.server.test_recovery_kill import check_history

pytestmark = pytest.mark.redis

PREFIX = "faults"
Frame = dict[str, Any]


@dataclass
class Player:
    """A websocket client at one table that acts on its turns (random legal
    actions, 5 ms think) and, refused with ``unavailable``, tries again."""

    client: Client
    table: str
    seat: int | None
    rng: FairRandom
    events: list[Frame] = field(default_factory=list)
    acks: list[tuple[int, int]] = field(default_factory=list)
    refused: int = 0
    snapshot: Frame | None = None  # the join's reply: it holds the turn when this seat was to act
    task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self.run())

    async def stop(self) -> None:
        assert self.task is not None
        while not self.task.done():
            self.task.cancel()
            await asyncio.wait([self.task], timeout=0.5)
        if not self.task.cancelled() and self.task.exception() is not None:
            raise self.task.exception()  # type: ignore[misc]

    async def run(self) -> None:
        bot = RandomBot(self.rng)
        last = None
        if self.snapshot is not None and "legal" in self.snapshot:
            await self.request(bot.choose({}, self.snapshot["legal"]), self.snapshot["turn"]["id"])
        while True:
            frame = await self.client.next_frame(timeout=60)
            if frame.get("type") != "event":
                continue
            if last is not None:
                assert frame["seq"] == last + 1, f"seq {frame['seq']} after {last}"
            last = frame["seq"]
            self.events.append(frame)
            if self.seat == 1 and frame["event"]["type"] == "match_ended":
                await self.request({"type": "rematch"}, None)
            if "legal" in frame:
                await asyncio.sleep(0.005)
                await self.request(bot.choose({}, frame["legal"]), frame["turn"]["id"])

    async def request(self, action: Frame, turn: int | None) -> None:
        while True:
            try:
                reply = await self.client.act(self.table, action, turn=turn)
            except ServerError as exc:
                if exc.code == "unavailable":  # the table could not save: try again shortly
                    self.refused += 1
                    await asyncio.sleep(0.1)
                    continue
                assert exc.code in ("stale_turn", "not_your_turn", "bad_state"), exc.frame
                return
            break
        if turn is not None:
            frames = self.client.frames
            at = max(i for i in range(len(frames)) if frames[i] is reply)
            before = [f["seq"] for f in frames[:at] if f.get("type") == "event" and f.get("table") == self.table]
            self.acks.append((turn, before[-1]))


async def _tables(srv: LiveServer) -> tuple[str, str, list[Player]]:
    """A human no-limit table (two players) and a bots table with a spectator, playing."""
    ann, bob, watcher = [await srv.client(n) for n in ("ann", "bob", "watcher")]
    human = await ann.create_table("no_limit_holdem", seats=2, options=quick(
        "no_limit_holdem", pause=0, action_clock=60, time_bank=60))
    bots = await ann.create_table("loco_poker", seats=3, bots=3, options=quick(
        "loco_poker", pause=0.02, bot_think=0.02, auto_rematch=True))
    players = []
    for client, table, seat in ((ann, human, 1), (bob, human, 2), (watcher, bots, None)):
        snapshot = await client.join(table, role="player" if seat else "spectator", seat=seat)
        players.append(Player(client, table, seat, FairRandom(f"{table}/{seat}".encode()), snapshot=snapshot))
    for p in players:
        p.start()
    return human, bots, players


async def _playing(players: list[Player], after: dict[int | None, int] | None = None) -> None:
    """Until every player received an event (past its ``after`` count of them, by seat)."""
    await until(lambda: all(len(p.events) > (after or {}).get(p.seat, 0) for p in players), 30)


async def _health(srv: LiveServer) -> tuple[int, dict[str, Any], str]:
    async with httpx.AsyncClient(base_url=srv.http) as http:
        health = await http.get("/healthz")
        return health.status_code, health.json(), (await http.get("/metrics")).text


def _metric(text: str, name: str) -> float:
    return float(re.search(rf"^{name} ([0-9.e+-]+)$", text, re.M).group(1))  # type: ignore[union-attr]


async def _check_store_matches(srv: LiveServer, redis: RedisServer, players: list[Player]) -> None:
    """Quiet the players, then: Redis holds what every client saw, and each
    table's stored state is its state in memory."""
    for p in players:
        await p.stop()
    tables = [srv.hall.tables[t] for t in {p.table for p in players}]
    # what the players' last requests started is applied and written (the bots' table plays on: it is
    # quiet between two of its steps)
    await until(lambda: all(t.quiet for t in tables), 30, "the tables quiet")
    db = aioredis.Redis.from_url(redis.url)
    try:
        for table in {p.table for p in players}:
            watchers = [(f"seat {p.seat}", p.seat, p.events, p.acks) for p in players if p.table == table]
            stored = await check_history(db, PREFIX, table, watchers)
            live = srv.hall.tables[table]
            if live.machine.seq == stored["seq"]:  # (a bot may just have acted)
                assert _no_clock(live.to_data()) == _no_clock(stored)
    finally:
        await db.aclose()
    for p in players:
        assert p.client.gaps == 0
        await p.client.close()


async def _standing_still(srv: LiveServer, players: list[Player]) -> dict[int | None, int]:
    """Once both tables stalled: nothing can move them on while the store is away, and nothing
    reached anyone since. Each has no timer armed (no clock, bot or dealer step: inputs alone
    could move it), a request to each is refused ``unavailable`` by the table itself, and no
    event came before those answers (a table's frames to a connection leave in order).
    Returns each player's count of events."""
    await until(lambda: all(srv.hall.tables[p.table] in srv.hall.stalled for p in players), 30, "both tables stalled")
    frozen = {p.seat: len(p.events) for p in players}
    for p in players:
        assert not srv.hall.tables[p.table].timer_armed
        with pytest.raises(ServerError) as err:
            await p.client.act(p.table, {"type": "check"})
        assert err.value.code == "unavailable"
    assert {p.seat: len(p.events) for p in players} == frozen
    return frozen


def _no_clock(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` without the turn's clock, a thinking bot's generator and the
    replay context (the time the state was taken at, who watched then)."""
    out = dict(state)
    out.pop("replay", None)
    if out.get("turn"):
        out["turn"] = {k: v for k, v in out["turn"].items() if k not in ("clock", "bank")}
        if out["turn"]["kind"] == "bot":
            out["occupants"] = [{k: v for k, v in o.items() if k != "bot_rng"} for o in out["occupants"]]
    return out


def _settings(redis: RedisServer, timeout: float = 2.0):
    return replace(TEST_SETTINGS, event_buffer=256, redis_url=redis.url, redis_prefix=PREFIX, redis_timeout=timeout,
                   store_retry=0.1)


async def test_redis_stopped_mid_game_tables_stall_then_resume(redis_server, caplog):
    caplog.set_level(logging.WARNING)
    async with running_server(_settings(redis_server)) as srv:
        human, bots, players = await _tables(srv)
        await _playing(players)
        before = {p.seat: len(p.events) for p in players}
        redis_server.stop()  # a clean stop: the append-only file keeps everything
        await until(lambda: srv.hall.tables[bots] in srv.hall.stalled and srv.hall.tables[human] in srv.hall.stalled, 30,
                    "both tables stalled")
        t = srv.hall.tables[human]
        clock_at_stall = t.turn_public()
        status, health, metrics = await _health(srv)
        assert status == 503 and health["status"] == "degraded"
        assert health["store"]["up"] is False and health["store"]["stalled_tables"] == 2 and health["store"]["error"]
        assert _metric(metrics, "cardhall_store_up") == 0 and _metric(metrics, "cardhall_tables_stalled") == 2
        # nothing moves while Redis is away: no event reaches anyone, actions are refused
        frozen = await _standing_still(srv, players)
        assert all(before[s] > 0 for s in before)  # they were playing
        # the clock of the player to act stood still: the outage costs nobody time (G-3)
        assert t.machine.turn_kind != "human" or (isinstance(t.machine.clock, PausedClock)
                                                  and t.turn_public() == clock_at_stall)
        redis_server.start()
        await until(lambda: srv.hall.store_up and not srv.hall.stalled, 30)
        await _playing(players, after=frozen)  # and play goes on
        assert all(len(p.events) > frozen[p.seat] for p in players)
        status, health, metrics = await _health(srv)
        assert status == 200 and health["store"]["up"] is True and health["store"]["stalled_tables"] == 0
        assert _metric(metrics, "cardhall_store_up") == 1 and _metric(metrics, "cardhall_store_failures_total") == 1
        await _check_store_matches(srv, redis_server, players)
    logs = [r.getMessage() for r in caplog.records]
    assert any("store is unavailable" in m for m in logs) and any("answers again" in m for m in logs)


async def test_redis_back_empty_gets_every_table_again(redis_server, caplog):
    caplog.set_level(logging.WARNING)
    async with running_server(_settings(redis_server)) as srv:
        human, bots, players = await _tables(srv)
        ann = players[0].client
        await _playing(players)
        redis_server.stop()
        await until(lambda: len(srv.hall.stalled) == 2, 30)
        redis_server.start(fresh=True)  # no data at all: as if it had no persistence
        await until(lambda: srv.hall.store_up and not srv.hall.stalled, 30)
        assert any("lost its data" in r.getMessage() for r in caplog.records)
        _, _, metrics = await _health(srv)
        assert _metric(metrics, "cardhall_store_rewrites_total") == 1
        await _playing(players, after={p.seat: len(p.events) for p in players})  # play goes on after the rewrite
        await _check_store_matches(srv, redis_server, players)  # the rewritten history is what clients saw
    # a restart now recovers from what was written again: tables, players
    async with running_server(_settings(redis_server)) as srv:
        assert set(srv.hall.tables) == {human, bots}
        again = await Client(srv.url).connect()
        assert (await again.hello("ann", token=ann.token))["player"] == ann.player
        assert (await again.join(human, role="player"))["you"] == 1
        await again.close()


async def test_a_hung_redis_counts_as_unavailable(redis_server):
    async with running_server(_settings(redis_server, timeout=0.5)) as srv:
        human, bots, players = await _tables(srv)
        await _playing(players)
        assert redis_server.proc is not None
        redis_server.proc.send_signal(signal.SIGSTOP)  # the socket stays open, nothing answers
        try:
            await until(lambda: not srv.hall.store_up, 30, "the store counted down")
            frozen = await _standing_still(srv, players)
        finally:
            redis_server.proc.send_signal(signal.SIGCONT)
        await until(lambda: srv.hall.store_up and not srv.hall.stalled, 30, "the store back, no table stalled")
        await _playing(players, after=frozen)
        assert all(len(p.events) > frozen[p.seat] for p in players)
        await _check_store_matches(srv, redis_server, players)
