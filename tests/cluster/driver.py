"""Drives and checks a live cluster (tests/cluster/harness.py) for the tests
of tests/cluster (test_cluster.py, test_faults.py, test_views.py).

* :class:`TimedClient`: the protocol client, recording every frame, the time
  each event arrived and the close code of each websocket it had; a client
  connected straight to one node may reconnect through nginx instead
  (``reconnect_url``), as a real client behind the load balancer would.
* :class:`Member`: one participant of one table on its own connection, a
  seated player (``seat``) or a spectator (``seat`` None).
* :class:`Driver`: creates tables and seats members through nginx (or
  straight to a node), plays the seated ones (random legal actions from the
  protocol's ``legal`` list, a few ms of thinking; retried on
  ``unavailable`` and dropped connections, as SPEC "Errors" allows), and
  checks the cluster's outcome: one owner per table, every client's stream
  gap-free from its join, every event and acknowledgement in the stored
  history (:func:`tests.server.test_recovery_kill.check_history`), every
  table's live state equal to its checkpoint, the lobby on every node; and
  after a fault (:meth:`Driver.check_fault`): every table moving on, no
  connection left silent while its table moves, no player with an open
  websocket shown disconnected, and each stream's snapshots, repeats and
  gaps told apart (:meth:`Driver.stream_problems`).
* The tables the tests share: :func:`bots_table`, :func:`humans_table` and
  :func:`spread` (every game, its players and spectators on nodes that do
  not own it).

Times are seconds of ``time.monotonic()``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import redis.asyncio as aioredis
from websockets.protocol import State

from cardhall.clients.client import Client, ServerError
from cardhall.engine.bots.random_bot import RandomBot
from cardhall.engine.rng import FairRandom
from cardhall.server.cluster.leases import token_node
from cardhall.server.store.keys import Keys
from tests.cluster.harness import Cluster, Node
from tests.conftest import until
from tests.games import GAMES, quick
from tests.server.test_recovery_kill import _diff, _without_clocks, check_history, stored_history

Frame = dict[str, Any]

#: error codes a retried act may rightly get (the first attempt was applied, or the match moved on)
RETRY_OUTCOMES = frozenset({"stale_turn", "not_your_turn", "bad_state"})

#: close codes by which the server tells a client to reconnect and join again with ``since``:
#: 1001 (the node stops, SPEC "Closing codes") and 4012 (the node lost track of a table it relays,
#: protocol 1.2 in the making); None: no close frame at all (the node was killed, the socket cut)
RECONNECT_CODES = frozenset({1001, 4012})

#: every event of a test stays in the table's stream (check_history reads them all); every client
#: comes from 127.0.0.1 and the bots-only tables play faster than a public server's floor
NODE_ARGS = ["--redis-stream-bound", "100000", "--max-tables-per-address", "0", "--new-players-per-address", "0",
             "--bot-think-floor", "0"]
#: bots-only tables: paced so that events keep coming at a steady rate, matches without end
BOTS = {"bot_think": 0.15, "pause": 0.05, "auto_rematch": True, "close_after": 3600}
#: tables with two human players (and a bot): long clocks, nothing times out while a node is away
HUMANS = {"bot_think": 0.05, "pause": 0.05, "action_clock": 120, "time_bank": 120, "close_after": 3600}


class TimedClient(Client):
    """A recording :class:`Client` that also keeps ``(arrival, table, seq)``
    of every event frame (:attr:`arrivals`) and ``(time, close code)`` of
    every websocket it had (:attr:`closes`). ``reconnect_url``: where a
    reconnect goes (nginx, for a client first connected straight to a node)."""

    def __init__(self, url: str, *, reconnect_url: str | None = None, **kw: Any) -> None:
        super().__init__(url, record=True, **kw)
        self.arrivals: list[tuple[float, str, int]] = []
        self.closes: list[tuple[float, int | None]] = []
        self.reconnect_url = reconnect_url

    async def connect(self) -> TimedClient:
        await super().connect()
        if self.reconnect_url is not None:
            self.url = self.reconnect_url  # only the first connection goes where it was told
        return self

    def _closed(self, fut: asyncio.Future[tuple[int | None, str]]) -> None:
        super()._closed(fut)
        if not fut.cancelled() and fut.exception() is None:
            self.closes.append((time.monotonic(), fut.result()[0]))

    @property
    def is_open(self) -> bool:
        """Its websocket is open and no reconnect is under way."""
        return self.ws is not None and self.ws.state is State.OPEN and not self.resuming

    def dispatch(self, frame: Frame) -> None:
        if frame.get("type") == "event":
            self.arrivals.append((time.monotonic(), frame["table"], frame["seq"]))
        super().dispatch(frame)


@dataclass(eq=False)
class Member:
    """One participant of ``table`` on its own connection."""

    name: str
    table: str
    seat: int | None
    client: TimedClient
    rng: FairRandom
    node: str | None = None  # the node its first connection landed on, when asked
    first_seq: int = 0  # the seq of its join's snapshot
    acks: list[tuple[int, int]] = field(default_factory=list)  # (turn, last seq before the ok)
    failures: list[str] = field(default_factory=list)
    ended: asyncio.Event = field(default_factory=asyncio.Event)  # saw match_ended
    task: asyncio.Task[None] | None = None
    acting: bool = True
    in_flight: int = 0  # requests of :meth:`Driver.request` sent and not answered yet

    @property
    def events(self) -> list[Frame]:
        return [f for f in self.client.frames if f.get("type") == "event" and f.get("table") == self.table]

    @property
    def last_seq(self) -> int:
        return self.client.seqs.get(self.table, self.first_seq)

    @property
    def last_arrival(self) -> float | None:
        """When its last event of its table arrived (None: none yet)."""
        for at, t, _ in reversed(self.client.arrivals):
            if t == self.table:
                return at
        return None


def histogram(text: str, name: str) -> tuple[list[tuple[float, float]], float, float]:
    """``(buckets, sum, count)`` of Prometheus histogram ``name`` in exposition
    ``text``: buckets as ``(upper bound, cumulative count)``, +Inf last."""
    buckets: list[tuple[float, float]] = []
    total = count = 0.0
    for line in text.splitlines():
        if line.startswith(name + "_bucket{"):
            le = re.search(r'le="([^"]+)"', line)
            assert le is not None, line
            buckets.append((float(le.group(1)), float(line.rsplit(" ", 1)[1])))
        elif line.startswith(name + "_sum "):
            total = float(line.split()[1])
        elif line.startswith(name + "_count "):
            count = float(line.split()[1])
    return sorted(buckets), total, count


def quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """The ``q`` quantile estimated from cumulative ``buckets`` as Prometheus's
    ``histogram_quantile`` does (linear within the bucket; the highest finite
    bound when it falls in +Inf); 0.0 for no observations."""
    if not buckets or buckets[-1][1] == 0:
        return 0.0
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for bound, cumulative in buckets:
        if cumulative >= rank:
            if bound == float("inf"):
                return lower
            inside = cumulative - below
            return lower + (bound - lower) * ((rank - below) / inside if inside else 1.0)
        lower, below = bound, cumulative
    return lower


def add_histograms(parts: Iterable[tuple[list[tuple[float, float]], float, float]]
                   ) -> tuple[list[tuple[float, float]], float, float]:
    """Histograms of several processes (same buckets) added up."""
    merged: dict[float, float] = {}
    total = count = 0.0
    for buckets, s, c in parts:
        for bound, cumulative in buckets:
            merged[bound] = merged.get(bound, 0.0) + cumulative
        total += s
        count += c
    return sorted(merged.items()), total, count


class Driver:
    """Tables and members on ``cluster``; ``seed`` makes the players' choices reproducible."""

    def __init__(self, cluster: Cluster, seed: bytes) -> None:
        self.cluster = cluster
        self.rng = FairRandom(seed)
        self.keys = Keys(cluster.prefix)
        self.ops = {"X-Operator-Key": cluster.operator_key}
        # a fresh connection per request: nginx's reload (a node added or removed) closes the idle
        # connections its old workers kept, and a request sent on one as it closes fails to read
        self.http = httpx.AsyncClient(timeout=5.0, limits=httpx.Limits(max_keepalive_connections=0))
        self.db = aioredis.Redis.from_url(cluster.redis.url)
        self.tables: dict[str, str] = {}  # table -> game
        self.members: list[Member] = []
        self.stopping = False
        #: seat 1 of a human table asks for the rematch when a match ends
        self.rematch = True
        #: where the HTTP API is asked (nginx; a node of the test's choice while another is paused)
        self.api = cluster.nginx.http
        #: seconds a member waits for the answer to its ``act`` before it counts the act unanswered (a
        #: failure) and sends it again; a test whose fault stalls commits longer by design raises it
        self.answer_wait = 10.0

    # -- tables and members ---------------------------------------------------------
    async def create(self, game: str, seats: int, bots: int, options: Frame, node: Node | None = None) -> str:
        """A table created by a player of its own through nginx (or straight
        to ``node``), placed by the cluster's policy."""
        async with TimedClient(node.ws if node is not None else self.cluster.nginx.ws) as owner:
            await owner.hello(f"owner-{game}")
            table = await owner.create_table(game, seats=seats, bots=bots, options=options)
        self.tables[table] = game
        return table

    async def seat(self, table: str, seat: int | None, *, node: Node | None = None, locate: bool = False,
                   codec: str = "msgpack") -> Member:
        """Connect one member of ``table`` (through nginx, or straight to
        ``node``: its reconnects go through nginx) with reconnect, say hello,
        join (``seat`` None: as a spectator) and start following it.
        ``locate``: find which node the connection landed on (from every
        node's connection count: connect one at a time)."""
        url = node.ws if node is not None else self.cluster.nginx.ws
        name = f"{self.tables[table]}-{'watch' if seat is None else seat}-{len(self.members)}"
        client = TimedClient(url, reconnect=True, reconnect_for=60.0, codec=codec, reconnect_url=self.cluster.nginx.ws)
        before = await self.connections() if locate else {}
        await client.connect()
        await client.hello(name)
        member = Member(name, table, seat, client, self.rng.spawn(name))
        if node is not None:
            member.node = node.node_id
        elif locate:
            member.node = await self.landed(before)
        role = "spectator" if seat is None else "player"
        snapshot = await client.join(table, role=role, seat=seat, seed=name if seat is not None else None)
        assert snapshot["type"] == "snapshot", snapshot
        member.first_seq = snapshot["seq"]
        self.members.append(member)
        member.task = asyncio.get_running_loop().create_task(self._follow(member, snapshot))
        return member

    async def connections(self) -> dict[str, int]:
        """Every running node's open websocket count (its ``/healthz``)."""
        out = {}
        for n in self.cluster.nodes:
            if n.alive and not n.paused:
                out[n.node_id] = (await self.http.get(f"{n.http}/healthz")).json()["connections"]
        return out

    async def landed(self, before: dict[str, int], timeout: float = 30.0) -> str:
        """The node whose connection count went up by one since ``before``
        (once the nodes' counts show it, up to ``timeout``)."""
        now: dict[str, int] = {}

        async def one_up() -> bool:
            now.clear()
            now.update(await self.connections())
            return sum(now.values()) == sum(before.values()) + 1 and sum(
                1 for n, c in now.items() if c == before.get(n, 0) + 1) == 1

        try:
            await until(one_up, timeout, "one node's connection count up by one")
        except AssertionError:
            raise AssertionError(f"cannot tell where a connection landed: {before} -> {now}") from None
        return next(n for n, c in now.items() if c == before.get(n, 0) + 1)

    # -- playing ---------------------------------------------------------------------
    async def _follow(self, m: Member, snapshot: Frame) -> None:
        try:
            await self._play(m, snapshot)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not self.stopping:
                m.failures.append(f"{m.name}: {exc!r}")

    async def _play(self, m: Member, snapshot: Frame) -> None:
        """Read ``m``'s frames; a seated member acts on its turns and asks for
        the rematch (seat 1) when a match ends."""
        client = m.client
        bot = RandomBot(m.rng)
        answered: set[int] = set()
        pending: Frame | None = snapshot if snapshot.get("legal") else None
        while not self.stopping:
            if pending is not None:
                frame, pending = pending, None
            else:
                try:
                    frame = await client.next_frame(timeout=1.0)
                except TimeoutError:
                    continue
                kind = frame.get("type")
                if kind == "error":  # an error no request of the driver's awaited (the client's own resume)
                    re = frame.get("re")
                    first = next((f for f in client.frames if f is not frame and re is not None and f.get("re") == re
                                  and f.get("type") in ("ok", "error", "snapshot")), None)
                    if first is not None:  # each request gets one reply
                        m.failures.append(f"{m.name}: a second reply to request {re} "
                                          f"(first {first['type']} {first.get('code', '')}): {frame}")
                    else:
                        m.failures.append(f"{m.name}: an error outside a request: {frame}")
                    continue
                if kind not in ("event", "snapshot") or frame.get("table") != m.table:
                    continue
                # a snapshot: the stream started afresh there (whether it had to is stream_problems' to
                # judge, with the store at hand); it carries the open turn, answered like an event's
                if kind == "event" and frame["event"]["type"] == "match_ended":
                    m.ended.set()
                    if m.seat == 1 and m.acting and self.rematch:
                        await self.request(m, {"type": "rematch"}, None)
            if m.seat is None or not m.acting or "legal" not in frame:
                continue
            turn = frame["turn"]["id"]
            if turn in answered:
                continue
            answered.add(turn)
            await asyncio.sleep(m.rng.randbelow(20) / 1000)  # think 0..19 ms
            if m.acting and not self.stopping:
                await self.request(m, bot.choose({}, frame["legal"]), turn)

    async def request(self, m: Member, action: Frame, turn: int | None) -> None:
        """``act``, sent again after ``unavailable`` or a dropped connection;
        an acknowledged turn is recorded in ``m.acks``."""
        m.in_flight += 1
        try:
            await self._request(m, action, turn)
        finally:
            m.in_flight -= 1

    async def _request(self, m: Member, action: Frame, turn: int | None) -> None:
        client = m.client
        deadline = time.monotonic() + 30.0
        attempt = -1
        while time.monotonic() < deadline:
            attempt += 1
            try:
                await client.wait_ready(30.0)
            except (ConnectionError, TimeoutError):
                m.failures.append(f"{m.name}: the connection was not resumed")
                return
            try:
                reply = await client.act(m.table, action, turn=turn, timeout=self.answer_wait)
            except ServerError as exc:
                if exc.code == "unavailable":
                    await asyncio.sleep(0.1)
                    continue
                if exc.code == "stale_turn" or (turn is None or attempt > 0) and exc.code in RETRY_OUTCOMES:
                    return
                m.failures.append(f"{m.name}: act {action} on turn {turn}: {exc.frame}")
                return
            except TimeoutError:  # SPEC: a request whose owner went away is answered `unavailable`
                m.failures.append(f"{m.name}: act on turn {turn} not answered within {self.answer_wait:g} s")
                continue
            except ConnectionError:  # dropped before the answer: sent again once resumed
                if self.stopping:
                    return
                continue
            if turn is not None:
                frames = client.frames
                at = max(i for i in range(len(frames)) if frames[i] is reply)
                before = [f["seq"] for f in frames[:at] if f.get("type") == "event" and f.get("table") == m.table]
                m.acks.append((turn, before[-1] if before else 0))
            return
        m.failures.append(f"{m.name}: act on turn {turn} still unavailable after 30 s")

    def hold(self) -> None:
        """Seated members stop acting (their tables go quiet on a human's turn):
        no new request; those sent are answered (:meth:`answered`)."""
        for m in self.members:
            m.acting = False

    async def answered(self, timeout: float = 60.0) -> None:
        """Wait until no member has a request in flight: every act sent has
        its reply (and its acknowledgement is in ``m.acks``), or was given up."""
        await until(lambda: not any(m.in_flight for m in self.members), timeout,
                    "every request of the members answered")

    async def close(self) -> None:
        self.stopping = True
        tasks = [m.task for m in self.members if m.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        await asyncio.gather(*(m.client.close() for m in self.members), return_exceptions=True)
        await self.http.aclose()
        await self.db.aclose()

    # -- what the cluster says ------------------------------------------------------------
    async def cluster_nodes(self) -> list[Frame]:
        """``GET /api/cluster`` (at :attr:`api`): the live nodes."""
        reply = await self.http.get(f"{self.api}/api/cluster", headers=self.ops)
        assert reply.status_code == 200, reply.text
        return reply.json()["nodes"]

    async def lease_owners(self) -> dict[str, str | None]:
        """Each table's lease holder, read from Redis."""
        tokens = await self.db.mget([self.keys.lease(t) for t in self.tables])
        return {t: token_node(tok) for t, tok in zip(self.tables, tokens)}

    async def owners(self) -> dict[str, str]:
        """Each table's owner: its lease holder, which lists it (alone) in
        ``/api/cluster``'s ``table_ids``. AssertionError otherwise."""
        listed: dict[str, str] = {}
        for node in await self.cluster_nodes():
            for t in node["table_ids"]:
                if t in self.tables:
                    assert t not in listed, f"{t} listed by {listed[t]} and {node['id']}"
                    listed[t] = node["id"]
        leases = await self.lease_owners()
        for t in self.tables:
            assert leases[t] is not None, f"{t}: no lease"
            assert leases[t] == listed.get(t), f"{t}: lease held by {leases[t]}, listed by {listed.get(t)}"
        return listed

    async def settled(self, timeout: float = 15.0, live: int | None = None) -> dict[str, str]:
        """:meth:`owners` once it holds (with ``live`` nodes in ``/api/cluster``
        when given), retried for up to ``timeout``; returns the owners."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                owners = await self.owners()
                if live is not None:
                    nodes = await self.cluster_nodes()
                    assert len(nodes) == live, f"{len(nodes)} live nodes, not {live}: {[n['id'] for n in nodes]}"
                return owners
            except (AssertionError, httpx.HTTPError):
                if time.monotonic() > deadline:
                    raise
            await asyncio.sleep(0.1)

    async def stored_seqs(self) -> dict[str, int]:
        """Each table's stored ``seq``."""
        return {t: (await stored_history(self.db, self.cluster.prefix, t))[0]["seq"] for t in self.tables}

    async def progress(self, after: dict[str, int], since: float, timeout: float) -> dict[str, float]:
        """Wait until some member of each table of ``after`` has received an
        event beyond ``after[table]``; returns, per table, the arrival of the
        first such event minus ``since``. AssertionError naming the tables
        still stuck after ``timeout``."""
        deadline = time.monotonic() + timeout
        first: dict[str, float] = {}
        while True:
            for table, seq in after.items():
                if table in first:
                    continue
                times = [at for m in self.members if m.table == table
                         for at, t, s in m.client.arrivals if t == table and s > seq]
                if times:
                    first[table] = min(times) - since
            if len(first) == len(after):
                return first
            if time.monotonic() > deadline:
                stuck = sorted(set(after) - set(first))
                try:  # did the table itself stop, or only the events to these members?
                    stored = await self.stored_seqs()
                    why = ", ".join(f"{t} stored {after[t]} -> {stored[t]}" for t in stuck)
                except Exception as exc:
                    why = f"stored seqs unreadable: {exc!r}"
                raise AssertionError(f"no new event within {timeout} s at {stuck} ({why})")
            await asyncio.sleep(0.02)

    def arrivals(self, table: str) -> list[tuple[int, float]]:
        """``(seq, first arrival at any member)`` of ``table``'s events, by seq."""
        first: dict[int, float] = {}
        for m in self.members:
            if m.table == table:
                for at, t, s in m.client.arrivals:
                    if t == table and (s not in first or at < first[s]):
                        first[s] = at
        return sorted(first.items())

    async def reconnected(self, timeout: float = 30.0) -> None:
        """Wait until every member's connection is up and no reconnect is under way."""
        deadline = time.monotonic() + timeout
        while any(m.client.resuming for m in self.members):
            if time.monotonic() > deadline:
                raise AssertionError(f"still reconnecting: {[m.name for m in self.members if m.client.resuming]}")
            await asyncio.sleep(0.05)
        await asyncio.gather(*(m.client.wait_ready(timeout) for m in self.members))

    async def routed_to(self, node: Node, timeout: float = 10.0) -> float:
        """Wait until nginx passes requests to ``node`` again (after it was
        away: nginx leaves a node that failed out for its ``fail_timeout``).
        A plain ``GET /healthz`` through nginx goes to the node with the
        fewest open connections that nginx counts as up: a node just started
        has none. Returns the seconds waited."""
        started = time.monotonic()
        while True:
            try:
                reply = await self.http.get(f"{self.cluster.nginx.http}/healthz")
                if reply.status_code == 200 and reply.json()["cluster"]["node"] == node.node_id:
                    return time.monotonic() - started
            except httpx.HTTPError:
                pass
            if time.monotonic() - started > timeout:
                raise AssertionError(f"nginx does not pass requests to {node.node_id}")
            await asyncio.sleep(0.1)

    # -- the checks -----------------------------------------------------------------------
    def failures(self) -> list[str]:
        return [f for m in self.members for f in m.failures]

    def stream_problems(self, held_from: Mapping[str, int] | None = None) -> list[str]:
        """What is wrong with each member's frames of its table: they must be
        its join's snapshot, then events with consecutive ``seq`` from there
        (across reconnects: a resumed connection's first event is ``since +
        1``). Told apart, counted over the whole stream: a repeated ``seq``
        (an event at or below the last one), a gap, and a snapshot after the
        first (sent on its own, or answering the client's own resuming
        ``join``) while the stream still held the events it replaces:
        ``held_from`` (table -> the first ``seq`` its stored stream holds)
        makes a snapshot due where the events after the last one held are no
        longer stored (Redis lost them); without it every later snapshot is
        a problem. Also: the client counted a gap; a websocket closed by the
        server with a code other than :data:`RECONNECT_CODES`."""
        problems = []
        for m in self.members:
            frames = [f for f in m.client.frames if f.get("table") == m.table and f.get("type") in ("event", "snapshot")]
            if not frames or frames[0]["type"] != "snapshot":
                problems.append(f"{m.name}: no snapshot first")
                continue
            expected = frames[0]["seq"] + 1
            repeats: list[int] = []
            gaps: list[tuple[int, int]] = []
            snapshots: list[tuple[int, int]] = []
            for f in frames[1:]:
                seq = f["seq"]
                if f["type"] == "snapshot":
                    first = held_from.get(m.table) if held_from is not None else None
                    if first is None or expected >= first:  # event `expected` is stored: it was due, not a snapshot
                        snapshots.append((seq, expected))
                    expected = max(expected, seq + 1)
                elif seq == expected:
                    expected += 1
                elif seq < expected:
                    repeats.append(seq)
                else:
                    gaps.append((expected, seq))
                    expected = seq + 1
            where = f"(reconnects {m.client.reconnects}, closes {[c for _, c in m.client.closes]})"
            if repeats:
                problems.append(f"{m.name}: {len(repeats)} repeated events, seq {repeats[:6]} {where}")
            if gaps:
                problems.append(f"{m.name}: {len(gaps)} gaps, (due, got) {gaps[:4]} {where}")
            if snapshots:
                problems.append(f"{m.name}: {len(snapshots)} unrequested snapshots, (seq, event due and still stored) "
                                f"{snapshots[:4]} {where}")
            if m.client.gaps and not gaps:
                problems.append(f"{m.name}: client counted {m.client.gaps} gaps")
            odd = [c for _, c in m.client.closes if c is not None and c not in RECONNECT_CODES]
            if odd and not self.stopping:
                problems.append(f"{m.name}: closed by the server with {odd}")
        return problems

    def stream_summary(self) -> str:
        """One line: the members, their reconnects, the close codes they
        saw, and the snapshots after the first (each a stream started afresh)."""
        later = sum(max(0, sum(1 for f in m.client.frames if f.get("type") == "snapshot" and f.get("table") == m.table)
                        - 1) for m in self.members)
        codes = Counter(c for m in self.members for _, c in m.client.closes)
        return (f"{len(self.members)} connections: {sum(m.client.reconnects for m in self.members)} reconnects, "
                f"closes {dict(codes)}, {later} snapshots after the join's")

    def check_streams(self, held_from: Mapping[str, int] | None = None) -> None:
        """:meth:`stream_problems` is empty (AssertionError listing them)."""
        problems = self.stream_problems(held_from)
        assert not problems, "\n".join(problems)

    async def held_from(self) -> dict[str, int]:
        """Each table's first stored ``seq`` (the oldest event its stream holds)."""
        out = {}
        for table in self.tables:
            _, events = await stored_history(self.db, self.cluster.prefix, table)
            out[table] = events[0][0] if events else 1
        return out

    async def check_histories(self, stored_only: bool = False) -> dict[str, dict[str, Any]]:
        """:func:`check_history` of every table with all its members; returns
        the stored states. ``stored_only``: only what the stream still holds
        is compared (a Redis that lost its data was written again from the
        nodes' memory: the events they keep, not the whole history)."""
        states = {}
        for table in self.tables:
            members = [m for m in self.members if m.table == table]
            if stored_only:
                _, events = await stored_history(self.db, self.cluster.prefix, table)
                first = events[0][0]
                watchers = [(m.name, m.seat, [f for f in m.events if f["seq"] >= first],
                             [(turn, seq) for turn, seq in m.acks if seq >= first]) for m in members]
            else:
                watchers = [(m.name, m.seat, m.events, m.acks) for m in members]
            states[table] = await check_history(self.db, self.cluster.prefix, table, watchers)
        return states

    async def reopen_db(self) -> None:
        """A new Redis client for the checks (after Redis was restarted)."""
        await self.db.aclose()
        self.db = aioredis.Redis.from_url(self.cluster.redis.url)

    async def check_live_states(self, owners: dict[str, str], timeout: float = 30.0) -> int:
        """Each table's state on its owner (``GET /api/ops/tables/{id}`` there)
        equals its last checkpoint, clocks and a re-armed bot's generator aside
        (:func:`_without_clocks`). A table that moves on between the two reads
        is read again (for up to ``timeout`` per table). Returns the number compared."""
        compared = 0
        for table, owner in owners.items():
            node = self.cluster.node(owner)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                reply = await self.http.get(f"{node.http}/api/ops/tables/{table}", headers=self.ops)
                assert reply.status_code == 200, reply.text
                body = reply.json()
                assert body["node"] == owner and "checkpoint" not in body, (table, owner, body.get("node"))
                stored, _ = await stored_history(self.db, self.cluster.prefix, table)
                live = body["state"]
                if live["seq"] == stored["seq"]:
                    assert _without_clocks(live) == _without_clocks(stored), (table, _diff(live, stored))
                    compared += 1
                    break
                await asyncio.sleep(0.03)
            else:
                raise AssertionError(f"{table}: live and stored seq never met in {timeout:g} s")
        return compared

    async def check_lobbies(self) -> None:
        """Every running node's lobby (``GET /api/tables``) lists every table,
        and ``GET /api/tables/{id}`` answers for each."""
        for n in self.cluster.nodes:
            if not n.alive or n.paused:
                continue
            listed = {e["id"] for e in (await self.http.get(f"{n.http}/api/tables")).json()}
            assert set(self.tables) <= listed, (n.node_id, set(self.tables) - listed)
            for table, game in self.tables.items():
                info = await self.http.get(f"{n.http}/api/tables/{table}")
                assert info.status_code == 200 and info.json()["game"] == game, (n.node_id, table, info.text)

    def serving_nodes(self) -> list[Node]:
        """The nodes that run and are not paused."""
        return [n for n in self.cluster.nodes if n.alive and not n.paused]

    async def flowing(self, timeout: float, advance: int = 5) -> list[str]:
        """After a fault: every table moves on, and every member receives its
        table's events again. From the stored ``seq`` of each table when
        called (s), wait up to ``timeout`` until every table's stored ``seq``
        passed s + ``advance`` and every member received an event past s.
        Returns the problems found at the deadline (empty: all well): a table
        that did not move (with the members it waits on: those behind its
        stored ``seq``), and a *silent* connection: its table moved
        ``advance`` events past s but it got none of them (a connection the
        server closed and the client resumed counts by the events it
        received after the resume)."""
        start = await self.stored_seqs()
        deadline = time.monotonic() + timeout
        while True:
            stored = await self.stored_seqs()
            stuck = [t for t in self.tables if stored[t] < start[t] + advance]
            quiet = [m for m in self.members if m.last_seq <= start[m.table]]
            if not stuck and not quiet:
                return []
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        problems = []
        now = time.monotonic()
        for m in quiet:
            if stored[m.table] >= start[m.table] + advance:
                last = m.last_arrival
                problems.append(f"silent: {m.name} ({'open' if m.client.is_open else 'not open'}, closes "
                                f"{[c for _, c in m.client.closes]}) at seq {m.last_seq}, its last event "
                                f"{'never' if last is None else f'{now - last:.1f} s ago'}, while {m.table} went "
                                f"{start[m.table]} -> {stored[m.table]} in {timeout:.0f} s")
        for t in stuck:
            behind = [f"{m.name} at {m.last_seq}" for m in self.members if m.table == t and m.last_seq < stored[t]]
            problems.append(f"not moving: {t} ({self.tables[t]}) stored seq {start[t]} -> {stored[t]} in {timeout:.0f} s"
                            + (f"; members behind it: {behind}" if behind else ""))
        return problems

    async def presence(self, timeout: float) -> list[str]:
        """After a fault: no seated member whose websocket is open is shown
        ``connected: false`` (or not at its seat) in its table's public info
        (``GET /api/tables/{id}``) on any serving node. Waits up to
        ``timeout`` for it; returns what is still wrong then (empty: all well)."""
        deadline = time.monotonic() + timeout
        while True:
            wrong = []
            for table in self.tables:
                seated = [m for m in self.members if m.table == table and m.seat is not None and m.client.is_open]
                if not seated:
                    continue
                for node in self.serving_nodes():
                    try:
                        reply = await self.http.get(f"{node.http}/api/tables/{table}")
                        occupants = {o["seat"]: o for o in reply.json()["occupants"]}
                    except (httpx.HTTPError, ValueError, KeyError) as exc:
                        wrong.append(f"{node.node_id}: {table} info unreadable: {exc!r}")
                        continue
                    for m in seated:
                        o = occupants.get(m.seat)
                        if o is None or o.get("player") != m.client.player:
                            wrong.append(f"{node.node_id}: {m.name} (open websocket) not at seat {m.seat} of {table}: {o}")
                        elif not o["connected"]:
                            wrong.append(f"{node.node_id}: {m.name} (open websocket) shown connected: false at "
                                         f"{table} seat {m.seat}")
            if not wrong or time.monotonic() > deadline:
                return [f"presence: {w}" for w in wrong]
            await asyncio.sleep(0.2)

    async def moved_again(self, after: dict[str, int], since: float, timeout: float, found: list[str]
                          ) -> dict[str, float]:
        """:meth:`progress`, its AssertionError appended to ``found`` instead
        of raised (the checks after the fault then list it with the rest)."""
        try:
            return await self.progress(after, since, timeout)
        except AssertionError as exc:
            found.append(f"after the fault: {exc}")
            return {}

    async def shown_connected(self, m: Member, node: Node | None = None) -> bool | None:
        """Whether ``m``'s seat shows ``connected`` in its table's public info
        (asked at ``node``, default :attr:`api`); None when it cannot be read."""
        try:
            reply = await self.http.get(f"{node.http if node is not None else self.api}/api/tables/{m.table}")
            occupants = {o["seat"]: o for o in reply.json()["occupants"]}
        except (httpx.HTTPError, ValueError, KeyError):
            return None
        o = occupants.get(m.seat)
        return None if o is None else bool(o["connected"])

    async def check_fault(self, live: int | None = None, stored_only: bool = False, live_states: bool = True,
                          timeout: float | None = None, found: Iterable[str] = ()) -> dict[str, str]:
        """Everything that must hold once a fault is over, every check run
        and every problem listed in one AssertionError: every client resumed
        (:meth:`reconnected`), one owner per table (with ``live`` nodes),
        :meth:`flowing` and :meth:`presence` (while the players play; then
        they hold, and every request sent is answered: :meth:`answered`), and
        :meth:`check_all` (member failures, streams judged
        against what the store holds, histories and acknowledgements
        (``stored_only``: what the rewritten streams hold), the lobby, the
        live states). ``timeout``: each wait's deadline (default ten lease
        TTLs, at least 30 s); ``found``: problems the test found before, listed first.
        Returns the owners."""
        timeout = timeout if timeout is not None else max(30.0, 10 * self.cluster.lease_ttl)
        problems: list[str] = list(found)
        try:
            await self.reconnected(timeout)
        except (AssertionError, ConnectionError, TimeoutError) as exc:
            problems.append(f"reconnect: {exc!r}")
        try:
            await self.settled(timeout, live=live)
        except (AssertionError, httpx.HTTPError) as exc:
            problems.append(f"one owner: {exc!r}")
        moving, shown = await asyncio.gather(self.flowing(timeout), self.presence(timeout))
        problems += moving + shown
        self.hold()
        try:
            await self.answered(max(60.0, timeout))
        except AssertionError as exc:
            problems.append(f"requests: {exc}")
        print(f"after the fault: {self.stream_summary()}")
        owners: dict[str, str] = {}
        try:
            owners = await self.check_all(live=live, stored_only=stored_only, live_states=live_states)
        except AssertionError as exc:
            problems += str(exc).splitlines()
        assert not problems, "\n".join(problems)
        return owners

    async def check_all(self, live: int | None = None, stored_only: bool = False,
                        live_states: bool = False) -> dict[str, str]:
        """The checks after a disruption, once the cluster settled: no failure
        in any member, one owner per table, streams gap-free, histories
        (``stored_only``: :meth:`check_histories`), the lobby, and with
        ``live_states`` :meth:`check_live_states`. Every check runs; one
        AssertionError lists what each that failed found. Returns the owners."""
        problems: list[str] = [f"member: {f}" for f in self.failures()]
        owners: dict[str, str] = {}

        async def run(name: str, check: Callable[[], Awaitable[Any]]) -> Any:
            try:
                return await check()
            except Exception as exc:
                lines = str(exc).splitlines() if isinstance(exc, AssertionError) else []
                problems.extend(f"{name}: {line}" for line in lines or [repr(exc)])
                return None

        async def streams() -> None:
            self.check_streams(await self.held_from())

        owners = await run("one owner", lambda: self.settled(live=live)) or {}
        await run("streams", streams)
        await run("history", lambda: self.check_histories(stored_only))
        await run("lobby", self.check_lobbies)
        if live_states and owners:
            await run("live state", lambda: self.check_live_states(owners))
        assert not problems, "\n".join(problems)
        return owners


# -- the tables the tests share ---------------------------------------------------------------
async def bots_table(d: Driver, game: str, **kw: Any) -> str:
    """An all-bots table of ``game`` (three seats) that rematches by itself."""
    return await d.create(game, 3, 3, quick(game, **BOTS), **kw)


async def humans_table(d: Driver, game: str, **kw: Any) -> str:
    """A table of ``game`` with two human seats and a bot (three seats)."""
    return await d.create(game, 3, 1, quick(game, **HUMANS), **kw)


def tables_of(owners: Mapping[str, str], node: str) -> list[str]:
    """The tables of ``owners`` that ``node`` owns."""
    return sorted(t for t, n in owners.items() if n == node)


async def spread(d: Driver, *, rounds: int = 1, bots: int = 0, rebalancing: bool = False) -> dict[str, str]:
    """On a cluster whose nodes run with ``--placement local``: ``rounds``
    tables of every game (:func:`humans_table`) and ``bots`` all-bots tables
    (:func:`bots_table`, games in turn), each created straight on the next
    node in turn; on each human table a spectator and the two players, each
    connected straight to a node that does not own it (their reconnects go
    through nginx); on each bots table a spectator on every node that does
    not own it (it moves on whatever happens to the human players: a
    connection left behind shows as silent). Returns the owners (checked:
    each table on the node it was made on, every member on another node; on
    nodes ``rebalancing``, only one owner per table: rebalancing may have
    moved a table meanwhile, even next to one of its members)."""
    nodes = d.cluster.nodes
    made: dict[str, str] = {}
    games = GAMES
    for i in range(rounds * len(games) + bots):
        owner = nodes[i % len(nodes)]
        others = [n for n in nodes if n is not owner]
        game = games[i % len(games)]
        if i < rounds * len(games):
            table = await humans_table(d, game, node=owner)
            await d.seat(table, None, node=others[i % len(others)])
            await d.seat(table, 1, node=others[0])
            await d.seat(table, 2, node=others[-1])  # the last seat: the match starts
        else:
            table = await bots_table(d, game, node=owner)
            for node in others:
                await d.seat(table, None, node=node)
        made[table] = owner.node_id
    owners = await d.settled(live=len(nodes))
    if not rebalancing:
        assert owners == made, (owners, made)
        assert all(m.node != owners[m.table] for m in d.members), "every member on a node that does not own its table"
    spread = Counter(m.node for m in d.members)
    assert len(spread) == len(nodes), spread
    return owners


def beside_target(seconds: float, at_most: float) -> str:
    """A timing figure beside its target, as printed: the targets (failover within lease_ttl + 1.5 s,
    handover p99 under 0.5 s) are figures, not assertions, since a busy machine may miss them while
    the code is right (``cardhall bench cluster`` measures them); every wait here has its own bound."""
    return f"target {at_most:g} s {'met' if seconds < at_most else 'MISSED'}"
