"""Rebalancing: a node holding more than its even share moves tables to the nodes holding less.

Nodes keep a table where it is until it moves for a reason: its node stops
(handover), dies (failover), or holds more than its share while another
holds less. The last is this module. There is no coordinator: every node
reads the same heartbeats (each node's ``tables``) and computes the same
plan (:func:`plan`: even targets, givers matched to takers in one fixed
order), and each does only its own part of it, so two nodes never both fill
the same gap. A view a heartbeat old can only make a node give less than its
part, never more than it holds above its own target (the tables moved by
another giver are missing from the taker and still counted at the giver,
the total stays the same); what it misses, the next round does.

A move is the handover of a stopping node for one table
(:func:`~cardhall.server.cluster.handover.release`: between two steps of
the table, its state written, its lease reserved for the taker, which is
asked to claim it), at most ``rate`` per second per node, one at a time, so
each move pauses its table only for its own commit, release and claim. A
table that a rebalancing move brought to a node stays there ``hold`` seconds
before it may move again, so a table does not bounce between nodes whose
views disagree for a heartbeat (a table handed over by a stopping node or
claimed after a failover may move at once: its node is back, or the
survivors are uneven).
Tables with the fewest viewers connected to the giving node go first (each
of those viewers is then relayed from the new owner).

>>> plan({"a": 100, "b": 100, "c": 0}, "a"), plan({"a": 100, "b": 100, "c": 0}, "c")
({'c': 33}, {})
>>> plan({"a": 67, "b": 66, "c": 67}, "a")
{}
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cardhall.server.table.actor import TableActor

log = logging.getLogger("cardhall.cluster")


def plan(loads: Mapping[str, int], me: str) -> dict[str, int]:
    """How many tables node ``me`` moves to each other node now: ``loads``
    maps every serving node (``me`` included) to the tables it holds. Each
    node's target is the even share, ``total // nodes``, and one more for
    the first ``total % nodes`` nodes by id: the targets depend only on the
    nodes and the total, so a view in which another giver's moves are not
    seen yet gives the same targets. The nodes above their target give to
    those below, in order (most loaded giver first, to the least loaded
    taker first). Nothing moves while no node holds two or more tables more
    than another (already even). Empty when ``me`` gives nothing.

    >>> plan({"a": 90, "b": 60, "c": 0}, "a"), plan({"a": 90, "b": 60, "c": 0}, "b")
    ({'c': 40}, {'c': 10})
    >>> plan({"a": 5, "b": 3}, "a"), plan({"a": 5, "b": 4}, "a")
    ({'b': 1}, {})
    """
    if me not in loads or len(loads) < 2 or max(loads.values()) - min(loads.values()) < 2:
        return {}
    ranked = sorted(loads, key=lambda n: (-loads[n], n))
    base, extra = divmod(sum(loads.values()), len(ranked))
    target = {n: base + (1 if i < extra else 0) for i, n in enumerate(sorted(loads))}
    takers = [n for n in reversed(ranked) if loads[n] < target[n]]
    room = {n: target[n] - loads[n] for n in takers}
    out: dict[str, int] = {}
    for giver in ranked:
        surplus = loads[giver] - target[giver]
        while surplus > 0 and takers:
            taker = takers[0]
            count = min(surplus, room[taker])
            if giver == me:
                out[taker] = out.get(taker, 0) + count
            surplus -= count
            room[taker] -= count
            if not room[taker]:
                takers.pop(0)
        if giver == me:
            break
    return out


class Rebalancer:
    """Node ``node``'s side of rebalancing (the module docstring): one move
    per :meth:`step` at most, which the node calls every ``1 / rate`` seconds.

    ``live()``: the serving nodes' heartbeats (id -> info with ``tables`` and
    ``table_ids``); ``tables()``: this node's tables (id -> actor);
    ``local(table)``: how many of its viewers are connected to this node;
    ``move(table, node)``: hand it to ``node``, True when it was;
    ``refresh()``: read the heartbeats again (before a move: the plan is
    made again on the newest counts);
    ``pending_for``: seconds a table moved out is counted at its taker until
    the taker's heartbeat lists it; ``settle``: seconds the plan must have
    asked this node to give before its first move (a heartbeat up to a
    renewal old shows a table just created elsewhere late: a passing
    imbalance moves nothing); ``placing()``: node id -> the tables placed on
    it that its heartbeat does not count yet (the placement's view, read with
    the heartbeats)."""

    def __init__(self, node: str, rate: float, hold: float, live: Callable[[], Mapping[str, Mapping[str, Any]]],
                 tables: Callable[[], Mapping[str, TableActor]], local: Callable[[TableActor], int],
                 move: Callable[[TableActor, str], Awaitable[bool]], refresh: Callable[[], Awaitable[None]],
                 pending_for: float, settle: float, placing: Callable[[], Mapping[str, Collection[str]]]) -> None:
        self.node = node
        self.rate = rate
        self.hold = hold
        self.live = live
        self.tables = tables
        self.local = local
        self.move = move
        self.refresh = refresh
        self.pending_for = pending_for
        self.settle = settle
        self.placing = placing
        self.moves = 0
        self._wanted: float | None = None  # since when the plan has asked this node to give (monotonic s)
        self._arrived: dict[str, float] = {}  # table -> when it arrived here (monotonic s)
        self._sent: dict[str, tuple[str, float]] = {}  # table moved out -> (its taker, when: monotonic s)

    def arrived(self, table: str) -> None:
        """``table`` arrived on this node by a rebalancing move: it stays ``hold`` seconds."""
        self._arrived[table] = time.monotonic()

    def loads(self) -> dict[str, int]:
        """Every serving node's tables: this node's as it holds them now, the
        others' from their last heartbeat plus the tables this node moved to
        them that their heartbeat does not list yet; and on each node the
        tables placed there and not counted yet (``placing()``: a burst of
        creations is seen as the placement spreads it, not as the passing
        imbalance of heartbeats taken at different moments)."""
        now = time.monotonic()
        self._sent = {t: (n, at) for t, (n, at) in self._sent.items() if now - at < self.pending_for}
        placing = self.placing()
        out: dict[str, int] = {}
        for node, info in self.live().items():
            if node == self.node:
                continue
            listed = set(info.get("table_ids", ()))
            coming = {t for t, (n, _) in self._sent.items() if n == node} | set(placing.get(node, ()))
            out[node] = int(info.get("tables", 0)) + len(coming - listed)
        mine = self.tables()
        out[self.node] = len(mine) + sum(1 for t in placing.get(self.node, ()) if t not in mine)
        return out

    def pick(self) -> TableActor | None:
        """The table to move next: one of this node's, not moved here within
        ``hold`` seconds, written (nothing waiting for the store) and quiet,
        with the fewest viewers on this node (ties: the oldest arrival)."""
        now = time.monotonic()
        self._arrived = {t: at for t, at in self._arrived.items() if now - at < self.hold}
        best: TableActor | None = None
        best_key: tuple[int, str] | None = None
        for table in self.tables().values():
            if table.id in self._arrived or table.token is None or table.unwritable or table.machine.stalled:
                continue
            if table.machine.pending.needs_commit or not table.quiet:
                continue
            key = (self.local(table), table.id)
            if best_key is None or key < best_key:
                best, best_key = table, key
        return best

    async def step(self) -> bool:
        """Move one table if the plan says this node gives one; True when it did."""
        if self.rate <= 0 or not plan(self.loads(), self.node):
            self._wanted = None
            return False
        now = time.monotonic()
        if self._wanted is None:
            self._wanted = now
        if now - self._wanted < self.settle:
            return False
        await self.refresh()
        moves = plan(self.loads(), self.node)
        if not moves:
            return False
        taker = min(moves, key=lambda n: (-moves[n], n))
        table = self.pick()
        if table is None:
            return False
        if not await self.move(table, taker):
            return False
        self._sent[table.id] = (taker, time.monotonic())
        self.moves += 1
        return True
