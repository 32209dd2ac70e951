"""The fault round of ``cardhall bench cluster`` (``--faults``): what a client
sees after a node or Redis stops dead for longer than a lease, under load.

On a fresh cluster of the largest size (the same tables and spectators as the
measured sessions, spread over the nodes the same way), plus ``--fault-players``
tables of one bot fewer whose free seat a player of the load process takes (a
:class:`~cardhall.clients.load.player.LoadPlayer` answering every turn at
once), each player connected to a node that does *not* own its table; every
connection of that load reconnects and resumes (``join`` with ``since``) when
the server closes it. After ``--warmup`` s, ``baseline``: the figures below
over two lease TTLs without a fault (what they are in a steady flow, to
compare with); then one fault after the other, the cluster settling between
them (every node listed in ``/api/cluster``, every table owned, then one lease TTL):

1. ``node_stop``: SIGSTOP, for ``lease_ttl + 2`` s, of the node hosting the
   most players' connections among those owning tables (the others claim its
   tables meanwhile), then SIGCONT;
2. ``redis_pause``: the benchmark's own ``redis-server`` stopped with SIGSTOP
   for ``lease_ttl + 2`` s, then SIGCONT (skipped, with the reason, when the
   benchmark did not start it).

Per fault, from its end (SIGCONT), observed for at least two lease TTLs and
until every player whose websocket stayed open has been shown connected for a
TTL and every open connection has had an event, at most ``DEADLINE_TTLS``
TTLs:

* ``silence``: per connection that stayed open, the longest time it went
  without an event while its table's events went on
  (:func:`~.cluster_load.silence`; in a steady flow that is the latency):
  p50 / p99 / max over connections, and ``unheard``: how many had no event at
  all; ``lag``: per such connection, the longest delay (arrival minus ``ts``) of
  an event its table made after the fault's end (a connection catching up on a
  backlog has no silence but lags), p50 / p99 / max; ``closed``: connections the server closed since the fault began (close
  codes seen: 4012, 1001, ...; ``none``: dropped without a close frame), how
  many reconnected, and their silence;
* ``tables_first_event_after``: per table, the first event whose ``ts`` is after
  the fault's end (the table itself moving again), p50 / max;
* ``shown_connected``: per player whose websocket stayed open, the time from
  SIGCONT until its table's public info (``GET /api/tables/{id}``, each poll on
  the next live node in turn, every ``POLL_EVERY`` s) shows its seat
  ``connected`` for good (the start of the last run of such answers; 0 when it
  was never shown otherwise), p50 / max; ``never``: not shown connected at the
  end; ``shown_disconnected``: shown ``connected: false`` at some poll since
  the fault began.

Figures, not checks: nothing here asserts a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from cardhall.clients.bench.background import Background
from cardhall.clients.bench.cluster_procs import Node, Redis, Session

#: seconds between two polls of a player's table info
POLL_EVERY = 0.2
#: the longest a fault is observed after its end, in lease TTLs
DEADLINE_TTLS = 5


def _q(values: list[float], q: float) -> float | None:
    """Nearest-rank quantile (None when empty)."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))], 3)


def settled_since(answers: list[tuple[float, bool | None]]) -> float | None:
    """When the last run of ``connected`` answers began (None: the last answer
    says disconnected, or there is none); answers that failed (None) are skipped.

    >>> settled_since([(1.0, True), (2.0, False), (3.0, None), (4.0, True), (5.0, True)])
    4.0
    >>> settled_since([(1.0, True), (2.0, False)]), settled_since([(1.0, None)])
    (None, None)
    """
    since = None
    for at, connected in answers:
        if connected:
            since = at if since is None else since
        elif connected is not None:
            since = None
    return since


class InfoPoller(Background):
    """Asks, in a thread, every :data:`POLL_EVERY` s, each player's table info
    (``GET /api/tables/{id}``) of a live node not in :attr:`exclude`, the
    nodes in turn; :attr:`answers`: table -> ``[(time, connected or None)]``."""

    def __init__(self, nodes: list[Node], seats: dict[str, int]) -> None:
        self.nodes = nodes
        self.seats = seats  # table -> the player's seat
        self.exclude: set[str] = set()
        self.answers: dict[str, list[tuple[float, bool | None]]] = {t: [] for t in seats}
        super().__init__(lambda: asyncio.run(self._run()), "info poller")

    async def _ask(self, client: Any, node: Node, table: str) -> None:
        connected = None
        try:
            r = await client.get(f"{node.http}/api/tables/{table}")
            if r.status_code == 200:
                seat = self.seats[table]
                connected = next((bool(o.get("connected")) for o in r.json().get("occupants", [])
                                  if o.get("seat") == seat), None)
        except Exception:  # noqa: BLE001 (a node or the store not answering: no answer)
            pass
        self.answers[table].append((time.time(), connected))

    async def _run(self) -> None:
        import httpx

        async with httpx.AsyncClient(timeout=1.0) as client:
            turn = 0
            while not self._stop.is_set():
                began = time.monotonic()
                live = [n for n in self.nodes if n.alive and n.id not in self.exclude]
                if live:
                    await asyncio.gather(*(self._ask(client, live[(i + turn) % len(live)], t)
                                           for i, t in enumerate(self.seats)))
                turn += 1
                await asyncio.sleep(max(0.0, POLL_EVERY - (time.monotonic() - began)))



