"""Routing between nodes: requests to a table's owner, its answers back.

A request for a table this node does not serve goes to the owner's inbox
(the owner found from the table's lease, cached until an owner change or a
``moved`` answer); a stored table nobody holds is claimed here first. This
node's connections watching a table owned elsewhere are followed by a
:class:`~cardhall.server.cluster.relay.Relayed` per table (the channel's
events, the owner's replies in order). When a table changes owner, its
watchers join the new owner with ``since`` (:data:`~cardhall.server.table.inputs.REJOIN`),
or subscribe here when this node is the new owner; requests it had not
answered get ``unavailable``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any

from redis import exceptions as rexc

from cardhall.protocol.errors import ProtocolError
from cardhall.server.cluster import wire
from cardhall.server.cluster.host import NodeHost
from cardhall.server.cluster.leases import Leases
from cardhall.server.cluster.outbox import Outbox
from cardhall.server.cluster.peers import RemotePeer
from cardhall.server.cluster.relay import Relayed, not_given_up, push_all
from cardhall.server.connection import Connection
from cardhall.server.store.keys import Keys
from cardhall.server.table.inputs import REJOIN, Disconnect, Join, Leave, Request

log = logging.getLogger("cardhall.cluster")

#: claims a stored table for this node; returns whether it is served here now
Claim = Callable[[str], Awaitable[bool]]
#: subscribes to / unsubscribes from a pub/sub channel
Subscription = Callable[[str], Coroutine[Any, Any, None]]


class Router:
    """Requests to owners and the relayed tables of node ``node``."""

    def __init__(self, host: NodeHost, node: str, keys: Keys, leases: Leases, outbox: Outbox,
                 claim: Claim, subscribe: Subscription, unsubscribe: Subscription) -> None:
        self.host = host
        self.node = node
        self.keys = keys
        self.leases = leases
        self.outbox = outbox
        self.claim = claim
        #: seconds a connection may wait to be resumed before it is closed with 4012
        self.resync_within = 3 * host.settings.lease_ttl
        self.subscribe = subscribe
        self.unsubscribe = unsubscribe
        self.relayed: dict[str, Relayed] = {}
        #: each relayed table's channel subscription (a join is sent once it holds: its answer comes there)
        self._subscribed: dict[str, asyncio.Task[None]] = {}
        self._owners: dict[str, str] = {}  # table -> owner node, until it changes

    # -- owners ------------------------------------------------------------------
    async def owner(self, table: str) -> str | None:
        """The node holding ``table``'s lease; claims it here when it is
        stored and free; None while it moves; ProtocolError ``unknown_table``
        when it is not stored."""
        cached = self._owners.get(table)
        if cached is not None and (cached != self.node or table in self.host.tables):
            return cached
        for _ in range(3):
            node = await self.leases.owner(table)
            if node is not None:
                if len(self._owners) > 100_000:
                    self._owners.clear()
                self._owners[table] = node
                return node
            if not await self.leases.stored(table):
                raise ProtocolError("unknown_table", f"no open table {table!r}")
            if await self.claim(table):
                return self.node
            await asyncio.sleep(0.01)
        return None

    def latest(self, table: str) -> int | None:
        """The newest ``seq`` of ``table`` relayed to this node (None: none)."""
        relayed = self.relayed.get(table)
        return relayed.latest if relayed is not None else None

    def owned_here(self, table: str) -> None:
        """This node claimed ``table``."""
        self._owners[table] = self.node

    def forget_owner(self, table: str) -> None:
        """``table``'s owner changed (or a message came back ``moved``)."""
        self._owners.pop(table, None)

    def send(self, node: str, message: list[Any]) -> None:
        """Queue ``message`` for ``node``'s inbox."""
        self.outbox.send(self.keys.inbox(node), wire.pack(message))

    # -- requests from this node's connections --------------------------------------
    async def route(self, conn: Connection, table: str, request: Request) -> None:
        """Send ``request`` from local ``conn`` to ``table``'s owner.
        Raises ProtocolError ``unknown_table`` or ``unavailable``."""
        try:
            owner = await self.owner(table)
        except (rexc.RedisError, OSError) as exc:
            raise ProtocolError("unavailable", "the cluster cannot be reached right now; retry") from exc
        if owner is None:
            raise ProtocolError("unavailable", f"table {table} is moving between nodes; retry")
        local = self.host.tables.get(table)
        if owner == self.node and local is not None:
            if isinstance(request, Join):
                self.host.watching(conn, table, request)
            local.post(request)
            return
        if isinstance(request, Join):
            self.host.watching(conn, table, request)
            self.relay_join(conn, table, request, request.since, owner)
            return
        inp = dataclasses.replace(request, sub=wire.remote_key(self.node, conn.id), received=None)
        rt = self.relayed.get(table)
        w = rt.watches.get(conn.id) if rt is not None else None
        if rt is not None:
            rt.sent(conn.id, request.re, leaving=isinstance(request, Leave), request=inp)
        if w is not None and w.waiting and w.resyncing is not None:
            w.held.append(inp)  # it resumes: the request follows its join, which subscribes it again
            return
        self.send(owner, ["in", table, wire.pack_input(inp)])

    def relay_join(self, conn: Connection, table: str, join: Join, since: int | None,
                   owner: str | None = None) -> None:
        """Watch ``table`` from here for ``conn`` and send its join to
        ``owner`` (None: the server's own join, to the owner found now)."""
        rt = self.relayed.get(table)
        if rt is None:
            rt = self.relayed[table] = Relayed(table, self.node, self.rejoin, self.deliver, self.resync_within)
            self._subscribed[table] = asyncio.get_running_loop().create_task(
                self.subscribe(self.keys.channel(table)))
        remote = dataclasses.replace(join, sub=wire.remote_key(self.node, conn.id), since=since, received=None,
                                     re=join.re if owner is not None else REJOIN)
        w = rt.watch(conn, remote)
        rt.sent(conn.id, remote.re)
        conn.tables.add(table)
        if owner is None:  # the server's own join: the connection resumes from ``since`` (requests follow it)
            w.resyncing = w.asked
            if w.cursor is None:
                w.cursor = since
            self.rejoin(table, remote)
        else:
            self.when_subscribed(table, lambda: self.send(owner, ["in", table, wire.pack_input(remote)]))

    def when_subscribed(self, table: str, then: Callable[[], None]) -> None:
        """Run ``then`` once this node listens on ``table``'s channel (at once
        when it does): a join's answer comes there."""
        task = self._subscribed.get(table)
        if task is None or task.done():
            then()
            return

        async def wait() -> None:
            await asyncio.shield(task)
            then()
        asyncio.get_running_loop().create_task(wait())

    def rejoin(self, table: str, join: Join) -> None:
        """Send ``join`` (a remote key's) to ``table``'s owner, found now;
        when that is this node, the connection subscribes here instead. Given
        up when the connection no longer waits for it (answered by then, or
        subscribed here: a later join took its place); the relay sends it
        again while it waits."""
        parsed = wire.parse_key(join.sub)

        def wanted() -> bool:
            rt = self.relayed.get(table)
            w = rt.watches.get(parsed[1]) if rt is not None and parsed is not None else None
            return w is not None and w.waiting

        async def send() -> None:
            task = self._subscribed.get(table)
            if task is not None:
                await asyncio.shield(task)
            for _ in range(20):
                if not wanted():
                    return
                try:
                    owner = await self.owner(table)
                except ProtocolError:
                    return
                except (rexc.RedisError, OSError):
                    owner = None
                if owner is not None and not wanted():
                    return
                if owner is not None:
                    if owner == self.node and table in self.host.tables:
                        self.localise(table, join)
                    else:
                        self.send(owner, ["in", table, wire.pack_input(join)])
                        self._release_held(table, parsed[1] if parsed is not None else None, owner)
                    return
                await asyncio.sleep(0.1)
        asyncio.get_running_loop().create_task(send())

    def _release_held(self, table: str, conn_id: int | None, owner: str) -> None:
        """Send the requests connection ``conn_id`` made while it resumed, after its join."""
        rt = self.relayed.get(table)
        w = rt.watches.get(conn_id) if rt is not None and conn_id is not None else None
        if w is not None and w.held:
            held, w.held = w.held, []
            for inp in held:
                self.send(owner, ["in", table, wire.pack_input(inp)])

    def adopt(self, table: str) -> None:
        """This node now serves ``table``: its connections that watched it
        through the relay subscribe here (with ``since``: their cursor; a
        client's own join not answered yet goes as it was)."""
        rt = self.relayed.get(table)
        if rt is None:
            return
        for w in rt.watches.values():  # what it holds goes to the table here and is answered there
            for inp in w.held:
                w.pending.pop(getattr(inp, "re", None), None)
        rt.fail_pending()  # sent to the old owner and not answered: it may be gone
        for w in list(rt.watches.values()):
            j = w.join
            if w.cursor is not None:
                j = Join(j.sub, j.player, j.name, REJOIN, j.role, j.seat, None, w.cursor, None)
            self.localise(table, j)
        self.unrelay(table)

    def localise(self, table: str, join: Join) -> None:
        """``join`` of a connection of this node, for a table this node serves."""
        parsed = wire.parse_key(join.sub)
        local = self.host.tables.get(table)
        if parsed is None or local is None:
            return
        conn_id = parsed[1]
        rt = self.relayed.get(table)
        w = rt.watches.get(conn_id) if rt is not None else None
        if rt is not None:
            rt.forget(conn_id)
        local.post(dataclasses.replace(join, sub=conn_id, received=None))
        for inp in w.held if w is not None else ():  # what it sent while it resumed, after its join
            local.post(dataclasses.replace(inp, sub=conn_id))

    def disconnect(self, conn: Connection, table: str) -> None:
        """Local ``conn`` closed while watching ``table`` owned elsewhere."""
        rt = self.relayed.get(table)
        if rt is None:
            return
        rt.forget(conn.id)
        self._tell_owner(table, wire.pack_input(Disconnect(wire.remote_key(self.node, conn.id))))
        if not rt.watches:
            self.unrelay(table)

    def _tell_owner(self, table: str, packed: list[Any]) -> None:
        """Send input ``packed`` (:func:`~.wire.pack_input`'s list) to ``table``'s owner, found now."""
        async def send() -> None:
            try:
                owner = await self.owner(table)
            except (ProtocolError, rexc.RedisError, OSError):
                return
            if owner is not None and owner != self.node:
                self.send(owner, ["in", table, packed])
        asyncio.get_running_loop().create_task(send())

    def unrelay(self, table: str) -> None:
        """Stop following ``table`` (no local watcher left)."""
        rt = self.relayed.pop(table, None)
        self._subscribed.pop(table, None)
        if rt is not None:
            asyncio.get_running_loop().create_task(self.unsubscribe(self.keys.channel(table)))

    def tick(self) -> None:
        """Periodic: relayed tables fail requests and resend resumes left
        unanswered too long, and close connections not resumed in time;
        unwatched ones end."""
        for table, rt in list(self.relayed.items()):
            if not rt.watches:
                self.unrelay(table)
            else:
                rt.tick()

    def behind(self, stored: dict[str, int | None]) -> None:
        """The stored events' last ``seq`` of relayed tables (a periodic
        check): connections that lost events resume (:meth:`Relayed.behind`)."""
        for table, seq in stored.items():
            rt = self.relayed.get(table)
            if rt is not None:
                rt.behind(seq)

    # -- messages from other nodes ---------------------------------------------------
    def on_channel(self, table: str, data: list[Any]) -> None:
        """A message on ``table``'s channel, in the order the table produced
        them: its commits' events and view changes (``e``), replies to one
        connection (``out``), or an owner change (``o``)."""
        rt = self.relayed.get(table)
        kind = data[0]
        if kind == "o":
            self.forget_owner(table)
            if rt is not None and data[1] != self.node:  # this node's own claim: its watchers were adopted
                rt.on_owner_changed()
        elif rt is None:
            return
        elif kind == "e":
            rt.on_events(data[2], data[3], data[4:])
        elif kind == "out" and data[2] == self.node:
            self.on_out(data)

    def on_input(self, table: str, packed: list[Any]) -> None:
        """An input sent to this node as ``table``'s owner."""
        local = self.host.tables.get(table)
        inp = wire.unpack_input(packed)
        if local is not None and local.token is not None:
            local.post(inp)
            return
        parsed = wire.parse_key(getattr(inp, "sub", None))
        if parsed is None:
            return
        node, conn = parsed
        self.send(node, ["moved", table])  # the sender's idea of the owner is stale
        if isinstance(inp, Join):
            asyncio.get_running_loop().create_task(self._forward_join(table, inp))
        elif hasattr(inp, "re"):
            peer = RemotePeer(self.outbox, self.keys, table, node, conn)
            peer.send(ProtocolError("unavailable", f"table {table} moved to another node; retry").frame(inp.re))
            peer.flush()

    async def _forward_join(self, table: str, join: Join) -> None:
        """A join that reached a node that does not serve the table: on to its owner."""
        await asyncio.sleep(0.05)
        try:
            owner = await self.owner(table)
        except (ProtocolError, rexc.RedisError, OSError):
            return
        local = self.host.tables.get(table)
        if owner == self.node and local is not None:
            local.post(join)
        elif owner is not None:
            self.send(owner, ["in", table, wire.pack_input(join)])

    def on_out(self, data: list[Any]) -> None:
        """Frames from a table's owner for one of this node's connections
        (``["out", table, node, connection, after, frames, member, join]``)."""
        _, table, _, conn_id, after, blobs, member, join = data
        rt = self.relayed.get(table)
        if member is True and (rt is None or conn_id not in rt.watches):
            # the owner subscribed a connection that no longer watches here (it closed or left
            # while its join was on the way): the owner forgets it, or it would count it present
            self._tell_owner(table, wire.pack_input(Disconnect(wire.remote_key(self.node, conn_id))))
            return
        if rt is not None:
            rt.on_out(conn_id, after, blobs, member, join)
        else:  # a reply to a connection not watching the table (an error): no order to keep
            self.deliver(conn_id, blobs)
            conn = self.host.connections.get(conn_id)
            if member is False and conn is not None:
                conn.tables.discard(table)

    def deliver(self, conn_id: int, blobs: list[bytes]) -> None:
        """Frames (msgpack) for local connection ``conn_id``, now."""
        conn = self.host.connections.get(conn_id)
        if conn is None:
            return
        if conn.given_up:
            blobs = not_given_up(conn, blobs)
        push_all(conn, blobs)
        conn.flush()

    def resync(self, tables: Iterable[str] | None = None) -> None:
        """Messages may have been lost (a subscription broke or moved): the
        watchers of every relayed table (of ``tables``, when given) join
        again with their cursor."""
        relayed = self.relayed.values() if tables is None else [self.relayed.get(t) for t in set(tables)]
        for rt in list(relayed):
            if rt is not None:
                rt.on_owner_changed()
