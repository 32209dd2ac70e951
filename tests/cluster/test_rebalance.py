"""Placement and rebalancing on a real cluster: ``cardhall serve --redis``
nodes on one private ``redis-server``, real nginx in front
(tests/cluster/harness.py), clients on real websockets (tests/cluster/driver.py).

* A burst of creations from many clients at once, through nginx, lands
  within one table of even across the live nodes (the placement counts in
  Redis the tables placed on each node until its heartbeat counts them).
* A node added to the loaded cluster takes its share through rebalancing
  (``server/cluster/rebalance.py``): every node within one table of even,
  each move a table going to the new node (nothing moves twice, nothing
  moves between the old nodes), the receiving node's
  ``cardhall_rebalance_pause_seconds`` counting each; every spectator's
  stream stays gap-free and without a repeat through the moves, and the
  checks of ``Driver.check_all`` hold.

A rolling restart ending balanced is tests/cluster/test_faults.py (c).
"""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from tests.cluster.driver import NODE_ARGS, Driver, add_histograms, histogram
from tests.cluster.harness import Cluster
from tests.conftest import until

pytestmark = pytest.mark.redis

#: bots-only tables playing slowly: each table's events keep coming while it moves
SLOW_BOTS = {"bot_think": 0.5, "pause": 0.2, "auto_rematch": True, "close_after": 3600}
TABLES = 30


async def balanced(d: Driver, live: int, timeout: float) -> dict[str, int]:
    """The live nodes' table counts once every one is within one table of
    even (``live`` nodes listed), polled on ``/api/cluster``; AssertionError
    with the last counts after ``timeout`` seconds."""
    counts: dict[str, int] = {}

    async def even() -> bool:
        counts.clear()
        counts.update({n["id"]: n["tables"] for n in await d.cluster_nodes()})
        return len(counts) == live and max(counts.values()) - min(counts.values()) <= 1

    try:
        await until(even, timeout, "every node within one table of even")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the last counts {counts}") from None
    return counts


async def scrape_sum(d: Driver, metric: str) -> float:
    """``metric`` (a counter) summed over the nodes' ``/metrics``."""
    total = 0.0
    for n in d.cluster.nodes:
        for line in (await d.http.get(f"{n.http}/metrics")).text.splitlines():
            if line.startswith(metric + " "):
                total += float(line.split()[1])
    return total


async def test_a_burst_spreads_evenly_and_an_added_node_takes_its_share(make_cluster):
    """:data:`TABLES` tables created at once by as many clients through
    nginx: within one table of even over three nodes. A spectator on each.
    Then a fourth node joins: every node within one of even, the moves all
    to it (as many as it holds), each pause recorded; then the checks."""
    cluster: Cluster = await make_cluster(3, node_args=NODE_ARGS)
    d = Driver(cluster, b"cluster/rebalance")
    try:
        await asyncio.gather(*(d.create("no_limit_holdem", 2, 2, SLOW_BOTS) for _ in range(TABLES)))
        before = await d.settled(live=3)
        placed = Counter(before.values())
        print(f"\na burst of {TABLES} creations through nginx placed {dict(placed)}")
        assert max(placed.values()) - min(placed.values()) <= 1, placed
        for table in d.tables:
            await d.seat(table, None)

        added = await cluster.add_node()
        counts = await balanced(d, live=4, timeout=30)
        owners = await d.settled(live=4)
        moves = await scrape_sum(d, "cardhall_rebalance_moves_total")
        pauses = [histogram((await d.http.get(f"{n.http}/metrics")).text, "cardhall_rebalance_pause_seconds")
                  for n in cluster.nodes]
        _, total, count = add_histograms(pauses)
        moved_to_new = sum(1 for t, n in owners.items() if n == added.node_id)
        print(f"a fourth node joined: {counts}, {moves:.0f} moves, pause mean "
              f"{total / count if count else 0:.4f} s over {count:.0f}")
        assert moved_to_new == counts[added.node_id] == moves == count, (moved_to_new, counts, moves, count)
        stayed = {t: n for t, n in owners.items() if n != added.node_id}
        assert all(before[t] == n for t, n in stayed.items()), {t: (before[t], n) for t, n in stayed.items()}
        await d.check_all(live=4)
    finally:
        await d.close()
