"""The cluster's :class:`~cardhall.server.topology.Topology`: this process as
one node (:class:`~cardhall.server.cluster.node.ClusterNode`) of a cluster on
Redis. Each method says which part of the node does the work: the router
(requests to owners, relayed tables), the owner's side (:class:`~.peers.Owned`:
the commit's publication and view changes, the lobby entry), the registry
(the cluster's lobby, the live nodes), calls to other nodes (creation and
closing placed elsewhere, a player's new name)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any, cast

from redis import exceptions as rexc

from cardhall.protocol.errors import ProtocolError
from cardhall.protocol.frames import Info
from cardhall.server.cluster.host import NodeHost
from cardhall.server.cluster.naming import TABLE_ID
from cardhall.server.cluster.node import ClusterNode
from cardhall.server.creation import check
from cardhall.server.renaming import apply_here
from cardhall.server.store.base import StoreUnavailable
from cardhall.server.store.redis import RedisStore
from cardhall.server.stored import current
from cardhall.server.topology import new_table_id

if TYPE_CHECKING:
    from cardhall.server.connection import Connection
    from cardhall.server.store.base import Checkpoint
    from cardhall.server.table.actor import TableActor
    from cardhall.server.table.host import RelayedPeer
    from cardhall.server.table.inputs import Request
    from cardhall.server.table.records import EventRecord

log = logging.getLogger("cardhall.cluster")

Data = dict[str, Any]

UNREADABLE = "the store cannot be read right now"


def public(record: Data) -> Data:
    """A lobby record without its ``lock`` (:func:`cardhall.server.table.views.lobby_record`):
    what any reader of the cluster's lobby gets."""
    return {k: v for k, v in record.items() if k != "lock"}


