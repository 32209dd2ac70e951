"""A real cluster under play and faults: three ``cardhall serve --redis`` nodes
on one private ``redis-server``, real nginx in front (tests/cluster/harness.py),
clients on real websockets (tests/cluster/driver.py).

After each scenario, once the cluster settled:

* every table has exactly one owner: the node holding its lease is the one
  listing it in ``/api/cluster``'s ``table_ids``, no table listed twice;
* every client's frames of its table run gap-free from its join's snapshot,
  across reconnects (a resumed connection goes on at ``since + 1``, never a
  fresh snapshot), and ``client.gaps == 0``;
* every event any client received is the stored event of that ``seq`` as its
  viewer sees it, the stored stream runs without gaps to the stored state,
  and every acknowledged action's events were stored before its ``ok``
  (``check_history`` of tests/server/test_recovery_kill.py);
* every node's lobby lists every table;
* where the tables are quiet enough to read, each table's live state on its
  owner equals its last checkpoint (clocks and a re-armed bot's generator aside).

Scenarios: every game played across the nodes; ``kill -9`` of the busiest
node (failover time measured); SIGSTOP of an owner past its lease (fencing);
a rolling restart with SIGTERM (handover pauses measured, from the nodes'
``cardhall_handover_seconds`` and from the clients); Redis restarted with its
append-only file, and with its data gone. The figures are printed (``pytest
-s`` shows them).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import pytest

from tests.cluster.driver import Driver, add_histograms, histogram, quantile
from tests.cluster.harness import Cluster
from tests.server.play import QUICK

pytestmark = pytest.mark.redis

#: every event of a test stays in the table's stream (check_history reads them all); every client
#: comes from 127.0.0.1 and the bots-only tables play faster than a public server's floor
NODE_ARGS = ["--redis-stream-bound", "100000", "--max-tables-per-address", "0", "--new-players-per-address", "0",
             "--bot-think-floor", "0"]
#: bots-only tables: paced so that events keep coming at a steady rate, matches without end
BOTS = {"bot_think": 0.15, "pause": 0.05, "auto_rematch": True, "close_after": 3600}
#: tables with two human players (and a bot): long clocks, nothing times out while a node is away
HUMANS = {"bot_think": 0.05, "pause": 0.05, "action_clock": 120, "time_bank": 120, "close_after": 3600}


async def bots_table(d: Driver, game: str, **kw) -> str:
    """An all-bots table of ``game`` (three seats) that rematches by itself."""
    return await d.create(game, 3, 3, {**QUICK[game], **BOTS}, **kw)


async def humans_table(d: Driver, game: str, **kw) -> str:
    """A table of ``game`` with two human seats and a bot (three seats)."""
    return await d.create(game, 3, 1, {**QUICK[game], **HUMANS}, **kw)


def tables_of(owners: dict[str, str], node: str) -> list[str]:
    return sorted(t for t, n in owners.items() if n == node)


# -- 1 --------------------------------------------------------------------------------
async def test_every_game_across_three_nodes(make_cluster):
    """Each of the five games, with a bot, two human players and two
    spectators, the second player and a spectator on JSON on a node that does
    not own the table, played to the match's end; at least one player is
    connected to a node that does not own its table (forced: straight to
    that node), the others go where nginx sends them. Then the checks of the
    module docstring; every table's live state equals its checkpoint."""
    cluster: Cluster = await make_cluster(3, node_args=NODE_ARGS)
    d = Driver(cluster, b"cluster/every-game")
    d.rematch = False
    try:
        for game in QUICK:
            await d.create(game, 3, 1, {**QUICK[game], "bot_think": 0, "pause": 0, "action_clock": 60,
                                        "time_bank": 60, "close_after": 3600})
        owners = await d.settled(live=3)
        assert len(set(owners.values())) >= 2, owners  # placement spreads the tables
        for i, table in enumerate(d.tables):
            away = [n for n in cluster.nodes if n.node_id != owners[table]][i % 2]
            await d.seat(table, None, locate=True)
            await d.seat(table, 1, locate=True)
            # a seat and a spectator on JSON on a non-owner: each event converted from each one's view
            await d.seat(table, None, node=away, codec="json")
            await d.seat(table, 2, node=away, codec="json")  # the last seat: the match starts
        spread = Counter(m.node for m in d.members)
        assert len(spread) == 3, spread
        remote = [m for m in d.members if m.seat is not None and m.node != owners[m.table]]
        assert {m.table for m in remote} == set(d.tables), "every table has a player on another node"
        await asyncio.wait_for(asyncio.gather(*(m.ended.wait() for m in d.members)), 90)
        print(f"\nevery game: {len(d.tables)} tables on {Counter(owners.values())}, connections per node "
              f"{dict(spread)}, {len(remote)} players on a node that does not own their table, "
              f"{sum(len(m.acks) for m in d.members)} acknowledged actions")
        await d.check_all(live=3, live_states=True)
    finally:
        await d.close()


