"""The rebalance round of ``cardhall bench cluster``: a rolling restart under
load, and how long the cluster takes to spread its tables evenly again.

On by default on the largest size of ``--nodes`` when it is 2 or more
(``--skip-rebalance`` leaves it out); ``cardhall bench cluster --only rebalance``
runs it alone (no measuring windows, no failover, handover or fault round),
e.g. ``cardhall bench cluster --nodes 3 --only rebalance``. On a fresh cluster
of that size, the same ``--tables`` bot tables and spectators as the measured
sessions (every connection reconnects and resumes, ``join`` with ``since``,
when the server closes it), plus ``--rebalance-players`` (default 6) tables of
one bot fewer whose free seat a player of the bench takes (answering every turn
at once, on a connection of its own to a node that does not own its table, in
a thread of the bench). The nodes run with ``--redis-stream-bound 100000`` (no
event of the round is trimmed from the tables' streams: the acknowledged
actions are looked up there) and, when given, the bench's ``--rebalance-rate``
and ``--rebalance-hold`` (else the server's defaults). After ``--warmup`` s,
the **rolling restart**: each node in turn ``b1..bN`` gets SIGTERM (it hands
its tables over), and once it has exited is started again with the same id
and port; the bench waits until it answers ``/healthz`` and is listed in
``/api/cluster``, then goes on with the next. From the last node ready it
observes until the table counts have been within 10 % of an even share and
no table has moved for ``QUIET`` s, at most ``--rebalance-observe`` s
(default 90). All along, :class:`TablePoller` asks every live node's
``GET /api/cluster`` about 4 times a second (each node's own entry is fresh:
answering writes its heartbeat; a node that does not answer is taken from
another's view) for the table counts and which node serves each table.

Figures (``rebalance`` in ``--json``; the text report's ``-- rebalance``):

* ``restarts``: per node, the tables it held at SIGTERM, seconds to exit,
  to be ready again (from its start) and to be listed, the counts then;
* ``balance`` (:func:`balance_times`, times from the last node ready again):
  ``within_10pct_s`` (the start of the last run of polls in which every
  node listed holds within 10 % of the even share, the total of tables over
  the nodes, and every node is listed; None: not at the end), ``first_within_10pct_s``
  (the first such poll), ``within_one_s`` / ``first_within_one_s`` (the same
  within one table of the even share), the counts then and at the end, and
  ``target_met`` (within 10 % within 60 s, for good);
* ``moves``: the increase of ``cardhall_rebalance_moves_total`` summed over
  the nodes' processes (a restarted node's counters start again at 0: each is
  scraped before its SIGTERM and all at the end, and per-process increases
  are summed, :func:`increase`), over the round and after the last node was
  ready; from the polls: tables seen changing node after the last restart
  (``observed``), ``moved_twice`` (tables moved more than once then: thrashing)
  and ``after_balanced`` (changes after ``within_10pct_s``). (A move still
  under way when its giver or taker is scraped before a SIGTERM may be
  counted by one side only: ``moves`` and ``pause``'s count can differ by one
  or two.)
* ``pause``: ``cardhall_rebalance_pause_seconds`` on the receiving nodes
  (from the giver stopping a table to the receiver serving it; count, mean,
  p50 and p99 as bucket bounds, per-process increases; target p99 < 500 ms),
  and ``handover``: the same of ``cardhall_handover_seconds`` (the SIGTERM
  handovers of the restart) to compare;
* ``clients``: per table moved after the last restart, the longest wait
  between two events its spectators saw since then (p50, p99, max; the
  spectators of the node restarted last left out: they were still
  resuming), next to the same of the other tables, and the tables with a
  wait over 5 s (by id); ``timeline``: the counts per node once a second
  from the round's start (``last_ready_s``: when the last node was ready
  again, on that scale); ``connections``: the spectators planned and
  connected, those the server closed during the round (by close code), how
  many had a websocket open again at the end (``reconnected``) and how many
  were lost; over the whole round the silence of each reconnected one (the
  longest time it went without an event while its table's events went on,
  :func:`~.cluster_load.silence`: its node's restart included), p50, p99,
  max, and ``silent_over_5s``: how many went silent for over 5 s (a client
  whose resuming ``hello`` was refused gives up with its new websocket open:
  the load counts it reconnected, it hears nothing more); ``resumed``: the
  reconnected ones not silent over 5 s; ``seq_gaps`` and
  ``repeats`` (an event whose ``seq`` is not above the last one on its
  connection: repeated or out of order) of the spectators over the whole
  session (the players' under ``players``);
* ``players``: seated of planned, ``acks`` (actions the server acknowledged
  with ``ok`` for a turn), ``acks_lost`` (:func:`check_history`: an
  acknowledged action whose events, those its connection received between the
  turn's start and the ``ok``, are not all in the table's stored event stream,
  read from Redis, with the same ``ts``; or none received before the ``ok``),
  ``diverged`` (events a player received that the stored history does not hold
  as received), ``repeats``, ``seq_gaps`` and ``errors`` of the players'
  connections. 0 lost and no repeat are expected.

The issue's target: after a rolling restart of three nodes with 200 tables,
every node within 10 % of an even share within a minute, no acknowledged
action lost, no repeat on any connection. Figures, not checks: nothing here
asserts them; the round's spectators or players that did not connect are a
shortfall (:func:`.rebalance_figures.shortfalls`: a WARNING and exit status 1). The figures are computed in :mod:`.rebalance_figures`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from cardhall.clients.bench.background import Background
from cardhall.clients.bench.cluster_procs import Cluster, Node, Session, player_nodes
from cardhall.clients.bench.rebalance_figures import (
    HANDOVER,
    MOVES,
    PAUSE,
    TARGET_S,
    balance_times,
    check_history,
    histogram_increase,
    increase,
    ms,
    owner_changes,
    quantile,
    timeline_rows,
    within,
)
from cardhall.clients.load.player import LoadPlayer
from cardhall.clients.load.probe import metric
from cardhall.clients.load.tracked import Recorder, TrackedClient

#: seconds between two polls of ``/api/cluster``
POLL_EVERY = 0.25
#: seconds without a table changing node (and balanced within 10 %) after which observing ends
QUIET = 10.0
#: the nodes' stream bound in this round: every event of the round stays in its table's stream
STREAM_BOUND = "100000"

Frame = dict[str, Any]


def register_args(p: argparse.ArgumentParser) -> None:
    """The round's options of ``bench cluster``."""
    p.add_argument("--skip-rebalance", action="store_true", help="no rebalance round (a rolling restart of a fresh "
                   "cluster of the largest size, then the time until its tables are spread evenly again)")
    p.add_argument("--rebalance-rate", type=float, default=None, metavar="R", help="the nodes' --rebalance-rate in the "
                   "rebalance round (default: the server's)")
    p.add_argument("--rebalance-hold", type=float, default=None, metavar="S", help="the nodes' --rebalance-hold in the "
                   "rebalance round (default: the server's)")
    p.add_argument("--rebalance-observe", type=float, default=90.0, metavar="S", help="the longest the rebalance round "
                   "observes after the last node is ready again (default 90)")
    p.add_argument("--rebalance-players", type=int, default=6, metavar="N", help="tables with a seat played by the bench in the "
                   "rebalance round, whose acknowledged actions are looked up in the stored history (default 6)")


