"""The cluster's fault suite: three ``cardhall serve --redis`` nodes on one
private ``redis-server`` (append-only file, ``appendfsync always``: a write
Redis acknowledged survives its SIGKILL) behind nginx
(tests/cluster/harness.py), under load (tests/cluster/driver.py).

The load (:func:`tests.cluster.driver.spread`; the nodes place a table
where it is created, ``--placement local``): a table of every game, each
created on the next node in turn, with a bot and two human players played by
the driver (random legal actions, rematches) and a spectator, and two
all-bots tables with a spectator on each node that does not own them; every
client connected straight to a node that does not own its table, so that
every event and every request crosses nodes; a client whose connection
drops reconnects through nginx. ``heavy`` (``--runslow``): three tables of
every game and six all-bots tables.

Faults, one test each: (a) ``kill -9`` of the busiest node; (b) SIGSTOP of
the busiest node past its lease, until the others have given it up, then
SIGCONT; (c) a rolling restart with SIGTERM; (d) Redis killed (SIGKILL) and,
a lease later, started again from its append-only file; (e) Redis stopped
with SIGSTOP for longer than a lease, then SIGCONT; (f) Redis losing its
data while the cluster runs (``FLUSHALL``; and started again without its
data); (g) (c) and (d) back to back. The everyday suite runs (a) to (f)
with ``FLUSHALL``; Redis started again without its data and (g) run with
``--runslow``, to keep the suite within its time.

After each fault, once it is over (:meth:`Driver.check_fault`, every
check run and every problem listed):

* every client resumed; one owner per table (its lease holder, the one node
  listing it);
* every table moves on, and every connection receives its table's events
  again: none is left silent while its table moves (a connection the server
  closed with 1001 or 4012 and the client resumed counts by what it got
  after its resume);
* no seated player whose websocket is open is shown ``connected: false``
  in the table's public info, on any node;
* every connection's stream: no gap, no repeated ``seq``, no snapshot in
  place of events the table's stream still held;
* every event any client received is the stored event of its ``seq`` as its
  viewer sees it, and every acknowledged action is in the stored history
  (for (f): what the nodes wrote back: the hands finished before the loss
  may be gone, the live tables and what followed may not);
* every node's lobby lists every table; each table's live state on its
  owner equals its checkpoint.

The failover and handover figures are printed (``pytest -s``).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from tests.cluster.driver import NODE_ARGS, Driver, add_histograms, beside_target, histogram, quantile, spread, tables_of
from tests.cluster.harness import Cluster, ClusterRedis
from tests.cluster.test_rebalance import balanced
from tests.conftest import until
from tests.server.test_recovery_kill import stored_history

pytestmark = pytest.mark.redis

#: the nodes place each table on the node it is created on (spread's layout) and keep it there
FAULT_ARGS = [*NODE_ARGS, "--placement", "local", "--rebalance-rate", "0"]
#: the same, rebalancing on (the server's defaults)
REBALANCING_ARGS = [*NODE_ARGS, "--placement", "local"]
#: log lines of a node that finds another owns its table (fencing)
LOST = ("lease lost to another node; dropping it", "checkpoint refused, another node owns the table; dropped")
HANDOVER = "cardhall_handover_seconds"


@pytest.fixture(params=[pytest.param((1, 2), id="small"),
                        pytest.param((3, 6), id="heavy", marks=pytest.mark.slow)])
async def loaded(request: pytest.FixtureRequest, make_cluster: Any) -> AsyncIterator[Driver]:
    """A cluster of three under :func:`spread`'s load (``small``: a human
    table of every game and two bots tables; ``heavy``: three of every game
    and six of bots), each table played ten events on; the driver is closed
    after the test. The nodes do not rebalance (the tests count on where
    each table is), but for a test marked ``rebalancing``."""
    rounds, bots = request.param
    rebalancing = request.node.get_closest_marker("rebalancing") is not None
    args = REBALANCING_ARGS if rebalancing else FAULT_ARGS
    cluster: Cluster = await make_cluster(3, node_args=args, appendfsync="always")
    d = Driver(cluster, request.node.name.encode())
    try:
        await spread(d, rounds=rounds, bots=bots, rebalancing=rebalancing)
        stored = await d.stored_seqs()
        await d.progress({t: s + 10 for t, s in stored.items()}, time.monotonic(), timeout=10 * cluster.lease_ttl)
        yield d
    finally:
        await d.close()


async def nodes_without_store(d: Driver) -> bool:
    """Every node's ``/healthz`` says its store is down (``store.up`` false)."""
    for n in d.cluster.nodes:
        health = (await d.http.get(f"{n.http}/healthz")).json()
        if health["store"]["up"]:
            return False
    return True