# -- 2 --------------------------------------------------------------------------------
async def test_kill_9_of_the_busiest_node(make_cluster):
    """Six tables (four of bots with a spectator, two with two human players
    and a spectator, everyone through nginx with reconnect). SIGKILL of the
    node owning the most tables; failover time per table: from the kill to
    the first event after its last stored one that any of its clients
    receives, under ``lease_ttl + 1.5`` s (the target is TTL + 1 s; the rest
    is scheduling slack on a small machine). Its clients' websockets drop and
    they resume through nginx. Then the checks, the live state of every table
    equal to its checkpoint once the players stop."""
    cluster: Cluster = await make_cluster(3, node_args=NODE_ARGS)
    d = Driver(cluster, b"cluster/kill-9")
    try:
        for game in ("loco_poker", "avalanche", "no_limit_holdem", "fixed_limit_holdem"):
            await d.seat(await bots_table(d, game), None)
        for game in ("no_limit_holdem", "alamo"):
            table = await humans_table(d, game)
            await d.seat(table, None)
            await d.seat(table, 1)
            await d.seat(table, 2)
        await asyncio.sleep(1.5)
        owners = await d.settled(live=3)
        busiest = Counter(owners.values()).most_common(1)[0][0]
        victim = cluster.node(busiest)
        moved = tables_of(owners, busiest)
        dropped = (await d.connections())[busiest]
        reconnects = sum(m.client.reconnects for m in d.members)

        killed_at = time.monotonic()
        assert victim.kill() == -9
        stored = await d.stored_seqs()  # nobody writes these tables until their leases expire
        failover = await d.progress({t: stored[t] for t in moved}, killed_at, timeout=cluster.lease_ttl + 10)
        await d.reconnected()
        owners = await d.settled(live=2)
        figures = ", ".join(f"{d.tables[t]} {failover[t]:.2f}" for t in moved)
        print(f"\nkill -9 of {busiest} ({len(moved)} of {len(d.tables)} tables, {dropped} connections): "
              f"failover in s (kill to the first new event): {figures}; max {max(failover.values()):.2f} "
              f"(lease_ttl {cluster.lease_ttl})")
        assert max(failover.values()) < cluster.lease_ttl + 1.5, failover
        assert all(owners[t] != busiest for t in moved)
        assert sum(m.client.reconnects for m in d.members) - reconnects == dropped

        await asyncio.sleep(1.0)  # play on with the two nodes left
        d.hold()
        await asyncio.sleep(0.5)
        await d.check_all(live=2, live_states=True)
    finally:
        await d.close()


# -- 3 --------------------------------------------------------------------------------
LOST = ("lease lost to another node; dropping it", "checkpoint refused, another node owns the table; dropped")


async def test_sigstop_of_an_owner_past_its_lease(make_cluster):
    """An owner (``--placement local``: both tables made on it) stopped with
    SIGSTOP for ``lease_ttl + 1`` s: another node claims its tables and the
    matches go on for the clients on the other nodes; after SIGCONT the old
    owner's writes are refused (fencing), it logs that it dropped each table,
    and its own clients follow the new owner. Clients connect straight to
    the nodes (nginx would pass the stopped one over): a spectator of the
    bots table on each node; the human table's seat 1 on the stopped node,
    seat 2 and a spectator on the others. Then the checks: every frame of
    every client is the stored event of its seq (so no seq ever carried two
    events), one owner, the live state equal to the checkpoint."""
    cluster: Cluster = await make_cluster(3, node_args=[*NODE_ARGS, "--placement", "local"])
    victim, n2, n3 = cluster.nodes
    d = Driver(cluster, b"cluster/sigstop")
    try:
        bots = await bots_table(d, "no_limit_holdem", node=victim)
        humans = await humans_table(d, "loco_poker", node=victim)
        for node in cluster.nodes:
            await d.seat(bots, None, node=node)
        await d.seat(humans, None, node=n3)
        await d.seat(humans, 1, node=victim)
        await d.seat(humans, 2, node=n2)
        assert await d.settled(live=3) == {bots: victim.node_id, humans: victim.node_id}
        await asyncio.sleep(1.5)

        d.api = n2.http  # nginx would wait on the stopped node first
        paused_at = time.monotonic()
        victim.pause()
        stored = await d.stored_seqs()  # what it wrote before it stopped
        failover = await d.progress(stored, paused_at, timeout=cluster.lease_ttl + 10)
        await asyncio.sleep(paused_at + cluster.lease_ttl + 1 - time.monotonic())
        leases = await d.lease_owners()
        assert set(leases.values()) <= {n2.node_id, n3.node_id}, leases
        went_on = await d.stored_seqs()
        assert all(went_on[t] > stored[t] for t in d.tables), (stored, went_on)
        print(f"\nSIGSTOP of {victim.node_id}: tables claimed by {leases}; first new event after "
              f"{', '.join(f'{d.tables[t]} {s:.2f}' for t, s in failover.items())} s; "
              f"{sum(went_on[t] - stored[t] for t in d.tables)} events while it was stopped")

        victim.resume()

        def dropped(table: str) -> bool:
            log = victim.log_path.read_text()
            return any(f"table {table}: {line}" in log for line in LOST)

        deadline = time.monotonic() + 10  # it drops each table at its next renewal or write
        while not all(dropped(t) for t in d.tables) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        for table in d.tables:
            assert dropped(table), f"{table}: no drop logged\n{victim.log_tail()}"
        d.api = cluster.nginx.http
        await d.reconnected()
        await asyncio.sleep(1.0)
        d.hold()
        await asyncio.sleep(0.5)
        owners = await d.check_all(live=3, live_states=True)
        assert victim.node_id not in owners.values(), owners
    finally:
        await d.close()