def _settle(s: Session, tables: list[str], timeout: float) -> float:
    """Wait until every node is listed in ``/api/cluster`` and every table has an
    owner, then one lease TTL; the seconds it took."""
    began = time.monotonic()
    ids = {n.id for n in s.cluster.nodes}
    while time.monotonic() - began < timeout:
        with contextlib.suppress(Exception):
            view = s.cluster.view()
            owned = {t for n in view["nodes"] for t in n.get("table_ids", [])}
            if {n["id"] for n in view["nodes"]} >= ids and owned >= set(tables):
                break
        time.sleep(0.2)
    time.sleep(s.cluster.lease_ttl)
    return round(time.monotonic() - began, 2)


def _nothing() -> None:
    pass


def _fault(s: Session, seats: dict[str, int], stop: Callable[[], None], resume: Callable[[], None],
           exclude: set[str], hold: float | None = None) -> dict[str, Any]:
    """``stop()``, ``hold`` s (default ``lease_ttl + 2``), ``resume()``; then observe (module docstring)."""
    ttl = s.cluster.lease_ttl
    with InfoPoller(s.cluster.nodes, seats) as poller:
        time.sleep(2 * POLL_EVERY)  # a few answers from before the fault
        s.load.ask("fault")
        began = time.time()
        poller.exclude = exclude
        stop()
        try:
            time.sleep(ttl + 2 if hold is None else hold)
        finally:
            resume()
            ended = time.time()
        poller.exclude = set()
        while True:
            time.sleep(0.25)
            now = time.time()
            probe = s.load.ask("fault_probe", ended)
            open_seats = [p[0] for p in probe["players"] if p[3]]
            steady = all((since := settled_since(poller.answers[t])) is not None and now - since >= ttl
                         for t in open_seats)
            if now >= ended + DEADLINE_TTLS * ttl or (now >= ended + 2 * ttl and steady and not probe["unheard"]):
                break
        got = s.load.ask("fault_end", ended, now)
    shown, never, disconnected = [], 0, 0
    for table, _, _, stayed in got["players"]:
        answers = poller.answers.get(table, [])
        disconnected += any(c is False for at, c in answers if at >= began)
        if stayed:
            since = settled_since(answers)
            if since is None:
                never += 1
            else:
                shown.append(max(0.0, since - ended))
    return {
        "stopped_s": round(ended - began, 2), "observed_s": round(now - ended, 2),
        "silence": {"connections": got["stayed_open"], "p50_s": _q(got["silence_s"], 0.5),
                    "p99_s": _q(got["silence_s"], 0.99), "max_s": _q(got["silence_s"], 1.0),
                    "unheard": got["unheard"], "lag_p50_s": _q(got["lag_s"], 0.5),
                    "lag_p99_s": _q(got["lag_s"], 0.99), "lag_max_s": _q(got["lag_s"], 1.0)},
        "closed": {"connections": got["closed"], "close_codes": got["close_codes"], "reconnected": got["reconnected"],
                   "silence_p50_s": _q(got["reconnected_silence_s"], 0.5),
                   "silence_max_s": _q(got["reconnected_silence_s"], 1.0)},
        "tables_first_event_after": {"tables": len(got["table_first_event_s"]),
                                     "p50_s": _q(got["table_first_event_s"], 0.5),
                                     "max_s": _q(got["table_first_event_s"], 1.0)},
        "shown_connected": {"players": len(got["players"]), "stayed_open": sum(1 for p in got["players"] if p[3]),
                            "p50_s": _q(shown, 0.5), "max_s": _q(shown, 1.0), "never": never,
                            "deadline_s": DEADLINE_TTLS * ttl, "shown_disconnected": disconnected,
                            "polls": sum(len(a) for a in poller.answers.values())},
        "seq_gaps": got["seq_gaps"], "players_playing": got["players_playing"], "player_errors": got["player_errors"],
    }


