"""A seat left from another connection is not seen through the old one.

Player X holds seat 2 of a table through a connection on one node, opens a
second connection with the same token and sends ``leave`` there: the seat
is freed, and the table turns X's first connection, still joined, into a
spectator (server/table/vacancy.py: whoever sits there next is never seen
through a view that is no longer theirs). Player Y then takes seat 2 on the
same node as X's first connection, the last seat is taken, and the match
deals. From the ``left`` on, X's first connection must get exactly what a
spectator gets: no event showing seat 2's private fields (Hold'em, Alamo and
Loco Poker: ``hole_cards.cards``; Avalanche: ``deal.cards``,
``snowfall.card``, ``refill.cards``), no ``legal``, every frame equal to the
frame a spectator on the same node got for that ``seq``, and each event the
stored event as a spectator sees it (``Event.view(None)``).

Two layouts of a cluster of two nodes (``--placement local``: the table is
created on the first, its owner), every game:

* ``two-nodes``: X's first connection, Y and the spectator on the node that
  does not own the table (their events are relayed), X's second connection
  on the owner;
* ``one-node``: every connection on the owner (the table delivers to them
  itself): the single-node equivalent.

The table: three seats, a server bot in seat 3, seat 1 taken last by a
third player (that join starts the match: the first hand is dealt at once),
short bot thinking and ``pause``; Y and the third player play random legal
actions (tests/cluster/driver.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from cardhall.engine.base import Event
from tests.cluster.conftest import require_cluster_tools
from tests.cluster.driver import NODE_ARGS, Driver, Member, TimedClient
from tests.cluster.harness import Cluster
from tests.conftest import until
from tests.games import GAMES, quick
from tests.server.test_recovery_kill import as_json, stored_history

pytestmark = [pytest.mark.redis, pytest.mark.asyncio(loop_scope="module")]

#: table options beside the game's quick ones: quick bots and pacing, clocks that never run out here
OPTIONS = {"bot_think": 0.05, "pause": 0.05, "action_clock": 60, "time_bank": 60, "close_after": 3600}
#: events each connection must have received past seat 2's first private event before the frames are compared
MORE = 5
#: seconds to wait for any one thing (many lease TTLs of the harness's 2 s)
DEADLINE = 30.0


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def two_nodes(request: pytest.FixtureRequest) -> AsyncIterator[Cluster]:
    """One cluster of two nodes (tables placed where they are created) for
    the whole module: each test makes a table of its own. The nodes' and
    nginx's logs are printed if a test of the module failed."""
    require_cluster_tools()
    cluster = Cluster(2, node_args=[*NODE_ARGS, "--placement", "local", "--rebalance-rate", "0"])
    await cluster.start()
    failed = request.session.testsfailed
    try:
        yield cluster
    finally:
        if request.session.testsfailed > failed:
            print(cluster.log_tails())
        await cluster.stop()


def events_of(client: TimedClient, table: str, since: int) -> dict[int, dict[str, Any]]:
    """``client``'s event frames of ``table`` from ``seq`` ``since`` on, by ``seq``
    (AssertionError if a ``seq`` came twice)."""
    out: dict[int, dict[str, Any]] = {}
    for f in client.frames:
        if f.get("type") == "event" and f.get("table") == table and f["seq"] >= since:
            assert f["seq"] not in out, f"seq {f['seq']} received twice"
            out[f["seq"]] = f
    return out


