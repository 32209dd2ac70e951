"""A table leaving this node: what becomes of its requests and of this node's connections watching it.

A table leaves when its lease turned out to be another node's (it is
dropped), or when this node hands it to another (rebalancing). Either way
its actor ended without delivering what it held: every request it took and
did not answer gets ``unavailable`` (nothing of it was written: safe to send
again, SPEC "Resuming and reconnecting"), and each connection of this node
watching it joins it wherever it is served next, from the last ``seq`` it was
delivered (:func:`follow`).

When the final write of a move fails after the actor ended (the store went
away, or lost its data: its stored copy may be gone), the table is served
here again from its state in memory (:func:`revive`), so a failed move never
loses a table: the hall's store watcher writes it back with the others.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from cardhall.protocol import frames
from cardhall.server.cluster.host import NodeHost
from cardhall.server.cluster.peers import Owned
from cardhall.server.cluster.relay import give_up
from cardhall.server.cluster.router import Router
from cardhall.server.store.base import StoredTable
from cardhall.server.table.inputs import Join

if TYPE_CHECKING:
    from cardhall.server.table.actor import TableActor


def refuse(host: NodeHost, owned: Owned, table: TableActor, unanswered: list[tuple[Hashable, Any]]) -> None:
    """Answer each ``(subscriber, re)`` of ``unanswered`` ``unavailable``
    (a connection of this node, or one of another node watching ``table``)."""
    for sub, re in unanswered:
        conn = host.connections.get(sub)
        if conn is not None:
            give_up(conn, re)
        peer = conn or owned.peer(table.id, sub)
        if peer is not None:
            peer.send(frames.error("unavailable", "the table moved to another node; retry", re=re))
            peer.flush()


def follow(host: NodeHost, router: Router, table: TableActor) -> None:
    """This node's connections watching ``table`` (which left) join it
    wherever it is served next (relayed), from what they were last delivered."""
    for key in list(table.machine.subscribers.viewers):
        conn = host.connections.get(key)
        if conn is not None:
            join = host.joins.get((conn.id, table.id))
            if join is not None:
                router.relay_join(conn, table.id, join, table.delivered)


async def revive(host: NodeHost, table: TableActor, token: str | None) -> TableActor | None:
    """Serve ``table`` (its actor ended by a move whose final write failed)
    here again from its state in memory, under lease ``token``; this node's
    connections that watched it join the new actor from what they were last
    delivered (a ``snapshot`` without ``re`` when those events are not
    buffered any more). Returns the new actor (None: it could not be
    restored, logged by the hall). Raises what the hall's restore raises."""
    viewers = [key for key in table.machine.subscribers.viewers if host.connections.get(key) is not None]
    actor = await host.restore_stored(StoredTable(table.id, table.to_data()), token)
    if actor is None:
        return None
    for key in viewers:
        conn = host.connections.get(key)
        join = host.joins.get((conn.id, table.id)) if conn is not None else None
        if conn is not None and join is not None:
            actor.post(Join(conn.id, join.player, join.name, None, join.role, join.seat, None, table.delivered, None))
    return actor