async def busiest(d: Driver) -> tuple[dict[str, str], str]:
    """The owners, once settled, and the node owning the most tables."""
    owners = await d.settled(live=len(d.cluster.nodes))
    return owners, Counter(owners.values()).most_common(1)[0][0]


# -- (a) --------------------------------------------------------------------------------
async def test_kill_9_of_the_busiest_node(loaded: Driver) -> None:
    """SIGKILL of the node owning the most tables; failover time per table:
    from the kill to the first event after its last stored one that any of
    its clients receives, printed beside its target ``lease_ttl + 1.5`` s (TTL +
    1 s and scheduling slack on a small machine; :func:`~tests.cluster.driver.beside_target`). Its clients'
    websockets drop and each resumes once through nginx. Then the checks with
    the two nodes left."""
    d = loaded
    cluster = d.cluster
    owners, victim_id = await busiest(d)
    victim = cluster.node(victim_id)
    moved = tables_of(owners, victim_id)
    dropped = (await d.connections())[victim_id]
    reconnects = sum(m.client.reconnects for m in d.members)

    killed_at = time.monotonic()
    assert victim.kill() == -9
    stored = await d.stored_seqs()  # nobody writes these tables until their leases expire
    failover = await d.progress({t: stored[t] for t in moved}, killed_at, timeout=cluster.lease_ttl + 10)
    await d.reconnected()
    owners = await d.settled(live=2)
    print(f"\nkill -9 of {victim_id} ({len(moved)} of {len(d.tables)} tables, {dropped} connections): failover in s "
          f"(kill to the first new event): {', '.join(f'{d.tables[t]} {failover[t]:.2f}' for t in moved)}; "
          f"max {max(failover.values()):.2f} (lease_ttl {cluster.lease_ttl}; "
          f"{beside_target(max(failover.values()), cluster.lease_ttl + 1.5)})")
    assert all(owners[t] != victim_id for t in moved)
    assert sum(m.client.reconnects for m in d.members) - reconnects == dropped

    await d.check_fault(live=2)


# -- (b) --------------------------------------------------------------------------------
async def test_sigstop_of_a_node_past_its_lease(loaded: Driver) -> None:
    """The busiest node stopped with SIGSTOP past its lease: the other nodes
    claim its tables within ``lease_ttl + 1`` s and those matches go on; it
    stays stopped until the others have given it up (it left the registry,
    and the players connected to it are shown disconnected: its connections
    seem dead), then SIGCONT: its writes are refused (fencing), it logs that
    it dropped each of its tables, and its own clients (players and
    spectators of tables owned elsewhere, stopped with it, their websockets
    still open) follow their tables again and are shown connected. The HTTP
    API is asked on a node that runs meanwhile (nginx would wait on the
    stopped one)."""
    d = loaded
    cluster = d.cluster
    ttl = cluster.lease_ttl
    owners, victim_id = await busiest(d)
    victim = cluster.node(victim_id)
    mine = tables_of(owners, victim_id)
    held_there = [m for m in d.members if m.node == victim_id and m.seat is not None]
    assert held_there, "a player of a table owned elsewhere is connected to the node stopped"
    d.api = next(n for n in cluster.nodes if n is not victim).http

    paused_at = time.monotonic()
    victim.pause()
    stored = await d.stored_seqs()  # what it wrote before it stopped
    # each of its tables moved on past what it wrote: another node holds the lease and commits
    failover = await d.progress({t: stored[t] for t in mine}, paused_at, timeout=ttl + 10)
    leases = await d.lease_owners()
    assert all(leases[t] not in (None, victim_id) for t in mine), leases
    went_on = await d.stored_seqs()
    went_in = time.monotonic() - paused_at
    assert all(went_on[t] > stored[t] for t in mine), (stored, went_on)

    # a TTL without heartbeat to leave the registry, a TTL more to be given up (a generous deadline:
    # a node that keeps the stopped node's players, or takes longer, is resumed then all the same)
    deadline = time.monotonic() + max(30.0, 5 * ttl)
    while True:
        listed = {n["id"] for n in await d.cluster_nodes()}
        shown = [await d.shown_connected(m) for m in held_there]
        given_up = victim_id not in listed and not any(shown)
        if given_up or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    stopped_for = time.monotonic() - paused_at
    print(f"\nSIGSTOP of {victim_id}: its tables claimed by {[leases[t] for t in mine]}; first new event after "
          f"{', '.join(f'{d.tables[t]} {s:.2f}' for t, s in failover.items())} s; "
          f"{sum(went_on[t] - stored[t] for t in mine)} events in the first {went_in:.1f} s; "
          + (f"given up (out of the registry, its {len(held_there)} players shown disconnected)" if given_up else
             f"not given up (listed {sorted(listed)}, its players shown connected {shown})")
          + f"; SIGCONT after {stopped_for:.1f} s")

    victim.resume()

    def dropped(table: str) -> bool:
        log = victim.log_path.read_text()
        return any(f"table {table}: {line}" in log for line in LOST)

    with contextlib.suppress(AssertionError):  # it drops each table at its next renewal or write
        await until(lambda: all(dropped(t) for t in mine), max(30.0, 5 * ttl), "a drop logged for each table")
    found = [f"{table}: no drop logged" for table in mine if not dropped(table)]
    d.api = cluster.nginx.http
    owners = await d.check_fault(live=3, found=found)
    assert victim_id not in owners.values(), owners


