"""``rename``: a player's name changes, its identity does not (SPEC "Names").

A player is its public id and its token (G-5); its name is only what tables
show. :func:`rename` answers a connection's ``rename`` on the node it is
on, in this order: the name is checked as ``hello``'s is
(:func:`~cardhall.server.names.checked_name`, ``bad_request``), a name
equal to the player's answers ``ok`` at once (nothing changes, nothing is
counted), the rename is counted against the player
(:meth:`~cardhall.server.limits.Limits.rename`, ``rate_limited``, across a
cluster), written to the store (``unavailable``), then spread by the
topology (:meth:`~cardhall.server.topology.Topology.renamed`) to every node
of the service, each of which applies it with :func:`apply_here`. The reply
is ``ok`` with the ``name`` as kept (normalised).

:func:`apply_here`, on each node: the player held in memory and the store's
cache take the name, and each table this node serves where the player sits,
watches or has a join on its way gets a
:class:`~cardhall.server.table.inputs.Rename` (its ``renamed`` event:
:mod:`cardhall.server.table.naming`). Seats and owned tables are keyed by
the player id, so none is lost.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from cardhall.protocol import frames
from cardhall.server.limits import Limits
from cardhall.server.names import checked_name
from cardhall.server.players import Player, Players
from cardhall.server.table.inputs import Join, Rename

if TYPE_CHECKING:
    from cardhall.server.table.actor import TableActor


class Spreader(Protocol):
    """What tells every node of the service (the topology)."""

    async def renamed(self, player: str, token_hash: str, name: str) -> None:
        """``player`` (token hash ``token_hash``) is named ``name`` now, saved:
        every node applies it (:func:`apply_here`)."""


class RenameHall(Protocol):
    """What :func:`rename` needs of the hall."""

    players: Players
    limits: Limits

    @property
    def topology(self) -> Spreader: ...


class NodeTables(Protocol):
    """What :func:`apply_here` needs of a node (the hall)."""

    players: Players
    tables: dict[str, TableActor]
    #: the join that made each (local connection id, table id) watch a table
    joins: dict[tuple[int, str], Join]


async def rename(hall: RenameHall, player: Player, msg: Mapping[str, Any]) -> frames.Ok:
    """The answer to ``rename`` message ``msg`` of ``player`` (see the module
    docstring). Raises ProtocolError ``bad_request``, ``rate_limited``,
    ``unavailable``."""
    name = checked_name(msg.get("name"))
    if name != player.name:
        await hall.limits.rename(player.id)
        await hall.players.save_name(player, name)
        player.name = name  # before the other nodes hear of it: this connection's next request has it
        await hall.topology.renamed(player.id, player.token_hash, name)
    return frames.ok(msg.get("id"), name=name)


def apply_here(node: NodeTables, player: str, token_hash: str, name: str) -> int:
    """Apply a saved rename of ``player`` on this node: the player held here,
    the store's cache and the joins of its connections here (sent again when
    a table moves) take ``name``; each table served here where the player
    sits or watches, or where a join of one of its connections is still on
    its way, gets a :class:`Rename`. Returns how many tables did."""
    node.players.renamed(player, token_hash, name)
    joining: set[str] = set()
    for key, join in list(node.joins.items()):  # a join sent again (the table moved) carries the name
        if join.player == player:
            node.joins[key] = dataclasses.replace(join, name=name)
            joining.add(key[1])
    posted = 0
    for table in list(node.tables.values()):
        machine = table.machine
        if table.id in joining or machine.seat_of(player) is not None or machine.subscribers.watching(player):
            table.post(Rename(player, name))
            posted += 1
    return posted
