"""Crash recovery under SIGKILL (server/STORAGE.md "Guarantees").

A real ``cardhall serve --redis`` process plays tables of every game against
a real ``redis-server`` of the test's own (append-only file). Human tables are
played by websocket clients choosing random legal actions with a random think
time; bot tables are watched by a spectator. At random points of the play
(once every table moved on by a random number of events) the server is
killed with SIGKILL (some during its start-up and recovery), then started
again, and each time:

1. **Redis holds one consistent history per table**: the stream's entry ids
   run without gaps and end at the stored state's ``seq`` (state and events
   are written together).
2. **No event and no acknowledgement left before its checkpoint**: every
   event any client received has ``seq`` <= the stored ``seq``, and equals, as
   that client's viewer sees it, the stored event of that ``seq`` (so a
   restored table can never publish a different event under a ``seq`` a
   client holds). Every ``ok`` to an action came after that action's events,
   all of them stored.
3. **The table resumes from exactly that checkpoint**: right after the
   restart, the table's full state (operator endpoint) equals the stored one
   (clocks: the time left, within the seconds the restart took), and no
   acknowledged turn is still open.
4. **Every client picks up where it left off**: ``hello`` with its token
   gives the same player; ``join`` with ``since`` = its last ``seq`` answers
   ``ok`` after exactly the missed events (read from the Redis stream), so
   each client's ``seq`` runs gap-free across every restart; play goes on.

``CARDHALL_KILL_POINTS`` sets the number of kill points; by default 10
(each kill stops the tables of every game at once), and 200 with ``--runslow``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import redis.asyncio as aioredis

from cardhall.clients.client import Client, ServerError
from cardhall.engine.base import Event
from cardhall.engine.bots.random_bot import RandomBot
from cardhall.engine.registry import engine_class
from cardhall.engine.rng import FairRandom
from cardhall.server.store.format import unpack_event
from cardhall.server.store.keys import Keys
from cardhall.server.store.redis_index import stored_table
from cardhall.server.stored import current
from tests.conftest import until
from tests.games import GAMES, quick
from tests.server.conftest import RedisServer, free_port

Frame = dict[str, Any]

DEFAULT_POINTS = 10
SLOW_POINTS = 200
OPERATOR_KEY = "kill-test-operator"
PREFIX = "killtest"
#: human tables: long clocks (nothing times out while a restart is checked), no pacing
HUMAN_OPTIONS = {"pause": 0, "action_clock": 120, "time_bank": 120, "close_after": 3600}
#: bot tables: paced steps and think times, so checkpoints hold pending steps and bot turns
BOT_OPTIONS = {"pause": 0.1, "bot_think": 0.3, "auto_rematch": True, "close_after": 3600}


pytestmark = pytest.mark.redis


def _points(config: pytest.Config) -> int:
    env = os.environ.get("CARDHALL_KILL_POINTS")
    if env:
        return int(env)
    return SLOW_POINTS if config.getoption("--runslow") else DEFAULT_POINTS


@dataclass
class Observer:
    """One participant of a table across restarts: a seated player (``seat``)
    or a spectator (``seat`` None), with its token and everything it received."""

    name: str
    table: str
    seat: int | None
    rng: FairRandom
    token: str | None = None
    player: str | None = None
    client: Client | None = None
    last_seq: int = 0
    joined_seq: int = 0  # the seq its last join was answered at (the events it missed came before)
    events: list[Frame] = field(default_factory=list)  # this cycle's event frames
    acks: list[tuple[int, int]] = field(default_factory=list)  # (turn id, last seq before the ok)
    turn_frame: Frame | None = None  # the last frame that put this seat to act
    answered: set[int] = field(default_factory=set)  # turn ids acted on and answered
    total_events: int = 0
    total_acks: int = 0


class Harness:
    """The server process, the clients, and the checks."""

    def __init__(self, redis: RedisServer, workdir: Path, seed: bytes) -> None:
        self.redis = redis
        self.rng = FairRandom(seed)
        self.port = free_port()
        self.http = f"http://127.0.0.1:{self.port}"
        self.ws = f"ws://127.0.0.1:{self.port}/ws"
        self.log = open(workdir / "server.log", "ab")
        self.proc: subprocess.Popen[bytes] | None = None
        self.observers: list[Observer] = []
        self.tables: dict[str, str] = {}  # table -> "human" | "bots"
        self.tasks: list[asyncio.Task[None]] = []
        self.db = aioredis.Redis.from_url(redis.url)
        self.stats = {"kills": 0, "early_kills": 0, "events": 0, "acks": 0, "replayed": 0, "compared": 0, "log_steps": 0}
        self.killing = False
        self.failures: list[str] = []
        self.finished: dict[str, bool] = {}
        self.last: tuple[dict[str, dict[str, Any]], dict[str, set[int]]] = ({}, {})

    # -- the server process -------------------------------------------------
    def spawn(self) -> None:
        self.killing = False
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("CARDHALL_REDIS_URL", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(self.port), "--log-level", "warning",
             "--redis", self.redis.url, "--redis-prefix", PREFIX, "--redis-stream-bound", "100000",
             "--node-id", "killtest-node",  # started again with its id: it takes its tables back at once
             # a full state every few steps (most kills fall between two), each step's state digest logged
             # and compared by the replay at the restart
             "--full-state-every", "9", "--verify-replay",
             # bots-only tables play at the options' pace (BOT_OPTIONS), not the public floor's
             "--bot-think-floor", "0.1",
             "--operator-key", OPERATOR_KEY], env=env, stdout=self.log, stderr=self.log)

    async def wait_ready(self) -> None:
        proc = self.proc
        assert proc is not None
        async with httpx.AsyncClient() as http:

            async def answers() -> bool:
                assert proc.poll() is None, "the server exited; see server.log"
                try:
                    return (await http.get(self.http + "/healthz", timeout=1)).status_code == 200
                except httpx.HTTPError:
                    return False

            await until(answers, 60, "the server answering /healthz")

    async def kill(self) -> None:
        assert self.proc is not None
        self.killing = True
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.proc = None
        self.stats["kills"] += 1
        while self.tasks:  # (3.11's wait_for may swallow a cancel: cancel until done)
            for task in self.tasks:
                task.cancel()
            await asyncio.wait(self.tasks, timeout=0.5)
            self.tasks = [t for t in self.tasks if not t.done()]
        for ob in self.observers:
            if ob.client is not None:
                await ob.client.close()
                ob.client = None

    # -- tables and players -------------------------------------------------
    async def create_tables(self) -> None:
        owner = await Client(self.ws).connect()
        await owner.hello("owner")
        for game in GAMES:
            cls = engine_class(game)
            seats = max(2, cls.min_seats)
            table = await owner.create_table(game, seats=seats, options=quick(game, **HUMAN_OPTIONS))
            self.tables[table] = "human"
            for seat in range(1, seats + 1):
                self.observers.append(Observer(f"{game}-{seat}", table, seat, self.rng.spawn(f"{table}/{seat}")))
            bots = await owner.create_table(game, seats=seats, bots=seats, options=quick(game, **BOT_OPTIONS))
            self.tables[bots] = "bots"
            self.observers.append(Observer(f"{game}-watch", bots, None, self.rng.spawn(bots)))
        await owner.close()
        for ob in self.observers:  # everyone sits down (seated human tables start at once, G-9)
            await self.connect(ob)

    async def connect(self, ob: Observer) -> None:
        """(Re)connect ``ob``: hello with its token, join with ``since``."""
        client = Client(self.ws, record=True)
        await client.connect()
        welcome = await client.hello(ob.name, token=ob.token)
        if ob.token is None:
            ob.token, ob.player = welcome["token"], welcome["player"]
        else:
            assert welcome["player"] == ob.player, "the token names the same player after a restart"
        ob.client = client
        ob.events = []
        role = "player" if ob.seat is not None else "spectator"
        if ob.last_seq == 0:
            reply = await client.join(ob.table, role=role, seat=ob.seat, seed=ob.name)
            assert reply["type"] == "snapshot"
            ob.last_seq = ob.joined_seq = reply["seq"]
            if ob.seat is not None and reply.get("legal"):
                ob.turn_frame = reply
        else:
            reply = await client.join(ob.table, role=role, since=ob.last_seq)
            # the missed events came from the Redis stream, then ok: no snapshot needed
            assert reply["type"] == "ok", reply
            ob.joined_seq = reply["seq"]
            missed = [f for f in client.frames if f.get("type") == "event" and f["seq"] <= reply["seq"]]
            self.stats["replayed"] += len(missed)
        self.tasks.append(asyncio.get_running_loop().create_task(self.follow(ob)))

    async def follow(self, ob: Observer) -> None:
        try:
            await self._follow(ob)
        except asyncio.CancelledError:
            raise
        except AssertionError as exc:
            self.failures.append(f"{ob.name}: {exc}")
        except Exception as exc:
            if not self.killing:
                self.failures.append(f"{ob.name}: {exc!r}")

    async def _follow(self, ob: Observer) -> None:
        """Read ``ob``'s frames; a seated player acts on its turns (random legal
        action after a random think time) and asks for the rematch (seat 1)."""
        client = ob.client
        assert client is not None
        bot = RandomBot(ob.rng)
        if ob.seat == 1 and self.finished.get(ob.table):
            await self.request(ob, {"type": "rematch"}, None)  # the request may have died with the server
        if ob.turn_frame is not None and ob.turn_frame["turn"]["id"] not in ob.answered:
            await self.act(ob, bot, ob.turn_frame)  # a turn from before the restart, maybe unanswered
        while not self.killing:
            frame = await client.next_frame(timeout=3600)
            if frame.get("type") != "event":
                continue
            assert frame["seq"] == ob.last_seq + 1, f"{ob.name}: seq {frame['seq']} after {ob.last_seq}"
            ob.last_seq = frame["seq"]
            ob.events.append(frame)
            ob.total_events += 1
            if ob.seat is None:
                continue
            if frame["event"]["type"] == "match_ended" and ob.seat == 1:
                await self.request(ob, {"type": "rematch"}, None)
            if "legal" in frame:
                ob.turn_frame = frame
                await self.act(ob, bot, frame)

    async def act(self, ob: Observer, bot: RandomBot, frame: Frame) -> None:
        await asyncio.sleep(ob.rng.randbelow(20) / 1000)  # think 0..19 ms
        await self.request(ob, bot.choose({}, frame["legal"]), frame["turn"]["id"])

    async def request(self, ob: Observer, action: Frame, turn: int | None) -> None:
        client = ob.client
        assert client is not None
        try:
            reply = await client.act(ob.table, action, turn=turn)
        except ServerError as exc:
            assert exc.code in ("stale_turn", "not_your_turn", "bad_state"), exc.frame
            if turn is not None:
                ob.answered.add(turn)
            return
        except Exception:
            if self.killing:  # the server is gone; the harness cancels this task
                await asyncio.sleep(3600)
            raise
        if turn is None:
            return
        # the last event this connection received before the ok
        frames = client.frames
        at = max(i for i in range(len(frames)) if frames[i] is reply)
        before = [f["seq"] for f in frames[:at] if f.get("type") == "event" and f.get("table") == ob.table]
        ob.acks.append((turn, before[-1] if before else 0))
        ob.answered.add(turn)
        ob.total_acks += 1

    # -- the checks ---------------------------------------------------------
    async def check_stored(self) -> dict[str, dict[str, Any]]:
        """Checks 1 and 2 against what Redis holds after a kill."""
        states = {}
        for table in self.tables:
            watchers = [ob for ob in self.observers if ob.table == table]
            states[table] = await check_history(self.db, PREFIX, table,
                                                [(ob.name, ob.seat, ob.events, ob.acks) for ob in watchers])
            for ob in watchers:
                self.stats["events"] += len(ob.events)
                self.stats["acks"] += len(ob.acks)
                ob.acks = []
        return states

    async def check_restored(self, states: dict[str, dict[str, Any]], acked: dict[str, set[int]]) -> None:
        """Check 3: right after the restart each table is its stored checkpoint."""
        async with httpx.AsyncClient(base_url=self.http, headers={"X-Operator-Key": OPERATOR_KEY}) as http:
            health = (await http.get("/healthz")).json()
            assert health["recovery"]["tables"] == len(self.tables), health
            assert health["recovery"]["quarantined"] == 0, health  # a replay that diverged is quarantined
            self.stats["log_steps"] += health["recovery"]["replayed"]
            for table, stored in sorted(states.items(), key=lambda item: self.tables[item[0]]):
                live = (await http.get(f"/api/ops/tables/{table}")).json()["state"]
                self.finished[table] = live["status"] == "finished"
                if stored["turn"] is not None:
                    assert stored["turn"]["id"] not in acked[table], "an acknowledged turn is still open"
                if live["seq"] != stored["seq"]:
                    assert self.tables[table] == "bots", f"{table} moved before any client came back"
                    continue  # a bot already acted: the gap-free replay below checks its continuation
                assert _without_clocks(live) == _without_clocks(stored), (table, _diff(live, stored))
                if stored["turn"] is not None and "clock" in stored["turn"]:
                    for key in ("clock", "bank"):
                        assert stored["turn"][key] - 5 <= live["turn"][key] <= stored["turn"][key], (table, key)
                self.stats["compared"] += 1

    # -- one kill point -----------------------------------------------------
    async def play_on(self) -> None:
        """Play until every table moved on past the join by a random number of
        events (a human table 21 to 80, a paced bots table 2 or 3): a kill point
        is a point of the play, however long it took to get there."""
        wanted = {t: 21 + self.rng.randbelow(60) if kind == "human" else 2 + self.rng.randbelow(2)
                  for t, kind in self.tables.items()}

        def moved_on() -> bool:
            assert not self.failures, self.failures
            return all(max(ob.last_seq - ob.joined_seq for ob in self.observers if ob.table == t) >= n
                       for t, n in wanted.items())

        await until(moved_on, 60, f"every table moving on by {wanted}")

    async def kill_and_check(self) -> None:
        """SIGKILL, then checks 1 and 2; remembers the stored states and the
        turns acknowledged, for check 3 after the restart."""
        acked = {t: {turn for ob in self.observers if ob.table == t for turn, _ in ob.acks} for t in self.tables}
        await self.kill()
        assert not self.failures, self.failures
        states = await self.check_stored()
        for ob in self.observers:
            ob.events = []
        previous = self.last[1]
        self.last = (states, {t: acked[t] | previous.get(t, set()) for t in self.tables})

    async def cycle(self) -> None:
        """Restart (sometimes killing the new process during its start-up or
        recovery first), check the tables, reconnect everyone, play a random
        while, kill."""
        if self.rng.randbelow(6) == 0:
            self.spawn()
            await asyncio.sleep(self.rng.randbelow(700) / 1000)
            if self.proc is not None and self.proc.poll() is None:
                self.stats["early_kills"] += 1
                await self.kill_and_check()
        self.spawn()
        await self.wait_ready()
        states, acked = self.last
        await self.check_restored(states, acked)
        for ob in self.observers:
            await self.connect(ob)
        await self.play_on()
        await self.kill_and_check()

    async def close(self) -> None:
        if self.proc is not None:
            await self.kill()
        await self.db.aclose()
        self.log.close()


async def stored_history(db: aioredis.Redis, prefix: str, table: str
                         ) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]]]:
    """``table``'s state and stream as Redis holds them (``server/STORAGE.md``), read
    together (one MULTI/EXEC: a live server may commit between two reads)."""
    async with db.pipeline(transaction=True) as pipe:
        keys = Keys(prefix)
        pipe.get(keys.state(table))
        pipe.lrange(keys.log(table), 0, -1)
        pipe.xrange(keys.events(table), "-", "+")
        blob, log, entries = await pipe.execute()
    item, _ = current(stored_table(table, blob, log))  # the last full state with its input log replayed
    assert item.data is not None, f"{table}: {item.error}"
    return item.data, [(int(eid.split(b"-")[0]), unpack_event(fields[b"1"])) for eid, fields in entries]


Watcher = tuple[str, "int | None", list[Frame], list[tuple[int, int]]]


def as_json(obj: Any) -> Any:
    """``obj`` as the JSON subprotocol carries it (integer map keys become strings)."""
    return orjson.loads(orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS))


async def check_history(db: aioredis.Redis, prefix: str, table: str, watchers: list[Watcher]) -> dict[str, Any]:
    """What Redis holds for ``table`` is one history (stream ids without gaps,
    ending at the state's ``seq``), and everything the ``watchers`` (name,
    viewer, event frames received, acks as ``(turn, last seq before the ok)``)
    got is in it, exactly as they saw it; every ``ok`` came after its action's
    events, all stored. Returns the stored state."""
    state, events = await stored_history(db, prefix, table)
    seqs = [s for s, _ in events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"{table}: stream ids not consecutive"
    assert seqs[-1] == state["seq"], f"{table}: last stored event {seqs[-1]} but state at {state['seq']}"
    history = dict(events)
    for name, viewer, frames, acks in watchers:
        for frame in frames:
            seq = frame["seq"]
            assert seq <= state["seq"], f"{name}: received seq {seq} never stored (stored up to {state['seq']})"
            record = history[seq]
            view = Event.from_data(record).view(viewer)
            # a JSON client gets seat-keyed maps with string keys: compare as JSON carries them
            assert view == frame["event"] or as_json(view) == as_json(frame["event"]), (name, seq, view, frame["event"])
            assert record.get("turn") == frame.get("turn"), (name, seq)
        for turn, seq in acks:
            assert turn < seq <= state["seq"], (name, turn, seq, state["seq"])
    return state


def _diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two plain-data values differ (for assertion messages)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            out += _diff(a.get(key), b.get(key), f"{path}.{key}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"[:300]]


def _without_clocks(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` without what a restart rightly changes: the turn's clock (time
    passes) and the generator of a bot whose turn was re-armed (it drew its
    think time: bots' randomness is not the match's, G-2), and the replay context
    (the time the state was taken at and who watched then: server/STORAGE.md)."""
    out = dict(state)
    out.pop("replay", None)
    turn = out.get("turn")
    if turn:
        out["turn"] = {k: v for k, v in turn.items() if k not in ("clock", "bank")}
        if turn["kind"] == "bot":
            out["occupants"] = [{k: v for k, v in o.items() if k != "bot_rng" or o["seat"] != turn["seat"]}
                                for o in out["occupants"]]
    return out