# -- (c) --------------------------------------------------------------------------------
async def rolling_restart(d: Driver, rebalancing: bool = False) -> tuple[list[tuple[str, str, float, float]],
                                                                           dict[tuple[str, int], str]]:
    """Each node in turn gets SIGTERM (it hands its tables to the others, then
    closes its websockets with 1001) and is started again with its id;
    before the next, the cluster settles: three live nodes, one owner per
    table, every client resumed, every table moving, and nginx passing
    requests to the restarted node again (it leaves a node that refused a
    connection out for its ``fail_timeout``, 2 s), and, when the nodes
    ``rebalancing``, every node within one table of even (no table moving by
    rebalancing: the tables a node owns when it stops are the ones it hands
    over). Each stopped node's
    clients saw 1001 and reconnected. Returns the handovers ``(table, from
    node, stopped at, settled at)`` and every node process's last
    ``/metrics`` (by ``(node, pid)``)."""
    cluster = d.cluster
    scrapes: dict[tuple[str, int], str] = {}

    async def scrape() -> None:
        for n in cluster.nodes:
            if n.alive and n.pid is not None:
                scrapes[(n.node_id, n.pid)] = (await d.http.get(f"{n.http}/metrics")).text

    handed: list[tuple[str, str, float, float]] = []
    for node in cluster.nodes:
        if rebalancing:  # a move in flight would take a table away before the SIGTERM
            await balanced(d, live=3, timeout=60)
        owners = await d.settled(live=3)
        await scrape()
        connected = (await d.connections())[node.node_id]
        closes = {id(m): len(m.client.close_codes) for m in d.members}
        reconnects = sum(m.client.reconnects for m in d.members)
        stored = await d.stored_seqs()
        stopped_at = time.monotonic()
        assert await node.stop() == -15, node.log_tail()
        await node.restart()
        await d.settled(live=3)
        await d.reconnected()
        await d.progress(stored, stopped_at, timeout=10)
        handed += [(t, node.node_id, stopped_at, time.monotonic()) for t in tables_of(owners, node.node_id)]
        new_closes = [code for m in d.members for code in m.client.close_codes[closes[id(m)]:]]
        assert new_closes == [1001] * connected, (node.node_id, connected, new_closes)
        assert sum(m.client.reconnects for m in d.members) - reconnects == connected
        await d.routed_to(node)
    await scrape()
    return handed, scrapes


def longest_wait(arrived: list[float], start: float, end: float) -> float:
    """The longest time between two consecutive events that overlaps [start, end]."""
    ordered = sorted(arrived)
    return max((b - a for a, b in zip(ordered, ordered[1:]) if b > start and a < end), default=0.0)