def node_args(args: argparse.Namespace) -> tuple[str, ...]:
    """The ``cardhall serve`` options of the round's nodes.

    >>> node_args(argparse.Namespace(rebalance_rate=None, rebalance_hold=5.0))
    ('--redis-stream-bound', '100000', '--rebalance-hold', '5.0')
    """
    out = ["--redis-stream-bound", STREAM_BOUND]
    if args.rebalance_rate is not None:
        out += ["--rebalance-rate", repr(args.rebalance_rate)]
    if args.rebalance_hold is not None:
        out += ["--rebalance-hold", repr(args.rebalance_hold)]
    return tuple(out)


# -- figures from what was recorded (pure) ---------------------------------------------------

class TablePoller(Background):
    """Every :data:`POLL_EVERY` s, ``GET /api/cluster`` of each live node of
    ``cluster``: :attr:`counts` ``[(time, node -> tables)]`` (each node's own
    entry, else another node's view of it; a node said to be stopping is left
    out), :attr:`owned` ``[(time, node -> table ids)]`` (own entries only: fresh),
    :attr:`failures` (answers that did not come)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.counts: list[tuple[float, dict[str, int]]] = []
        self.owned: list[tuple[float, dict[str, set[str]]]] = []
        self.failures = 0
        super().__init__(self._run, "table poller")

    def latest(self) -> dict[str, int]:
        return dict(self.counts[-1][1]) if self.counts else {}

    def _poll(self, client: Any) -> None:
        own: dict[str, Frame] = {}
        others: dict[str, Frame] = {}
        for n in list(self.cluster.nodes):
            if not n.alive:
                continue
            try:
                r = client.get(n.http + "/api/cluster")
                r.raise_for_status()
                view = r.json()
            except Exception:  # noqa: BLE001 (a node stopping or starting: its entry comes from another view)
                self.failures += 1
                continue
            for entry in view.get("nodes", []):
                (own if entry.get("id") == view.get("node") else others)[entry["id"]] = entry
        at = time.time()
        entries = {**others, **own}
        self.counts.append((at, {k: int(e.get("tables", 0)) for k, e in sorted(entries.items())
                                 if not e.get("stopping")}))
        self.owned.append((at, {k: set(e.get("table_ids", [])) for k, e in own.items()}))

    def _run(self) -> None:
        import httpx

        with httpx.Client(timeout=1.0, headers={"X-Operator-Key": self.cluster.key}) as client:
            while not self._stop.is_set():
                began = time.monotonic()
                self._poll(client)
                self._stop.wait(max(0.0, POLL_EVERY - (time.monotonic() - began)))


class AckClient(TrackedClient):
    """A player's connection that notes, for each acknowledged ``act`` with a
    turn, the last ``seq`` received when its ``ok`` came (:attr:`acks`), and
    every event's ``ts`` by ``seq`` (:attr:`received`; one table per connection)."""

    def __init__(self, url: str, recorder: Recorder, table: str) -> None:
        super().__init__(url, recorder, codec="msgpack", batch=True, reconnect=True)
        self.table = table
        self.acks: list[tuple[int, int | None]] = []
        self.received: dict[int, float] = {}
        self.last: int | None = None
        self._at_ok: dict[Any, int | None] = {}

    def dispatch(self, frame: Frame) -> None:
        kind = frame.get("type")
        if kind == "event":
            self.received[frame["seq"]] = frame["ts"]
            self.last = frame["seq"]
        elif kind == "ok" and frame.get("re") is not None:
            self._at_ok[frame["re"]] = self.last
        super().dispatch(frame)

    async def act(self, table: str, action: Frame, turn: int | None = None) -> Frame:
        reply = await super().act(table, action, turn)
        at = self._at_ok.pop(reply.get("re"), None)
        if turn is not None:
            self.acks.append((turn, at))
        return reply