class RedisTopology:
    """Where tables live when the store is Redis: every node on the same
    Redis and key prefix serves every table (``deploy/README.md``, "On
    several machines"). ``node`` is the cluster machinery."""

    def __init__(self, host: NodeHost, store: RedisStore) -> None:
        self.node = ClusterNode(host, store)
        self.node_id: str | None = self.node.id
        self.host = host

    async def start(self) -> None:
        await self.node.start()

    async def hand_over(self, timeout: float) -> int:
        return await self.node.hand_over(timeout)

    async def stop(self, tables: list[TableActor]) -> None:
        await self.node.stop(tables)

    # -- tables ---------------------------------------------------------------
    async def place(self, spec: Mapping[str, Any], owner: str | None, address: str | None) -> Info | str:
        """The new table's id when the placement (:meth:`ClusterNode.place`)
        picks this node; else it is created on the node picked (its info),
        or here under another id when that node did not answer in time.
        Raises ProtocolError (a bad request, the other node's refusal)."""
        table_id = new_table_id()
        target = await self.node.place(table_id)
        if target == self.node.id:
            return table_id
        check(spec)  # a bad request is answered here, without a round trip to the other node
        try:
            return cast(Info, await self.node.call(target, "create", [dict(spec), owner, address, table_id]))
        except TimeoutError:
            # that node may still create it: this one takes another id (its placement entry expires)
            log.warning("node %s did not answer a table creation in time; creating it here", target)
            return new_table_id()

    def created(self, table_id: str) -> None:
        self.node.created(table_id)

    async def lease_new(self, table_id: str) -> str | None:
        return await self.node.lease_new(table_id)

    async def route(self, conn: Connection, table_id: str, request: Request) -> None:
        """The router's (:meth:`~.router.Router.route`); an id no table can
        have is ``unknown_table`` without asking Redis."""
        if not TABLE_ID.fullmatch(table_id):
            raise ProtocolError("unknown_table", f"no open table {table_id!r}")
        await self.node.router.route(conn, table_id, request)

    def disconnect(self, conn: Connection, table_id: str) -> None:
        self.node.router.disconnect(conn, table_id)

    def latest(self, table_id: str) -> int | None:
        return self.node.router.latest(table_id)

    async def close(self, table_id: str, reason: str) -> None:
        if table_id in self.host.tables:
            self.host.close_table(table_id, reason)
            return
        owner = (await self.node.owners([table_id])).get(table_id)
        if owner is None:
            raise ProtocolError("unknown_table", f"no open table {table_id!r}")
        await self.node.call(owner, "close", [table_id, reason])

    # -- the owner's side ---------------------------------------------------------
    def peer(self, table: str, key: Hashable) -> RelayedPeer | None:
        return self.node.owned.peer(table, key)

    def dress(self, table: TableActor, checkpoint: Checkpoint, records: list[EventRecord]) -> None:
        self.node.owned.dress(table, checkpoint, records)

    def written(self, table: TableActor) -> None:
        self.node.owned.written(table.id)

    def rewriting(self, table: TableActor, checkpoint: Checkpoint) -> None:
        """Written again into a Redis that lost its data: its token and its
        lobby entry go with it."""
        self.node.owned.forget_info(table.id)
        self.node.owned.dress(table, checkpoint, [])

    async def lease_lost(self, table: TableActor) -> bool:
        return await self.node.reclaim_or_drop(table)

    def forget(self, table_id: str) -> None:
        self.node.forget_peers(table_id)

    # -- players ------------------------------------------------------------------------
    async def renamed(self, player: str, token_hash: str, name: str) -> None:
        """Applied here, then on every other live node at once (a call
        ``rename`` each, :mod:`.calls`); one that fails or does not answer
        within the call's timeout is logged (its tables learn the name when
        the player next joins them as a player: :mod:`cardhall.server.table.naming`)."""
        apply_here(self.host, player, token_hash, name)
        others = sorted(n for n in self.node.live if n != self.node.id)
        results = await asyncio.gather(*(self.node.call(n, "rename", [player, token_hash, name]) for n in others),
                                       return_exceptions=True)
        for node, result in zip(others, results, strict=True):
            if isinstance(result, BaseException):
                log.warning("node %s was not told of player %s's new name: %s: %s", node, player,
                            type(result).__name__, result)

    # -- what the HTTP API shows ------------------------------------------------------
    async def infos(self) -> dict[str, Data]:
        return {tid: public(record) for tid, record in (await self.node.registry.infos()).items()}

    async def info(self, table_id: str) -> Data | None:
        try:
            record = await self.node.registry.info(table_id)
        except (rexc.RedisError, OSError):
            raise ProtocolError("unavailable", UNREADABLE) from None
        return None if record is None else public(record)

    async def lock(self, table_id: str) -> Data | None:
        try:
            record = await self.node.registry.info(table_id)
        except (rexc.RedisError, OSError):
            raise ProtocolError("unavailable", UNREADABLE) from None
        held = record.get("lock") if record is not None else None
        return held if isinstance(held, dict) else None

    async def stored_view(self, table_id: str) -> Data | None:
        """Its lobby info, its last checkpoint with the input log replayed, its owner."""
        try:
            record = await self.node.registry.info(table_id)
            info = None if record is None else public(record)
            stored = await self.node.store.load_table(table_id)
            owner = (await self.node.owners([table_id])).get(table_id)
        except (StoreUnavailable, rexc.RedisError, OSError):
            raise ProtocolError("unavailable", UNREADABLE) from None
        if info is None or stored is None:
            return None
        state = current(stored)[0]
        return {"info": info, "state": state.data, "node": owner, "checkpoint": True,
                **({"state_error": state.error} if state.error else {})}

    async def nodes(self) -> Data:
        node = self.node
        try:
            await node.heartbeat()
        except (rexc.RedisError, OSError):
            raise ProtocolError("unavailable", UNREADABLE) from None
        nodes = [node.live[n] for n in sorted(node.live)]
        return {"node": node.id, "nodes": nodes, "tables": sum(n.get("tables", 0) for n in nodes)}

    def health(self) -> Data:
        return {"cluster": self.node.describe()}
