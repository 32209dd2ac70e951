"""Where tables live: one interface, two topologies.

The hall, the websocket session, the HTTP API and the table actors talk to a
:class:`Topology` for everything that depends on whether this process is
alone or one node of a cluster: where a table is served, how a request
reaches its owner, how a table's committed events and its subscribers'
views reach the other nodes, what the lobby holds, which nodes hear of a
player's new name. Two implementations:

* :class:`LocalTopology` (this module): one process, every table served
  here; in memory (``python3 dev.py serve``).
* :class:`~cardhall.server.cluster.topology.RedisTopology`: one node of a
  cluster on Redis (leases with fencing, routing, relaying, handover:
  ``server/cluster/``).

:func:`cardhall.server.wiring.topology_for` picks one by the store; nothing
else asks which one it has.
"""

from __future__ import annotations

import secrets
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from cardhall.protocol.errors import ProtocolError
from cardhall.protocol.frames import Info
from cardhall.server.renaming import apply_here

if TYPE_CHECKING:
    from cardhall.server.connection import Connection
    from cardhall.server.players import Players
    from cardhall.server.store.base import Checkpoint, Store, StoredTable
    from cardhall.server.table.actor import TableActor
    from cardhall.server.table.host import RelayedPeer
    from cardhall.server.table.inputs import Join, Request
    from cardhall.server.table.records import EventRecord

Data = dict[str, Any]


def new_table_id() -> str:
    """A new table id: ``t_`` and 12 hex digits from the OS CSPRNG.

    >>> len(new_table_id()), new_table_id()[:2]
    (14, 't_')
    """
    return "t_" + secrets.token_hex(6)


class Topology(Protocol):
    """What depends on where tables live (see the module docstring)."""

    #: this node's id in a cluster (None: alone)
    node_id: str | None

    async def start(self) -> None:
        """Serve what is stored: alone, every stored table; in a cluster, join
        it and claim this node's share. Raises StoreUnavailable, RedisError or
        OSError while the store cannot be reached (the hall waits and calls
        it again)."""

    async def hand_over(self, timeout: float) -> int:
        """The service stops: hand every table to another node within
        ``timeout`` seconds; returns how many were (0 alone)."""

    async def stop(self, tables: list[TableActor]) -> None:
        """The service stopped: ``tables`` (not handed over) are freed for
        other nodes at once; leave the cluster."""

    # -- tables ---------------------------------------------------------------
    async def place(self, spec: Mapping[str, Any], owner: str | None, address: str | None) -> Info | str:
        """Where a new table goes: its public info when the placement put it
        on another node and it was created there, else the id it is to have
        here (the hall then creates it and calls :meth:`created`). Raises
        ProtocolError (a bad request, or the other node's refusal)."""

    def created(self, table_id: str) -> None:
        """The creation of ``table_id`` here (as :meth:`place` said) is over,
        made or refused: the placement counts it from now on in this node's
        own table count."""

    async def lease_new(self, table_id: str) -> str | None:
        """The fencing token of a table being created here (None alone).
        Raises ProtocolError ``unavailable`` when it cannot be taken now."""

    async def route(self, conn: Connection, table_id: str, request: Request) -> None:
        """Send ``request`` of local ``conn`` for a table not served here to
        its owner. Raises ProtocolError ``unknown_table`` (alone: always) or
        ``unavailable``."""

    def disconnect(self, conn: Connection, table_id: str) -> None:
        """Local ``conn`` closed while watching ``table_id``, served elsewhere."""

    def latest(self, table_id: str) -> int | None:
        """The newest ``seq`` of a table served elsewhere known here (None: none)."""

    async def close(self, table_id: str, reason: str) -> None:
        """Close a table wherever it is served (an operator). Raises
        ProtocolError ``unknown_table``, TimeoutError when its node does not
        answer, RedisError or OSError."""

    # -- the owner's side ---------------------------------------------------------
    def peer(self, table: str, key: Hashable) -> RelayedPeer | None:
        """The handle on subscriber ``key`` of ``table`` connected to another
        node (None: ``key`` is not such a subscriber)."""

    def dress(self, table: TableActor, checkpoint: Checkpoint, records: list[EventRecord]) -> None:
        """Add what the topology writes with ``table``'s checkpoint (a fencing
        token, the events and view changes for other nodes, the lobby entry)."""

    def written(self, table: TableActor) -> None:
        """``table``'s dressed checkpoint is written."""

    def rewriting(self, table: TableActor, checkpoint: Checkpoint) -> None:
        """``table`` is written again whole into a store that lost its data."""

    async def lease_lost(self, table: TableActor) -> bool:
        """``table``'s checkpoint was refused: True when its lease is its own
        again (write again), False when the table was dropped."""

    def forget(self, table_id: str) -> None:
        """``table_id`` closed: what the topology kept for it goes."""

    # -- players ------------------------------------------------------------------------
    async def renamed(self, player: str, token_hash: str, name: str) -> None:
        """``player`` (token hash ``token_hash``, empty when unknown) is named
        ``name`` now, saved in the store (SPEC "Names", ``rename``): this node
        and every other live one apply it
        (:func:`~cardhall.server.renaming.apply_here`: the player held there,
        the store's cache, a ``Rename`` to each table there where it sits or
        watches). A node that does not answer is logged, never an error."""

    # -- what the HTTP API shows ------------------------------------------------------
    async def infos(self) -> dict[str, Data]:
        """The public info of the tables served elsewhere, by id (the
        cluster's lobby; empty alone). Raises RedisError or OSError."""

    async def info(self, table_id: str) -> Data | None:
        """One table's public info when it is served elsewhere (None: not
        known). Raises ProtocolError ``unavailable``."""

    async def lock(self, table_id: str) -> Data | None:
        """The lock of a private table served elsewhere (its invite's digest,
        its password's record: :func:`cardhall.server.table.access.lock`;
        None: a public table without a password, or not known). Raises
        ProtocolError ``unavailable``."""

    async def stored_view(self, table_id: str) -> Data | None:
        """An operator's view of a table served elsewhere, from its last
        checkpoint (None: no such table). Raises ProtocolError ``unavailable``."""

    async def nodes(self) -> Data:
        """``GET /api/cluster``: every node with its tables and connections.
        Raises ProtocolError ``unavailable``."""

    def health(self) -> Data:
        """What ``/healthz`` adds (``{"cluster": ...}`` in a cluster, nothing alone)."""


