"""A real cluster under play: three ``cardhall serve --redis`` nodes on one
private ``redis-server``, real nginx in front (tests/cluster/harness.py),
clients on real websockets (tests/cluster/driver.py): every game played
across the nodes, then, once the cluster settled:

* every table has exactly one owner: the node holding its lease is the one
  listing it in ``/api/cluster``'s ``table_ids``, no table listed twice;
* every client's frames of its table run gap-free from its join's snapshot,
  and ``client.gaps == 0``;
* every event any client received is the stored event of that ``seq`` as its
  viewer sees it, the stored stream runs without gaps to the stored state,
  and every acknowledged action's events were stored before its ``ok``
  (``check_history`` of tests/server/test_recovery_kill.py);
* every node's lobby lists every table;
* each table's live state on its owner equals its last checkpoint (clocks
  and a re-armed bot's generator aside).

The faults (``kill -9`` of a node, SIGSTOP past a lease, a rolling restart,
Redis killed, stopped or emptied, ...) are in tests/cluster/test_faults.py;
a seat's view after its player left it from another node in
tests/cluster/test_views.py.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from tests.cluster.driver import NODE_ARGS, Driver
from tests.cluster.harness import Cluster
from tests.games import GAMES, quick

pytestmark = pytest.mark.redis


# -- 1 --------------------------------------------------------------------------------
async def test_every_game_across_three_nodes(make_cluster):
    """Each game, with a bot, two human players and two
    spectators, the second player and a spectator on JSON on a node that does
    not own the table, played to the match's end; at least one player is
    connected to a node that does not own its table (forced: straight to
    that node), the others go where nginx sends them. Then the checks of the
    module docstring; every table's live state equals its checkpoint."""
    cluster: Cluster = await make_cluster(3, node_args=NODE_ARGS)
    d = Driver(cluster, b"cluster/every-game")
    d.rematch = False
    try:
        for game in GAMES:
            await d.create(game, 3, 1, quick(game, bot_think=0, pause=0, action_clock=60, time_bank=60,
                                             close_after=3600))
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