class Players(Background):
    """The bench's players, in a thread of their own: one per ``(table, node
    url)`` of ``seats``, a :class:`~cardhall.clients.load.player.LoadPlayer`
    answering every turn at once on an :class:`AckClient` (reconnecting)."""

    def __init__(self, seats: list[tuple[str, str]]) -> None:
        self.seats = seats
        self.recorder = Recorder()
        self.clients: list[AckClient] = []
        self.seated: dict[str, int] = {}  # table -> seat
        self.failures: list[str] = []
        self.ready = False
        super().__init__(lambda: asyncio.run(self._run()), "bench players")

    async def _sit(self, table: str, url: str, tasks: list[asyncio.Task[Any]]) -> None:
        client = AckClient(url, self.recorder, table)
        self.clients.append(client)
        for attempt in range(5):
            try:
                await client.connect()
                break
            except (TimeoutError, OSError):
                if attempt == 4:
                    raise
                await asyncio.sleep(0.5 * (attempt + 1))
        await client.hello("bench player")
        player = LoadPlayer(client, table, "random", seat=None, think=0.0, bot_seed=os.urandom(16))
        task = asyncio.get_running_loop().create_task(player.play())
        tasks.append(task)
        deadline = time.monotonic() + 30
        while player.seat is None and not task.done() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        if player.seat is None:
            raise (task.exception() if task.done() and not task.cancelled() else None) or TimeoutError("did not sit")
        self.seated[table] = player.seat

    async def _run(self) -> None:
        from cardhall.clients.load.worker import _quiet_when_closing

        tasks: list[asyncio.Task[Any]] = []
        got = await asyncio.gather(*(self._sit(t, url, tasks) for t, url in self.seats), return_exceptions=True)
        self.failures = [repr(r)[:200] for r in got if isinstance(r, BaseException)]
        self.ready = True
        while not self._stop.is_set():
            await asyncio.sleep(0.1)
        asyncio.get_running_loop().set_exception_handler(_quiet_when_closing)
        await asyncio.gather(*(c.close() for c in self.clients), return_exceptions=True)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)

    def wait_seated(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.ready and time.monotonic() < deadline:
            time.sleep(0.05)


def stored_ts(redis_url: str, prefix: str, table: str) -> dict[int, float]:
    """seq -> ``ts`` of every event in ``table``'s stored stream (``server/STORAGE.md``)."""
    import redis

    from cardhall.server.store.format import unpack_event
    from cardhall.server.store.keys import Keys

    db = redis.Redis.from_url(redis_url)
    try:
        entries = db.xrange(Keys(prefix).events(table), "-", "+")
    finally:
        db.close()
    return {int(eid.split(b"-")[0]): float(unpack_event(fields[b"1"])["ts"]) for eid, fields in entries}


# -- the round ---------------------------------------------------------------------------------

def _listed(poller: TablePoller, node: str, timeout: float) -> float:
    """Wait until a poll after now lists ``node``; the seconds it took."""
    began, seen = time.monotonic(), len(poller.counts)
    while time.monotonic() - began < timeout:
        if any(node in counts for _, counts in poller.counts[seen:]):
            break
        time.sleep(0.05)
    return round(time.monotonic() - began, 2)


def _restart(c: Cluster, node: Node, poller: TablePoller) -> tuple[dict[str, Any], str]:
    """SIGTERM ``node``, wait for its exit, start it again, wait until it is ready and
    listed; its figures and its last scrape before the SIGTERM."""
    last = c.scrape([node])[node.id]
    held = poller.latest().get(node.id)
    signalled = time.monotonic()
    node.terminate()
    exited = node.wait(60)
    if not exited:
        node.kill()
    exit_s = time.monotonic() - signalled
    started = time.monotonic()
    node.start()
    node.wait_ready(60)
    ready_s = time.monotonic() - started
    listed_s = _listed(poller, node.id, 10)
    return {"node": node.id, "held": held, "exited": exited, "exit_s": round(exit_s, 2), "ready_s": round(ready_s, 2),
            "listed_s": listed_s, "counts_then": poller.latest()}, last


def _observe(poller: TablePoller, nodes: int, total: int, since: float, longest: float) -> float:
    """Wait from ``since`` until balanced within 10 % with no table changing
    node for :data:`QUIET` s, or ``longest`` s; the seconds observed."""
    while time.time() - since < longest:
        time.sleep(0.5)
        now = time.time()
        if now - since < QUIET or not within(poller.latest(), nodes, total):
            continue
        recent = [(at, owned) for at, owned in poller.owned if at >= now - QUIET - 1]
        moved = owner_changes(recent)
        if not any(at >= now - QUIET for at, *_ in moved):
            break
    return round(time.time() - since, 2)


def rebalance_round(args: argparse.Namespace, open_session: Callable[..., contextlib.AbstractContextManager[Session]],
                    body: dict[str, Any]) -> dict[str, Any]:
    """The round (module docstring); ``open_session(reconnect=, node_args=)``
    starts a fresh cluster of the largest size with its tables and spectators,
    ``body`` is the tables' (``POST /api/tables``)."""
    with open_session(reconnect=True, node_args=node_args(args)) as s:
        c, ready = s.cluster, s.load.ready
        out: dict[str, Any] = {
            "nodes": len(c.nodes), "tables": len(s.tables), "rebalance_rate": args.rebalance_rate,
            "rebalance_hold_s": args.rebalance_hold, "lease_ttl_s": c.lease_ttl,
            "connections": {"planned": ready["planned"], "connected": ready["connections"],
                            "failure_kinds": ready.get("failure_kinds", {})}}
        humans = c.create_tables(args.rebalance_players, {**body, "bots": body["bots"][1:]}) \
            if args.rebalance_players > 0 else []
        owners = c.wait_owned(s.tables + humans)
        index = {n.id: i for i, n in enumerate(c.nodes)}
        at = player_nodes([index.get(owners.get(t, ""), 0) for t in humans], len(c.nodes))
        total = len(s.tables) + len(humans)
        with Players([(t, c.nodes[i].ws) for t, i in zip(humans, at)]) as players, TablePoller(c) as poller:
            players.wait_seated()
            time.sleep(args.warmup)
            s.load.ask("fault")  # from here each connection's closes and resumes are counted
            began = time.time()
            first = c.scrape()
            segments: list[tuple[str, str]] = []
            restarts = []
            for node in c.nodes:
                figures, last = _restart(c, node, poller)
                restarts.append(figures)
                segments.append((first.get(node.id, ""), last))
            ready_at = time.time()
            s.load.ask("track")
            s.load.ask("after", ready_at)
            mid = c.scrape()
            observed = _observe(poller, len(c.nodes), total, ready_at, args.rebalance_observe)
            seen = s.load.ask("probe")
            end = c.scrape()
            ended = time.time()
            timeline, owned = list(poller.counts), list(poller.owned)
            failures = poller.failures
        got = s.load.ask("fault_end", began, ended, timeout=120)
        records = [(cl.table, cl.acks, dict(cl.received)) for cl in players.clients]
        histories = {}
        for t in players.seated:
            try:
                histories[t] = stored_ts(c.redis.url, c.prefix, t)
            except Exception as exc:  # noqa: BLE001 (reported: the check could not be made)
                print(f"bench cluster: rebalance: reading table {t}'s stored events failed: {exc!r}", file=sys.stderr)
    segments += [("", end.get(n.id, "")) for n in c.nodes]  # each restarted process, from 0
    out["restarts"] = restarts
    out["last_ready_s"] = round(ready_at - began, 2)  # in the timeline's time
    out["observed_s"] = observed
    out["poll_failures"] = failures
    n = len(c.nodes)
    for_good, first_in = balance_times(timeline, n, total, ready_at)
    one, first_one = balance_times(timeline, n, total, ready_at, None)

    def counts_at(rel: float | None) -> dict[str, int] | None:
        if rel is None:
            return None
        return next((counts for t, counts in timeline if t >= ready_at + rel - 1e-6), None)

    out["balance"] = {"total_tables": total, "even_share": round(total / n, 2), "within_10pct_s": for_good,
                      "first_within_10pct_s": first_in, "within_one_s": one, "first_within_one_s": first_one,
                      "counts_when_balanced": counts_at(for_good), "counts_at_end": timeline[-1][1] if timeline else None,
                      "target_s": TARGET_S, "target_met": for_good is not None and for_good <= TARGET_S}
    out["timeline"] = timeline_rows(timeline, began)
    changes = owner_changes(owned)
    after = [ch for ch in changes if ch[0] >= ready_at]
    per_table = Counter(t for _, t, _, _ in after)
    out["moves"] = {"total": int(increase(segments, MOVES)),
                    "after_last_restart": int(sum(max(0.0, metric(end.get(k, ""), MOVES) - metric(mid.get(k, ""), MOVES))
                                                  for k in end)),
                    "observed": len(after), "moved_twice": sum(1 for v in per_table.values() if v > 1),
                    "after_balanced": None if for_good is None else sum(1 for ch in after if ch[0] > ready_at + for_good + 0.01)}
    out["pause"] = histogram_increase(segments, PAUSE)
    out["handover"] = histogram_increase(segments, HANDOVER)
    moved = set(per_table)
    # the spectators of the node restarted last were still reconnecting when the tracking began: left out
    last = len(c.nodes) - 1
    waits = {t: max((v[1] for k, v in by_node.items() if v[1] is not None and int(k) != last), default=None)
             for t, by_node in seen.items()}
    mw = [w for t, w in waits.items() if t in moved and w is not None]
    ow = [w for t, w in waits.items() if t not in moved and w is not None]
    out["clients"] = {"moved_tables": len(mw), "longest_wait_p50_ms": ms(quantile(mw, 0.5)),
                      "longest_wait_p99_ms": ms(quantile(mw, 0.99)), "longest_wait_max_ms": ms(quantile(mw, 1.0)),
                      "other_tables": len(ow), "other_longest_wait_p50_ms": ms(quantile(ow, 0.5)),
                      "other_longest_wait_max_ms": ms(quantile(ow, 1.0)),
                      "tables_waiting_over_5s": sorted(t for t, w in waits.items() if w is not None and w > 5.0)}
    si = got["reconnected_silence_s"]
    out["clients"].update({"resumed_silence_p50_ms": ms(quantile(si, 0.5)), "resumed_silence_p99_ms": ms(quantile(si, 0.99)),
                           "resumed_silence_max_ms": ms(quantile(si, 1.0)),
                           "resumed_silent_over_5s": sum(1 for x in si if x > 5.0)})
    totals = s.totals or {}
    groups = [g for k, g in totals.items() if k in ("owner", "other")]
    out["connections"].update({"closed": got["closed"], "close_codes": got["close_codes"],
                               "reconnected": got["reconnected"], "lost": got["closed"] - got["reconnected"],
                               "silent_over_5s": out["clients"]["resumed_silent_over_5s"],
                               "resumed": got["reconnected"] - out["clients"]["resumed_silent_over_5s"],
                               "held_at_end": sum(g["connections"] for g in groups)})
    out["seq_gaps"] = sum(g["gaps"] for g in groups)
    out["repeats"] = sum(g["reorders"] for g in groups)
    checked = Counter[str]()
    for t, acks, received in records:
        if t in histories:
            checked.update(check_history(acks, received, histories[t]))
    rec = players.recorder
    out["players"] = {"planned": len(humans), "seated": len(players.seated), "failures": players.failures,
                      "acks": sum(len(a) for _, a, _ in records), "checked_acks": checked["acks"],
                      "acks_lost": checked["lost"], "diverged": checked["diverged"], "events": checked["events"],
                      "tables_checked": len(histories), "repeats": rec.reorders, "seq_gaps": rec.gaps,
                      "errors": dict(rec.errors)}
    return out