class LocalHost(Protocol):
    """What :class:`LocalTopology` needs of the hall."""

    store: Store
    tables: dict[str, TableActor]
    players: Players
    #: the join that made each (local connection id, table id) watch a table
    joins: dict[tuple[int, str], Join]

    @property
    def connections(self) -> Any: ...

    async def restore_stored(self, item: StoredTable, token: str | None = None) -> TableActor | None:
        """Serve stored table ``item`` here (quarantined when unreadable)."""

    def close_table(self, table_id: str, reason: str) -> None:
        """Ask a table served here to close (ProtocolError ``unknown_table``)."""


class LocalTopology:
    """One process: every table is served here, nothing is relayed."""

    node_id: str | None = None

    def __init__(self, host: LocalHost) -> None:
        self.host = host

    async def start(self) -> None:
        for item in await self.host.store.load_tables():
            await self.host.restore_stored(item)

    async def hand_over(self, timeout: float) -> int:
        return 0

    async def stop(self, tables: list[TableActor]) -> None:
        return None

    async def place(self, spec: Mapping[str, Any], owner: str | None, address: str | None) -> Info | str:
        return new_table_id()

    def created(self, table_id: str) -> None:
        return None

    async def lease_new(self, table_id: str) -> str | None:
        return None

    async def route(self, conn: Connection, table_id: str, request: Request) -> None:
        raise ProtocolError("unknown_table", f"no open table {table_id!r}")

    def disconnect(self, conn: Connection, table_id: str) -> None:
        return None

    def latest(self, table_id: str) -> int | None:
        return None

    async def close(self, table_id: str, reason: str) -> None:
        self.host.close_table(table_id, reason)

    def peer(self, table: str, key: Hashable) -> RelayedPeer | None:
        return None

    def dress(self, table: TableActor, checkpoint: Checkpoint, records: list[EventRecord]) -> None:
        return None

    def written(self, table: TableActor) -> None:
        return None

    def rewriting(self, table: TableActor, checkpoint: Checkpoint) -> None:
        return None

    async def lease_lost(self, table: TableActor) -> bool:
        return False

    def forget(self, table_id: str) -> None:
        return None

    async def renamed(self, player: str, token_hash: str, name: str) -> None:
        apply_here(self.host, player, token_hash, name)

    async def infos(self) -> dict[str, Data]:
        return {}

    async def info(self, table_id: str) -> Data | None:
        return None

    async def lock(self, table_id: str) -> Data | None:
        return None

    async def stored_view(self, table_id: str) -> Data | None:
        return None

    async def nodes(self) -> Data:
        host = self.host
        return {"nodes": [{"id": None, "tables": len(host.tables), "connections": len(host.connections),
                           "table_ids": sorted(host.tables), "store": "memory"}]}

    def health(self) -> Data:
        return {}