# -- 4 --------------------------------------------------------------------------------
HANDOVER = "cardhall_handover_seconds"


async def test_rolling_restart(make_cluster):
    """Three bots tables with a spectator and a human table (two players and a
    spectator), everyone through nginx with reconnect. Each node in turn gets
    SIGTERM (it hands its tables to the others, then closes its websockets
    with 1001) and is started again with its id; before the next, the
    cluster settles: three live nodes, one owner per table, every client
    resumed, every table moving, and nginx passing requests to the restarted
    node again (it leaves a node that refused a connection out for its
    ``fail_timeout``, 2 s). The handover pause is read from every node's
    ``cardhall_handover_seconds`` (sum/count, p99 from the buckets: under
    0.5 s) and from the clients: for each handed-over table, the longest
    wait between two of its events at the first client to get each (the
    table's pause) and at its worst client (a client of the stopped node
    waits for its reconnect too); all printed. Each stopped node's clients
    saw 1001 and reconnected. Then the checks."""
    cluster: Cluster = await make_cluster(3, node_args=NODE_ARGS)
    d = Driver(cluster, b"cluster/rolling")
    scrapes: dict[tuple[str, int], str] = {}  # (node, pid) -> its last /metrics

    async def scrape() -> None:
        for n in cluster.nodes:
            if n.alive and n.pid is not None:
                scrapes[(n.node_id, n.pid)] = (await d.http.get(f"{n.http}/metrics")).text

    def longest_wait(arrived: list[float], start: float, end: float) -> float:
        """The longest time between two consecutive events that overlaps [start, end]."""
        ordered = sorted(arrived)
        return max((b - a for a, b in zip(ordered, ordered[1:]) if b > start and a < end), default=0.0)

    try:
        for game in ("loco_poker", "avalanche", "fixed_limit_holdem"):
            await d.seat(await bots_table(d, game), None)
        humans = await humans_table(d, "no_limit_holdem")
        for seat in (None, 1, 2):
            await d.seat(humans, seat)
        await asyncio.sleep(1.0)
        handed: list[tuple[str, str, float, float]] = []  # (table, from node, stopped at, settled at)
        for node in cluster.nodes:
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
        assert count == len(handed), (count, handed)
        assert p99 < 0.5, buckets
        d.hold()
        await asyncio.sleep(0.5)
        await d.check_all(live=3, live_states=True)
    finally:
        await d.close()


# -- 5 --------------------------------------------------------------------------------
@pytest.mark.parametrize("fresh", [False, True], ids=["aof", "fresh"])
async def test_redis_restarted_under_the_cluster(make_cluster, fresh):
    """Two bots tables and a human table through nginx; Redis stopped for
    1.5 s, then started again: with its append-only file (``aof``), or with
    no data at all (``fresh``: the nodes write their tables again from
    memory). While it is down no event reaches any client (nothing can be
    committed); once it is back every table moves again. Then the checks
    (``fresh``: against what the rewritten streams hold)."""
    cluster: Cluster = await make_cluster(3, node_args=NODE_ARGS)
    d = Driver(cluster, b"cluster/redis-" + (b"fresh" if fresh else b"aof"))
    try:
        for game in ("avalanche", "no_limit_holdem"):
            await d.seat(await bots_table(d, game), None)
        humans = await humans_table(d, "fixed_limit_holdem")
        for seat in (None, 1, 2):
            await d.seat(humans, seat)
        await d.settled(live=3)
        await asyncio.sleep(1.5)

        cluster.redis.stop()
        down_at = time.monotonic()
        await asyncio.sleep(1.5)
        late = [(m.name, s, round(at - down_at, 3)) for m in d.members for at, _, s in m.client.arrivals
                if at > down_at + 0.3]
        assert not late, f"events delivered while Redis was down: {late}"
        last = {t: max(m.last_seq for m in d.members if m.table == t) for t in d.tables}
        cluster.redis.start(fresh=fresh)
        up_at = time.monotonic()
        resumed = await d.progress(last, up_at, timeout=20)
        print(f"\nredis restarted ({'fresh' if fresh else 'aof'}) after 1.5 s down: tables moved again "
              f"{', '.join(f'{d.tables[t]} {s:.2f}' for t, s in resumed.items())} s after it was back")
        await d.reopen_db()
        await asyncio.sleep(1.0)
        d.hold()
        await asyncio.sleep(0.5)
        await d.check_all(live=3, stored_only=fresh, live_states=True)
    finally:
        await d.close()