def private_seq(m: Member, seat: int, since: int) -> int | None:
    """The ``seq`` of the first event from ``since`` on in which ``m``, at
    ``seat``, received its own private cards (the fields SPEC "Who sees
    what" names: ``hole_cards.cards``, ``deal.cards``, ``snowfall.card``,
    ``refill.cards``); None before any."""
    fields = {"hole_cards": "cards", "deal": "cards", "snowfall": "card", "refill": "cards"}
    for f in m.events:
        ev = f["event"]
        if f["seq"] >= since and ev["type"] in fields and fields[ev["type"]] in ev and ev.get("seat", seat) == seat:
            return int(f["seq"])
    return None


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("layout", ["one-node", "two-nodes"])
async def test_no_view_of_a_seat_left_from_another_connection(two_nodes: Cluster, layout: str,
                                                              game: str) -> None:
    """The module docstring's scenario in ``layout`` for ``game``."""
    cluster = two_nodes
    owner, other = cluster.nodes
    away = other if layout == "two-nodes" else owner
    d = Driver(cluster, f"views/{layout}/{game}".encode())
    x_first = TimedClient(away.ws)
    x_second = TimedClient(owner.ws)
    try:
        table = await d.create(game, 3, 1, quick(game, **OPTIONS), node=owner)
        assert (await d.settled(live=2))[table] == owner.node_id
        watcher = await d.seat(table, None, node=away)  # the spectator X's frames must equal

        await x_first.connect()
        await x_first.hello("x")
        assert (await x_first.join(table, role="player", seat=2))["you"] == 2
        await x_second.connect()
        await x_second.hello("x", token=x_first.token)
        assert x_second.player == x_first.player
        assert (await x_second.join(table, role="player"))["you"] == 2  # the seat it holds
        await x_second.leave(table)  # between matches: seat 2 is freed at once
        left = await x_first.next_event(table, timeout=DEADLINE,
                                        where=lambda f: f["event"] == {"type": "left", "seat": 2})
        freed = left["seq"]

        y = await d.seat(table, 2, node=away)
        assert y.client.player != x_first.player
        third = await d.seat(table, 1, node=owner)  # the last seat: the match starts, the first hand is dealt
        await until(lambda: private_seq(y, 2, freed) is not None, DEADLINE,
                    f"Y (seat 2) sees its private cards after seq {freed}")
        dealt = private_seq(y, 2, freed)
        assert dealt is not None
        await until(lambda: watcher.last_seq >= dealt + MORE, DEADLINE,
                    f"the spectator gets {MORE} events past seq {dealt}")
        await until(lambda: x_first.seqs.get(table, 0) >= dealt + MORE, DEADLINE,
                    f"X's first connection (on {away.node_id}, a spectator since seq {freed}) gets {MORE} events "
                    f"past seq {dealt} (it has {x_first.seqs.get(table)})")
        _, stored = await stored_history(d.db, cluster.prefix, table)
        history = {seq: Event.from_data(data) for seq, data in stored}
        mine = events_of(x_first, table, freed)
        theirs = events_of(watcher.client, table, freed)
        upto = min(max(mine), max(theirs), max(history))

        leaks, differences = [], []
        for seq in range(freed, upto + 1):
            frame = mine.get(seq)
            assert frame is not None, f"X's first connection has no event {seq} (it has {sorted(mine)[:20]}...)"
            event = history[seq]
            seat2 = (event.private or {}).get(2, {})
            shown = {k: frame["event"][k] for k in seat2 if k in frame["event"]}
            if shown or "legal" in frame:
                leaks.append(f"seq {seq} {frame['event']['type']}: {shown or ''}{' legal' if 'legal' in frame else ''}")
            spectator_view = event.view(None)
            if frame["event"] != spectator_view and as_json(frame["event"]) != as_json(spectator_view):
                differences.append(f"seq {seq}: not the spectator's view of the stored event")
            if seq in theirs and frame != theirs[seq]:
                differences.append(f"seq {seq}: differs from the spectator's frame")
        print(f"\n{layout} {game}: seat 2 freed at seq {freed}, Y's first private event at {dealt}, "
              f"compared {freed}..{upto}: {len(leaks)} leaks")
        assert any(2 in (history[s].private or {}) for s in range(freed, upto + 1)), "seat 2 was dealt private cards"
        assert not leaks, (f"X's first connection (on {away.node_id}; the owner is {owner.node_id}) received seat 2's "
                           f"view after X left seat 2 and Y took it: " + "; ".join(leaks[:5]))
        assert not differences, differences[:5]
        assert third.failures == [] and y.failures == [] and watcher.failures == [], d.failures()
    finally:
        await x_first.close()
        await x_second.close()
        await d.close()
