"""What a cluster node needs from the service around it (the hall)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from cardhall.server.config import Settings
    from cardhall.server.connection import Connection, Connections
    from cardhall.server.players import Players
    from cardhall.server.store.base import StoredTable
    from cardhall.server.table.actor import TableActor
    from cardhall.server.table.inputs import Join


class NodeMetrics(Protocol):
    def handover(self, seconds: float, rebalanced: bool = False) -> None:
        """A table handed to this node (``rebalanced``: moved by rebalancing)
        was claimed ``seconds`` after its release."""

    def rebalanced(self) -> None:
        """This node moved a table to another by rebalancing."""


class NodeHost(Protocol):
    """The hall, as a cluster node sees it."""

    settings: Settings
    #: the tables this node serves, by id
    tables: dict[str, TableActor]
    connections: Connections
    #: the join that made each (local connection id, table id) watch a table
    joins: dict[tuple[int, str], Join]
    #: Unix seconds the service started
    started: float
    #: the players this node holds
    players: Players

    @property
    def metrics(self) -> NodeMetrics: ...

    async def restore(self, table_id: str, token: str | None = None) -> TableActor | None:
        """Serve stored table ``table_id`` here under lease ``token``."""

    async def restore_stored(self, item: StoredTable, token: str | None = None) -> TableActor | None:
        """Serve table ``item`` (a state, not read from the store) here under lease ``token``."""

    async def create_here(self, spec: Mapping[str, Any], owner: str | None,
                          address: str | None = None, table_id: str | None = None) -> TableActor:
        """Create a table on this node, with id ``table_id`` (None: a new one); raises ProtocolError."""

    def watching(self, conn: Connection, table_id: str, join: Join) -> None:
        """``conn`` joins ``table_id`` with ``join`` (remembered until it leaves or closes)."""

    def store_failed(self, exc: BaseException) -> None:
        """The store cannot be written (or lost its data): stall and watch it."""

    def close_table(self, table_id: str, reason: str) -> None:
        """Ask a table of this node to close (raises ProtocolError ``unknown_table``)."""