def fault_round(args: Any, open_session: Callable[..., contextlib.AbstractContextManager[Session]],
                redis: Redis) -> dict[str, Any]:
    """The fault round (module docstring); ``open_session(players=, reconnect=)``
    starts the cluster with its load."""
    with open_session(players=args.fault_players, reconnect=True) as s:
        ready, c = s.load.ready, s.cluster
        out: dict[str, Any] = {
            "nodes": len(c.nodes), "tables": len(s.tables), "lease_ttl_s": c.lease_ttl,
            "connections": {"planned": ready["planned"], "connected": ready["connections"],
                            "failure_kinds": ready.get("failure_kinds", {})},
            "players": {"planned": len(s.players), "seated": ready["players"], "failures": ready["player_failures"]},
            "baseline": None, "node_stop": None, "redis_pause": None}
        time.sleep(args.warmup)
        seated = s.load.ask("fault_probe", time.time())["players"]
        seats = {table: seat for table, _, seat, _ in seated}
        out["baseline"] = _fault(s, seats, _nothing, _nothing, set(), hold=0.0)
        everything = s.tables + list(seats)
        owners = c.owners()
        hosted = Counter(c.nodes[node].id for _, node, _, _ in seated)
        owning = Counter(owners.values())
        victim = max((n for n in c.nodes if owning[n.id]), key=lambda n: (hosted[n.id], owning[n.id]), default=None)
        if victim is None:
            out["node_stop"] = {"skipped": "no node owns a table"}
        else:
            stop = _fault(s, seats, victim.pause, victim.resume, {victim.id})
            out["node_stop"] = {"node": victim.id, "tables_owned": owning[victim.id],
                                "players_hosted": hosted[victim.id], **stop,
                                "settled_s": _settle(s, everything, DEADLINE_TTLS * c.lease_ttl)}
        if redis.pausable:
            out["redis_pause"] = {**_fault(s, seats, redis.pause, redis.resume, set()),
                                  "settled_s": _settle(s, everything, DEADLINE_TTLS * c.lease_ttl)}
        else:
            out["redis_pause"] = {"skipped": "the benchmark did not start this redis-server (or it is not running)"}
            print(f"bench cluster: Redis pause skipped: {out['redis_pause']['skipped']}", file=sys.stderr)
    return out


def shortfalls(f: dict[str, Any] | None) -> list[str]:
    """Lines for :func:`~.cluster.shortfalls`: the fault round's spectators or players that did not join."""
    if f is None:
        return []
    c, p = f["connections"], f["players"]
    if c["connected"] < c["planned"] or p["seated"] < p["planned"]:
        return [f"faults: {c['connected']} of {c['planned']} spectators connected "
                f"({c.get('failure_kinds') or 'none refused'}), {p['seated']} of {p['planned']} players seated "
                f"{p['failures'] or ''}".rstrip()]
    return []


def report_lines(f: dict[str, Any] | None) -> list[str]:
    """The fault round as text (:func:`~.cluster.report`)."""
    if f is None:
        return []
    lines = [f"-- faults: a fresh {f['nodes']}-node cluster, {f['tables']} bot tables with {f['connections']['connected']} "
             f"spectators, and {f['players']['seated']} tables with a player of the bench (answering at once) connected "
             f"to a node that does not own its table; lease TTL {f['lease_ttl_s']} s; figures from the fault's end "
             f"(SIGCONT)"]
    b = f.get("baseline")
    if b is not None:
        si = b["silence"]
        lines.append(f"  no fault, the same figures over {b['observed_s']} s (a steady flow, to compare with): silence "
                     f"p50 {si['p50_s']} s, p99 {si['p99_s']} s, max {si['max_s']} s; lag p50 {si['lag_p50_s']} s, "
                     f"p99 {si['lag_p99_s']} s, max {si['lag_max_s']} s ({si['connections']} connections)")
    for key in ("node_stop", "redis_pause"):
        x = f.get(key)
        if x is None:
            continue
        if "skipped" in x:
            lines.append(f"  {'node stop' if key == 'node_stop' else 'Redis pause'} skipped: {x['skipped']}")
            continue
        what = (f"SIGSTOP of {x['node']} (owning {x['tables_owned']} tables, hosting {x['players_hosted']} players)"
                if key == "node_stop" else "Redis stopped (SIGSTOP)")
        si, cl, te, sc = x["silence"], x["closed"], x["tables_first_event_after"], x["shown_connected"]
        closed = (f"{cl['connections']} {cl['close_codes']}, {cl['reconnected']} reconnected (their silence p50 "
                  f"{cl['silence_p50_s']} s, max {cl['silence_max_s']} s)" if cl["connections"] else "none")
        lines += [f"  {what} for {x['stopped_s']} s, then SIGCONT; observed {x['observed_s']} s after",
                  f"    silence (longest time without an event while its table went on), per open connection: "
                  f"p50 {si['p50_s']} s, p99 {si['p99_s']} s, max {si['max_s']} s ({si['connections']} connections; "
                  f"{si['unheard']} heard nothing); lag of the events made after it p50 {si['lag_p50_s']} s, "
                  f"p99 {si['lag_p99_s']} s, max {si['lag_max_s']} s",
                  f"    connections closed by the server: {closed}; tables' first event after it p50 {te['p50_s']} s, "
                  f"max {te['max_s']} s; seq gaps {x['seq_gaps']}",
                  f"    shown connected again (GET /api/tables/{{id}}): p50 {sc['p50_s']} s, max {sc['max_s']} s "
                  f"({sc['stayed_open']} of {sc['players']} players' websockets stayed open; {sc['shown_disconnected']} "
                  f"shown disconnected meanwhile); never within {sc['deadline_s']} s: {sc['never']}; "
                  f"settled after {x['settled_s']} s"]
    return lines