@pytest.mark.rebalancing
async def test_rolling_restart(loaded: Driver) -> None:
    """:func:`rolling_restart`. The handover pause is read from every node's
    ``cardhall_handover_seconds`` (sum/count, p99 from the buckets, printed
    beside its 0.5 s target; one handover per table moved) and from the clients: for each
    handed-over table, the longest wait between two of its events at the
    first client to get each (the table's pause) and at its worst client (a
    client of the stopped node waits for its reconnect too); all printed.
    The cluster ends balanced: every node within one table of even
    (rebalancing moved tables back to the restarted nodes; once even, no
    table moves). Then the checks, on that layout (a table that rebalancing
    moves between the checks' reading of its owner and of its live state
    would be read on a node that no longer owns it)."""
    d = loaded
    handed, scrapes = await rolling_restart(d, rebalancing=True)
    buckets, total, count = add_histograms(histogram(text, HANDOVER) for text in scrapes.values())
    p99 = quantile(0.99, buckets)
    table_pause: dict[str, float] = {}
    worst_client: dict[str, float] = {}
    for table, _, start, end in handed:
        first = [at for _, at in d.arrivals(table)]
        table_pause[table] = max(table_pause.get(table, 0.0), longest_wait(first, start, end))
        for m in d.members:
            if m.table == table:
                mine = [at for at, t, _ in m.client.arrivals if t == table]
                worst_client[table] = max(worst_client.get(table, 0.0), longest_wait(mine, start, end))
    print(f"\nrolling restart: {len(handed)} handovers; {HANDOVER} over all nodes: count {count:.0f}, "
          f"mean {total / count if count else 0:.4f} s, p99 {p99:.4f} s (buckets {buckets}); longest wait "
          f"between two events across a handover, table / worst client: "
          + ", ".join(f"{d.tables[t]} {table_pause[t]:.3f} / {worst_client[t]:.3f}" for t in table_pause) + " s")
    print(f"handover p99 {p99:.4f} s: {beside_target(p99, 0.5)}")
    assert count == len(handed), (count, handed)
    counts = await balanced(d, live=3, timeout=60)
    print(f"balanced after the rolling restart: {counts}")
    await d.check_fault(live=3)


# -- (d) --------------------------------------------------------------------------------
async def held_while_away(d: Driver, timeout: float = 60.0) -> dict[str, int]:
    """While the cluster's Redis is killed or stopped (its append-only file
    as it left it, every acknowledged write in it: ``appendfsync always``):
    a ``redis-server`` of the test's own on a copy of its files, the data the
    cluster's will have when it runs again. Waits there until every table's
    lease has run out (Redis keeps a lease's expiry as a point in time: the
    copy's leases run out when the stopped server's do), then returns each
    table's stored ``seq`` there: the events committed before the fault."""
    cluster = d.cluster
    copy = ClusterRedis(cluster.redis.binary, appendfsync="always")
    try:
        shutil.copytree(cluster.redis.dir, copy.dir, dirs_exist_ok=True)
        copy.start()
        db = aioredis.Redis.from_url(copy.url)
        try:
            leases = [d.keys.lease(t) for t in d.tables]

            async def ran_out() -> bool:
                return not any(await db.mget(leases))

            await until(ran_out, timeout, "every table's lease run out in the data of the Redis away")
            return {t: (await stored_history(db, cluster.prefix, t))[0]["seq"] for t in d.tables}
        finally:
            await db.aclose()
    finally:
        copy.close()


def check_nothing_past(d: Driver, held: dict[str, int], while_: str) -> dict[str, int]:
    """Each table's last ``seq`` its members received (returned): none past
    ``held`` (what Redis held when it went away: nothing can be committed
    while it is away, and only what is committed is delivered)."""
    last = {t: max(m.last_seq for m in d.members if m.table == t) for t in d.tables}
    past = {d.tables[t]: (held[t], last[t]) for t in d.tables if last[t] > held[t]}
    assert not past, f"events past what Redis held (held, received) delivered while Redis was {while_}: {past}"
    return last


