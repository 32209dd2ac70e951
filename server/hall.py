"""The hall: every open table, the connections, the players, the store and the committer.

It creates tables (validating game, seats, options and bots), routes nothing
itself (connections post typed inputs to table mailboxes), closes idle
finished tables (G-9) and drains everything on shutdown. To each table actor
it is a :class:`~cardhall.server.table.actor.TableHost`: the committer, the
store's stream, the connections by id, the metrics, and the notices of
closed, broken and stalled tables.

Where tables live is its :class:`~cardhall.server.topology.Topology`'s:
alone (:class:`~cardhall.server.topology.LocalTopology`) every table is
served here; with the Redis store the hall is one node of a cluster
(:class:`~cardhall.server.cluster.node.ClusterNode`): it serves the tables it
holds the lease of, sends requests for the others to their owners, and hands
its tables over when it stops (``server/STORAGE.md``, "Cluster").

Durability (``server/STORAGE.md``): on start it recovers every stored
table that is not closed (an unreadable one is quarantined: logged, set aside,
the others load). Store trouble (a failed commit, lost data found by the
``store_probe`` timer or at shutdown) is :class:`~cardhall.server.store_watch.StoreWatch`'s:
tables stall, and a store that lost its data gets every table and player
written again from memory before they resume or the process exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from redis.exceptions import RedisError

from cardhall.protocol.errors import ProtocolError
from cardhall.protocol.frames import Info
from cardhall.server.config import Settings
from cardhall.server.connection import Connection, Connections
from cardhall.server.creation import floor_think, sealed
from cardhall.server.limits import Limits, MemoryLimits
from cardhall.server.metrics import Metrics
from cardhall.server.players import Players, in_use
from cardhall.server.store.base import Checkpoint, LeaseLost, Store, StoredTable, StoreUnavailable
from cardhall.server.store.committer import GroupCommitter
from cardhall.server.store.memory import MemoryStore
from cardhall.server.store_watch import StoreWatch
from cardhall.server.stored import check_stored_options, current
from cardhall.server.table.actor import TableActor, now
from cardhall.server.table.core import BROKEN, CLOSED
from cardhall.server.table.inputs import BotDue, Close, Disconnect, Join, Request, ServiceStopping
from cardhall.server.table.machine import TableMachine
from cardhall.server.thinker import Thinker
from cardhall.server.topology import LocalTopology, Topology, new_table_id

if TYPE_CHECKING:
    from cardhall.server.table.host import RelayedPeer

log = logging.getLogger("cardhall.hall")

Data = dict[str, Any]
T = TypeVar("T")


class StoppedWaiting(Exception):
    """The process was asked to stop while the hall waited for its store at start."""


class Hall:
    """The service's state on ``store`` (default: in memory); ``topology``
    makes its :class:`~cardhall.server.topology.Topology` from the hall
    (default: :class:`~cardhall.server.topology.LocalTopology`, one process;
    :func:`cardhall.server.wiring.topology_for` picks by the store), then
    ``limits`` its :class:`~cardhall.server.limits.Limits` (default: in this
    process; :func:`cardhall.server.wiring.limits_for`)."""

    def __init__(self, settings: Settings, store: Store | None = None,
                 topology: Callable[[Hall], Topology] | None = None,
                 limits: Callable[[Hall], Limits] | None = None) -> None:
        self.settings = settings
        self.store = store if store is not None else MemoryStore(settings.event_buffer)
        self.tables: dict[str, TableActor] = {}
        self.connections = Connections()
        self.stalled: set[TableActor] = set()
        self.quarantined: dict[str, str] = {}
        self.recovery: dict[str, Any] = {}
        #: input log steps replayed while restoring tables (``server/STORAGE.md``, "The input log")
        self.replayed = 0
        self.metrics = Metrics(lambda: len(self.tables), lambda: len(self.connections), lambda: len(self.stalled))
        self.committer = GroupCommitter(self.store, self.metrics.committed, self.store_failed)
        self.thinker = Thinker(settings.bot_workers, waiting=self.metrics.bots_waiting.set)
        self.watch = StoreWatch(settings, self.store, self.committer, self.metrics, lambda: self.tables.values(),
                                self._full_checkpoint, self.stalled)
        self.accepting = True
        self.started = time.time()
        #: the join that made each (local connection id, table id) watch a table
        #: (sent again when the table moves to another node)
        self.joins: dict[tuple[int, str], Join] = {}
        #: where tables live: this process alone, or a node of a cluster on the store's Redis
        self.topology: Topology = (topology or LocalTopology)(self)
        #: tables, new players, chat and websockets per player or address (SPEC "Limits")
        self.limits: Limits = (limits or (lambda hall: MemoryLimits(hall.settings)))(self)
        self.players = Players(self.store, self.limits.new_player, settings.player_expiry)
        self._sweeper: asyncio.Task[None] | None = None
        #: :meth:`shutdown` ran to its end (the server's own shutdown calls it, then the app's lifespan)
        self._shut_down = False
        #: True once the process was asked to stop (set by the server): ends a wait for the store at start
        self.should_stop: Callable[[], bool] = lambda: False
        #: the process was asked to stop before the store answered at start: nothing ran, nothing to stop
        self.stopped_early = False
        self._held: list[TableActor] | None = None  # restored during start(): they start once all are

    # -- lifecycle ----------------------------------------------------------
    async def start(self) -> None:
        """Recover stored tables (quarantining unreadable ones) and start the
        sweeper: with a cluster, join it and claim this node's tables and the
        orphans; else every stored table. An unreachable store is waited for
        (logged), never a crash."""
        started = time.perf_counter()
        self._held = []  # so the tables' play does not slow the recovery down
        try:
            await self._wait_for_store(self.topology.start)
        except StoppedWaiting:
            log.info("stopped before the %s store answered: nothing was served", self.store.kind)
            self.stopped_early = True
            return
        finally:
            for table in self._held or ():
                table.start(restored=True)
            self._held = None
        for name, why in self.store.set_aside().items():  # index entries that are no table id
            self.quarantined.setdefault(name, why)
        self.metrics.quarantined.set(len(self.quarantined))
        seconds = time.perf_counter() - started
        self.recovery = {"tables": len(self.tables), "quarantined": len(self.quarantined),
                         "replayed": self.replayed, "seconds": round(seconds, 4)}
        self.metrics.recovered(len(self.tables), seconds)
        if self.tables or self.quarantined:
            log.info("recovered %d tables from the %s store in %.3f s (%d quarantined, %d log steps replayed)",
                     len(self.tables), self.store.kind, seconds, len(self.quarantined), self.replayed)
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep())
        self.watch.start()

    async def _wait_for_store(self, job: Callable[[], Awaitable[T]]) -> T:
        waited = 0.0
        while True:
            try:
                return await job()
            except (StoreUnavailable, RedisError, OSError) as exc:
                if self.should_stop():
                    raise StoppedWaiting from None
                if waited == 0.0 or waited >= 10.0:
                    log.error("cannot read the %s store (%s); waiting for it", self.store.kind, exc)
                    waited = 0.0
                await asyncio.sleep(1.0)
                waited += 1.0

    async def quarantine(self, table_id: str, reason: str, token: str | None = None) -> None:
        """Set an unreadable stored table aside (kept in the store for an operator); ``token``: our lease."""
        log.error("table %s quarantined: %s; it is not loaded, its data stays in the store (server/STORAGE.md)",
                  table_id, reason)
        self.quarantined[table_id] = reason
        self.metrics.quarantined.set(len(self.quarantined))
        try:
            await self.store.quarantine(table_id, reason, token)
            await self.limits.release_table(table_id)
        except (StoreUnavailable, LeaseLost) as exc:
            log.error("table %s: could not record the quarantine in the store: %s", table_id, exc)

    def stop_accepting(self) -> None:
        """Refuse new connections and tables; tell every table the service stops (its disconnects follow, G-4)."""
        self.accepting = False
        for table in self.tables.values():
            table.post(ServiceStopping())

    async def shutdown(self) -> None:
        """Stop taking work; with a cluster, hand every table to another live
        node first (final state written, lease released, claimed there); let
        tables finish what is queued; close sockets with 1001. A store that
        lost its data is written back first (:meth:`StoreWatch.write_back`).
        Once it has run to its end, a second call does nothing (it would wait
        in full for the stopped tables' mailboxes to drain)."""
        if self._shut_down:
            return
        if self.stopped_early:
            return
        await self.watch.write_back(timeout=max(2.0, self.settings.shutdown_grace * 2))
        self.accepting = False
        started = time.perf_counter()
        handed = await self.topology.hand_over(timeout=max(5.0, self.settings.shutdown_grace * 4))
        if handed:
            log.info("handed %d tables to other nodes in %.3f s", handed, time.perf_counter() - started)
        self.stop_accepting()
        for _ in range(50):  # let queued inputs and commits drain (at most ~0.5 s)
            if all(t.mailbox.empty() for t in self.tables.values()):
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0)
        for conn in list(self.connections):
            conn.close(1001, "server shutting down")
        waits = [c.finish() for c in list(self.connections)]
        if waits:
            await asyncio.wait([asyncio.ensure_future(w) for w in waits], timeout=self.settings.shutdown_grace)
        for _ in range(20):  # the disconnects, committed
            if all(t.quiet for t in self.tables.values()):
                break
            await asyncio.sleep(0.01)
        if self._sweeper is not None:
            self._sweeper.cancel()
        self.watch.stop()
        await self.watch.save_clocks()
        stopping = [t.stop() for t in self.tables.values()]
        if stopping:
            await asyncio.wait(stopping, timeout=self.settings.shutdown_grace)
        await self.topology.stop(list(self.tables.values()))  # those not handed over: free at once
        self.thinker.close()
        await self.store.close()
        self._shut_down = True

    # -- tables -------------------------------------------------------------
    async def create(self, spec: Mapping[str, Any], owner: str | None, address: str | None = None) -> Info:
        """A new table from a ``create_table`` map, placed by the cluster's
        policy (``placement``: on the least loaded live node, which may be
        another one) or here without a cluster; returns its public info.
        Raises ProtocolError (the request's checks: :func:`~cardhall.server.creation.check`)."""
        if not self.accepting:
            raise ProtocolError("shutting_down", "the server is stopping")
        placed = await self.topology.place(spec, owner, address)
        if not isinstance(placed, str):
            return placed  # created on the node the placement picked
        try:
            return (await self.create_here(spec, owner, address, placed)).machine.info(invite=True)  # the creator's
        finally:
            self.topology.created(placed)

    async def create_here(self, spec: Mapping[str, Any], owner: str | None, address: str | None = None,
                          table_id: str | None = None) -> TableActor:
        """A new table on this node from a ``create_table`` map (``game``,
        ``seats``, ``options``, ``bots``: :func:`~cardhall.server.creation.check`).
        ``owner``: the player creating it (``max_tables_per_player``);
        ``address``: the creating client's (``max_tables_per_address``, over
        the websocket and HTTP alike; None: an operator's, not counted), both
        counted by :attr:`limits` until the table closes; a client's table
        nobody owns or with only bots thinks at least ``bot_think_floor``
        (:mod:`cardhall.server.creation`); ``table_id``: the id the placement
        gave it (None: a new one). Raises ProtocolError (``too_many_tables``...);
        StoreUnavailable becomes ``unavailable``."""
        if not self.accepting:
            raise ProtocolError("shutting_down", "the server is stopping")
        game, seats, table_opts, game_opts, bots, privacy = await sealed(spec)  # the password: only its hash
        if address is not None:
            floor_think(table_opts, owner, seats, bots, self.settings.bot_think_floor)
        table_id = table_id or new_table_id()
        await self.limits.take_table(table_id, owner, address)
        try:
            token = await self.topology.lease_new(table_id)
            machine = TableMachine.create(table_id, game, seats, table_opts, game_opts, owner, bots, now(), privacy=privacy)
            table = self._actor(machine, address, floor=address is not None)  # an operator's table is exempt
            table.token = token
            # stored (and in a cluster's lobby) before anyone hears of it
            checkpoint = table.full_checkpoint()
            self.topology.dress(table, checkpoint, [])
            try:
                await self.commit(checkpoint)
            except (StoreUnavailable, LeaseLost):
                # the commit may have been written all the same (a reply lost, a replica that did not
                # acknowledge it): the table is taken out again, so no table nobody was told of is served
                with contextlib.suppress(StoreUnavailable, LeaseLost):
                    await self.store.delete_table(table_id, token)
                raise ProtocolError("unavailable", "the store cannot be written right now; retry") from None
        except BaseException:
            await self.limits.release_table(table_id)
            raise
        self.tables[table_id] = table
        table.start()
        return table

    async def restore(self, table_id: str, token: str | None = None) -> TableActor | None:
        """Serve the stored table ``table_id`` here (its lease is ``token``):
        a closed one is deleted, a broken or unreadable one quarantined;
        returns the started actor, or None. Raises StoreUnavailable when the
        store cannot be read; any failure while loading it quarantines it alone."""
        stored = await self.store.load_table(table_id)
        if stored is None:
            return None
        return await self.restore_stored(stored, token)

    async def restore_stored(self, item: StoredTable, token: str | None = None) -> TableActor | None:
        """Restore one stored table (see :meth:`restore`); a failure while loading it quarantines it alone."""
        try:
            return await self._restore_one(item, token)
        except (StoreUnavailable, LeaseLost, RedisError, OSError):
            raise
        except Exception as exc:
            log.exception("table %s: restoring it failed", item.id)
            self.tables.pop(item.id, None)
            await self.quarantine(item.id, f"restoring it failed: {exc!r}"[:300], token)
            return None

    def _actor(self, machine: TableMachine, creator: str | None, floor: bool = True) -> TableActor:
        """The actor of a created or restored table, with the settings' floor and checkpoint cadence."""
        settings = self.settings
        if floor:
            machine.unattended_think = settings.bot_think_floor
        machine.verify_log = settings.verify_replay
        return TableActor(self, machine, settings.event_buffer, creator=creator, full_every=settings.full_state_every)

    async def _restore_one(self, item: StoredTable, token: str | None) -> TableActor | None:
        item, steps = current(item)  # the last full state with its input log replayed
        self.replayed += steps
        data = item.data
        reason = item.error
        if data is not None:
            if data.get("status") == CLOSED:  # closed, but not yet deleted when its node stopped
                await self._delete(item.id, token)
                return None
            if data.get("status") == BROKEN:
                await self.quarantine(item.id, "the table was broken by a fault (logged when it happened)", token)
                return None
            try:
                check_stored_options(data.get("game"), data.get("table_options"), data.get("game_options"))
                table = self._actor(TableMachine.from_data(data, now()), None)
            except Exception as exc:
                reason = f"state cannot be restored: {exc!r}"[:300]
            else:
                table.token = token
                self.tables[table.id] = table
                self.limits.restored(table.id, table.machine.owner)
                if self._held is None:
                    table.start(restored=True)
                else:
                    self._held.append(table)
                return table
        await self.quarantine(item.id, reason or "unreadable", token)
        return None

    def get(self, table_id: Any) -> TableActor:
        """The open table ``table_id``; ProtocolError ``unknown_table`` otherwise."""
        table = self.tables.get(table_id) if isinstance(table_id, str) else None
        if table is None:
            raise ProtocolError("unknown_table", f"no open table {table_id!r}")
        return table

    def close_table(self, table_id: str, reason: str) -> None:
        """Ask a table to close (operator, or G-9 sweeping)."""
        self.get(table_id).post(Close(reason))

    # -- the tables' host (TableHost) ------------------------------------------------
    def commit(self, checkpoint: Checkpoint) -> Awaitable[None]:
        """Write a table's checkpoint through the group committer."""
        return self.committer.commit(checkpoint)

    def events_since(self, table: str, seq: int, upto: int) -> Awaitable[list[tuple[int, Data]] | None]:
        """The store's stored events of ``table`` after ``seq`` up to ``upto``."""
        return self.store.events_since(table, seq, upto)

    def peer(self, key: Hashable) -> Connection | None:
        """The open connection with id ``key``."""
        return self.connections.get(key)

    def remote_peer(self, table: str, key: Hashable) -> RelayedPeer | None:
        """Subscriber ``key`` of ``table`` on another node (None: not such a subscriber)."""
        return self.topology.peer(table, key)

    def dress(self, table: TableActor, checkpoint: Checkpoint, records: list[Any]) -> None:
        """The topology's part of ``table``'s checkpoint (a cluster's token, publication, lobby info)."""
        self.topology.dress(table, checkpoint, records)

    def written(self, table: TableActor) -> None:
        """``table``'s dressed checkpoint is written."""
        self.topology.written(table)

    async def lease_lost(self, table: TableActor) -> bool:
        """``table``'s checkpoint was refused: claim its lease again if free and unowned since, else drop it."""
        return await self.topology.lease_lost(table)

    def table_closed(self, table: TableActor) -> None:
        """Called by a table's actor once its ``closed`` event is out."""
        self.tables.pop(table.id, None)
        for key in table.machine.subscribers:
            conn = self.connections.get(key)
            if conn is not None:
                conn.tables.discard(table.id)
        self.topology.forget(table.id)
        asyncio.get_running_loop().create_task(self._delete(table.id, table.token))
        log.info("table %s closed", table.id)

    async def _delete(self, table_id: str, token: str | None = None) -> None:
        await self.limits.release_table(table_id)  # closed: no longer open, whether or not deleted now
        try:
            await self.store.delete_table(table_id, token)
        except LeaseLost as exc:
            log.warning("closed table %s not deleted: %s", table_id, exc)
        except StoreUnavailable as exc:  # its stored state says closed: the next start deletes it
            log.warning("closed table %s not deleted from the store yet: %s", table_id, exc)

    def table_broken(self, table: TableActor) -> None:
        """Called by a table that broke (logged where it happened): it stays open, ``broken`` in the lobby
        and counted by ``/healthz``, until it is closed (an operator, or G-9's sweeping)."""
        self.metrics.broken.inc()

    def table_unwritable(self, table: TableActor, reason: str) -> None:
        """Called by a table whose checkpoints the store refuses (not for being down): its stored copy is
        older than the table, so it is quarantined in the store now (never restored by any node, kept for
        an operator); this node still serves it, broken, until it is closed."""
        asyncio.get_running_loop().create_task(self.quarantine(table.id, reason))

    def broken_tables(self) -> int:
        """How many tables served here are broken."""
        return sum(1 for t in self.tables.values() if t.machine.status == BROKEN)

    # -- store trouble ------------------------------------------------------
    def table_stalled(self, table: TableActor, exc: StoreUnavailable) -> None:
        """Called by a table whose checkpoint could not be written."""
        self.stalled.add(table)
        self.store_failed(exc)

    def table_unstalled(self, table: TableActor) -> None:
        """Called by a stalled table once everything it held is written."""
        self.stalled.discard(table)

    def think(self, table: TableActor, due: BotDue) -> None:
        """A bot's turn at ``table``: queued with this node's others (:class:`Thinker`)."""
        self.thinker.submit(table, due)

    @property
    def store_up(self) -> bool:
        """False from a failed commit or probe until the store answers again."""
        return self.watch.up

    @property
    def store_error(self) -> str | None:
        """Why the store is unavailable, while it is."""
        return self.watch.error

    def store_failed(self, exc: BaseException) -> None:
        """A commit failed: if the store is unreachable or lost its data, stall the tables and watch it."""
        self.watch.failed(exc)

    def _full_checkpoint(self, table: TableActor) -> Checkpoint:
        """Everything ``table`` holds (to fill a store that lost its data), with its lease token and lobby entry."""
        checkpoint = table.full_checkpoint()
        self.topology.rewriting(table, checkpoint)
        return checkpoint

    async def _sweep(self) -> None:
        """Every ``sweep_interval``: G-9's close of idle tables, an absent owner's pass (``machine.sweep_due``)."""
        while True:
            await asyncio.sleep(self.settings.sweep_interval)
            mono, wall = time.monotonic(), time.time()
            for table in list(self.tables.values()):
                for due in table.machine.sweep_due(mono, wall):  # G-9's close, an absent owner's pass
                    table.post(due)
            await self.limits.sweep(mono)
            await self.players.sweep(in_use((c.player for c in self.connections), (
                (t.machine.owner, *(o.player for o in t.machine.seats.values())) for t in self.tables.values())), mono)

    # -- connections --------------------------------------------------------
    def latest_seq(self, table_id: str) -> int | None:
        """The newest ``seq`` of ``table_id`` known here: the table's own when this node serves it, the newest
        relayed one when another node does, None when neither (the rate limit's turn credit, SPEC "Limits")."""
        table = self.tables.get(table_id)
        return table.machine.seq if table is not None else self.topology.latest(table_id)

    def connection_dropped(self, conn: Connection, reason: str) -> None:
        """A connection went away: every table it joined hears of it."""
        self.metrics.dropped.labels(reason).inc()
        self.disconnect(conn)

    def disconnect(self, conn: Connection) -> None:
        """``conn`` is closed: forget it; every table it joined hears of it."""
        self.connections.discard(conn)
        for table_id in list(conn.tables):
            self.joins.pop((conn.id, table_id), None)
            table = self.tables.get(table_id)
            if table is not None:
                table.post(Disconnect(conn.id))
            else:
                self.topology.disconnect(conn, table_id)

    async def post(self, conn: Connection, table_id: str, request: Request) -> None:
        """Hand ``request`` of local ``conn`` to table ``table_id``: :meth:`post_here`, else through the
        topology to its owner. Raises ProtocolError ``unknown_table`` or ``unavailable``."""
        if not self.post_here(conn, table_id, request):
            await self.topology.route(conn, table_id, request)

    def post_here(self, conn: Connection, table_id: str, request: Request) -> bool:
        """Hand ``request`` of local ``conn`` to the mailbox of ``table_id`` if this node serves it (True)."""
        table = self.tables.get(table_id)
        if table is None:
            return False
        if isinstance(request, Join):  # so a disconnect before the join is taken reaches the table
            self.watching(conn, table_id, request)
        table.post(request)
        return True

    def watching(self, conn: Connection, table_id: str, join: Join) -> None:
        """``conn`` joins ``table_id`` with ``join``: kept until it leaves or closes (sent again when the table moves)."""
        conn.tables.add(table_id)
        self.joins[(conn.id, table_id)] = join