@pytest.mark.timeout(3600)  # 200 kill points (--runslow) take ~15 minutes; the suite's limit is 300 s
async def test_sigkill_at_random_points_resumes_every_table_exactly(redis_server, tmp_path, request):
    points = _points(request.config)
    harness = Harness(redis_server, tmp_path, seed=b"kill-test/" + str(points).encode())
    try:
        harness.spawn()
        await harness.wait_ready()
        await harness.create_tables()
        await harness.play_on()
        await harness.kill_and_check()
        while harness.stats["kills"] < points:
            await harness.cycle()
        states = harness.last[0]
    except BaseException:
        print(f"server log: {tmp_path / 'server.log'}")
        raise
    finally:
        await harness.close()
    stats = harness.stats
    print(f"kill test: {stats}; per table: match reached, seq reached: "
          f"{sorted((s['game'], s['match'], s['seq']) for s in states.values())}")
    assert stats["kills"] >= points
    assert stats["acks"] > 10 * points and stats["replayed"] > 0 and stats["compared"] > points
    assert stats["log_steps"] > points, stats  # the kills fell between full states: recovered by replaying the log
    for table, kind in harness.tables.items():  # every game was played through many checkpoints
        assert states[table]["seq"] > 20 * (points if kind == "human" else 1), (states[table]["game"], kind)