async def redis_killed_and_restarted(d: Driver, found: list[str]) -> None:
    """SIGKILL of Redis, down until every lease has run out (:func:`held_while_away`;
    once it is back the nodes claim the tables again, not necessarily each
    its own), then started again from its append-only file: while it is
    down no event reaches any client but those Redis held when it died
    (nothing can be committed); once it is back every table moves again
    (printed: how soon; else a problem in ``found``)."""
    cluster = d.cluster
    assert cluster.redis.kill() == -9
    down_at = time.monotonic()
    held = await held_while_away(d)
    last = check_nothing_past(d, held, "down")
    cluster.redis.start()
    up_at = time.monotonic()
    await d.reopen_db()
    resumed = await d.moved_again(last, up_at, 30, found)
    print(f"\nredis killed, {up_at - down_at:.1f} s down (every lease ran out), started from its AOF: tables "
          f"moved again {', '.join(f'{d.tables[t]} {s:.2f}' for t, s in resumed.items())} s after it was back")


async def test_redis_killed_and_restarted_from_its_aof(loaded: Driver) -> None:
    """:func:`redis_killed_and_restarted`; then the checks (the whole history:
    with ``appendfsync always`` Redis lost nothing it acknowledged)."""
    d = loaded
    found: list[str] = []
    await redis_killed_and_restarted(d, found)
    await d.check_fault(live=3, found=found)


# -- (e) --------------------------------------------------------------------------------
async def test_redis_paused_past_a_lease(loaded: Driver) -> None:
    """Redis stopped with SIGSTOP until every lease has run out
    (:func:`held_while_away`; the nodes' commands wait, up to their Redis
    timeout), then SIGCONT: while it is stopped no event reaches any client
    but those Redis held when it stopped; once it runs again every table
    moves again. Then the checks."""
    d = loaded
    cluster = d.cluster
    cluster.redis.pause()
    paused_at = time.monotonic()
    try:
        held = await held_while_away(d)
        last = check_nothing_past(d, held, "stopped")
    finally:
        cluster.redis.resume()
    resumed_at = time.monotonic()
    found: list[str] = []
    moved = await d.moved_again(last, resumed_at, 30, found)
    print(f"\nredis stopped {resumed_at - paused_at:.1f} s (every lease ran out): tables moved again "
          f"{', '.join(f'{d.tables[t]} {s:.2f}' for t, s in moved.items())} s after SIGCONT")
    await d.check_fault(live=3, found=found)


# -- (f) --------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["flushall", pytest.param("restart-empty", marks=pytest.mark.slow)])
async def test_redis_loses_its_data(loaded: Driver, how: str) -> None:
    """Redis loses every key while the cluster runs: ``flushall`` (FLUSHALL)
    or ``restart-empty`` (stopped until every node found it unavailable,
    its ``/healthz``'s ``store.up`` false, then started again without its
    data). The nodes notice (a failed commit, or their store probe) and
    write their tables again from memory; every table moves again. Then the
    checks against what the rewritten streams hold: the hands finished
    before the loss may be gone; the live tables' states, and every event and
    acknowledged action from the first rewritten event on, may not."""
    d = loaded
    cluster = d.cluster
    last = {t: max(m.last_seq for m in d.members if m.table == t) for t in d.tables}
    if how == "flushall":
        cluster.redis.flushall()
    else:
        cluster.redis.stop()
        await until(lambda: nodes_without_store(d), 60, "every node finding Redis unavailable (/healthz)")
        cluster.redis.start(fresh=True)
    back_at = time.monotonic()
    await d.reopen_db()
    found: list[str] = []
    moved = await d.moved_again(last, back_at, 30, found)
    print(f"\nredis lost its data ({how}): tables moved again "
          f"{', '.join(f'{d.tables[t]} {s:.2f}' for t, s in moved.items())} s after")
    await d.check_fault(live=3, stored_only=True, found=found)


# -- (g) --------------------------------------------------------------------------------
@pytest.mark.slow  # (c) and (d) run on their own in the everyday suite; back to back with --runslow
async def test_rolling_restart_then_redis_killed(loaded: Driver) -> None:
    """(c) then (d) back to back: the rolling restart (with its own checks
    between nodes), and at once Redis killed and started again from its
    append-only file. Then the checks."""
    d = loaded
    handed, _ = await rolling_restart(d)
    found: list[str] = []
    await redis_killed_and_restarted(d, found)
    print(f"(after a rolling restart of {len(handed)} handovers)")
    await d.check_fault(live=3, found=found)
