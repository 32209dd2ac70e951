"""One node of a cluster: its leases, its heartbeat, routing, failover, handover.

Every ``cardhall serve --redis URL`` is a node; nodes with the same Redis (a
standalone Redis, or a Redis Cluster) and key prefix form a cluster
(``deploy/README.md``, "On several machines"). The node's clients are the
store's (``store.conn``: ``client``, ``once``, the per-master subscribers),
so it works on either kind through one code path: every script and
transaction it runs touches one hash slot, and what spans tables is a
non-transactional pipeline of single-key commands (``server/STORAGE.md``,
"Cluster").

* **Registry**: every ``lease_renew`` seconds the node writes its heartbeat
  (id, address, tables, connections) with Redis's clock; live nodes are those
  whose heartbeat is younger than ``lease_ttl``.
* **Leases** (:mod:`.scripts`): a table is served by the node holding its
  lease (``lease_ttl`` seconds, renewed every ``lease_renew``). A claim is one
  script: the lease taken only if free, the table's fencing epoch
  incremented, the owner change published. Every write of the table checks
  the token in its script; a node that finds a lease lost (a renewal or a
  commit refused) drops the table at once, unpublished, and its own
  connections watching it join the new owner.
* **Failover**: every half ``lease_renew`` each node looks for stored tables
  without a lease (their owner died or stopped) and claims its share; a
  request for such a table claims it at once. A node started again with the
  id it had takes back the tables still leased under that id.
* **Routing**: a request for a table owned elsewhere goes to its owner's
  inbox; everything of the table for this node (each commit's events and
  view changes, the replies) comes on the table's own channel in the order
  the table produced it (:mod:`.relay`, :mod:`.peers`, :mod:`.listener`).
  A connection that lost events or was forgotten by the owner resumes
  (:meth:`_check_relayed`, a lapsed heartbeat: :meth:`heartbeat`).
* **Handover** (SIGTERM): each table's last state is written, its lease
  released and another live node asked to claim it, before the websockets
  close with 1001.
* **Placement and rebalancing**: a new table goes to the node the PLACE
  script picks (:meth:`Registry.place`); a node above its even share hands
  single tables to the nodes below it (:mod:`.rebalance`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from redis import exceptions as rexc

from cardhall.protocol.errors import ProtocolError
from cardhall.server.cluster import leaving
from cardhall.server.cluster.calls import Calls
from cardhall.server.cluster.departures import Departures
from cardhall.server.cluster.handover import Parts, hand_over, move
from cardhall.server.cluster.host import NodeHost
from cardhall.server.cluster.leases import NEW, TAKEOVER, Leases, token_epoch
from cardhall.server.cluster.listener import Listener
from cardhall.server.cluster.naming import default_node_id, jittered, meant_for
from cardhall.server.cluster.outbox import Outbox
from cardhall.server.cluster.peers import Owned
from cardhall.server.cluster.rebalance import Rebalancer
from cardhall.server.cluster.registry import Registry
from cardhall.server.cluster.router import Router
from cardhall.server.store.base import StoreEmpty, StoreUnavailable
from cardhall.server.store.redis import RedisStore
from cardhall.server.store.redis_conn import redis_trouble

if TYPE_CHECKING:
    from cardhall.server.table.actor import TableActor

log = logging.getLogger("cardhall.cluster")

Data = dict[str, Any]

#: orphaned tables claimed at once in a scan
CLAIM_BATCH = 16


class ClusterNode:
    """This process as a node of the cluster on ``store``'s Redis (see the module docstring)."""

    def __init__(self, host: NodeHost, store: RedisStore) -> None:
        settings = host.settings
        self.host = host
        self.store = store
        self.keys = store.keys
        self.client = store.client
        self.id = settings.node_id or default_node_id()
        self.nonce = secrets.token_hex(6)
        ttl_ms = int(settings.lease_ttl * 1000)
        self.renew_every = settings.lease_renew
        self.address = settings.advertise or f"http://{settings.host}:{settings.port}"
        store.lease_ms = ttl_ms
        self.leases = Leases(self.client, self.keys, self.id, self.nonce, ttl_ms)
        self.registry = Registry(self.client, self.keys, self.id, ttl_ms)
        self.outbox = Outbox(store.once, store.conn.refresh)  # a publish that timed out is lost, never sent twice
        self.router = Router(host, self.id, self.keys, self.leases, self.outbox,
                             self._claimed, self._subscribe, self._unsubscribe)
        self.listener = Listener(store.conn, self.keys, self.id, self._inbox, self.router)
        self.owned = Owned(self.outbox, self.keys, host.tables)
        self.stopping = False
        self.claims = 0
        self.calls = Calls(host, self.id, self.router.send, self.created)
        self.rebalancer = Rebalancer(self.id, settings.rebalance_rate, settings.rebalance_hold, self._serving,
                                     lambda: host.tables, self._local_viewers, self.move, self.heartbeat,
                                     3 * self.renew_every, 2 * self.renew_every, lambda: self.registry.placing)
        self._tasks: list[asyncio.Task[Any]] = []
        self._claiming: set[str] = set()
        self._beats = 0
        self._reclaims: dict[str, asyncio.Lock] = {}
        #: table -> (when its old owner released it: Unix s, moved by rebalancing)
        self._handovers: dict[str, tuple[float, bool]] = {}
        #: orphaned table -> when this node first saw it (monotonic s)
        self._orphans: dict[str, float] = {}
        self.departures = Departures(self.id, ttl_ms / 1000)
        #: claims handed to this node restored at once at most (each holds Redis connections)
        self._taking = asyncio.Semaphore(CLAIM_BATCH)
        #: tables placed here whose creation is over, reported with the next heartbeat
        self._placed: list[str] = []

    @property
    def live(self) -> dict[str, Data]:
        """The live nodes at the last heartbeat: id -> heartbeat."""
        return self.registry.live

    # -- life ------------------------------------------------------------------
    async def start(self) -> None:
        """Join the cluster: move legacy keys, subscribe the inbox, heartbeat,
        take back this id's tables and the orphans, start the loops. Raises
        RedisError/OSError/StoreUnavailable when Redis cannot be reached (the
        hall waits and calls it again: nothing runs until it succeeds)."""
        await self.store.migrate_keys()
        if not await self.store.probe():
            await self.store.rewrite([])  # a new Redis: mark it as holding cardhall data
        await self.registry.check_unique(self.nonce, self.renew_every)
        await self.listener.open()
        await self.heartbeat()
        loop = asyncio.get_running_loop()
        every = self.renew_every
        # the leases claimed first are renewed while the rest are claimed and restored (a long start
        # must not let them expire under the tables that already play)
        if not any(task.get_name() == "cluster leases" for task in self._tasks):  # start() may be called again
            self._tasks.append(loop.create_task(self._loop(self._renew, lambda: every), name="cluster leases"))
        await self._scan(takeover=True)
        self.outbox.start()
        self._tasks += [loop.create_task(self.listener.run(), name="cluster listener"),
                        loop.create_task(self._loop(self.heartbeat, lambda: every), name="cluster heartbeat"),
                        loop.create_task(self._loop(self._scan, lambda: jittered(every / 2)), name="cluster scan"),
                        loop.create_task(self._loop(self._tick, lambda: 0.25), name="cluster relay tick"),
                        loop.create_task(self._loop(self._check_relayed, lambda: every), name="cluster relay check")]
        rate = self.host.settings.rebalance_rate
        if rate > 0:
            self._tasks.append(loop.create_task(self._loop(self._rebalance, lambda: 1 / rate), name="cluster rebalance"))

    async def stop(self, tables: list[TableActor] | None = None) -> None:
        """Leave the cluster (after :meth:`hand_over`): the leases of
        ``tables`` (not handed over) are released, so other nodes claim them
        at once; the heartbeat is removed."""
        for table in tables or ():
            with contextlib.suppress(rexc.RedisError, OSError):
                await self.release_lease(table)
        for task in self._tasks:
            task.cancel()
        await self.outbox.stop()
        try:
            await self.registry.leave()
        except (rexc.RedisError, OSError):
            pass
        await self.listener.close()

    async def _loop(self, job: Callable[[], Awaitable[None]], every: Callable[[], float]) -> None:
        while True:
            await asyncio.sleep(every())
            try:
                await job()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if isinstance(exc, StoreUnavailable) or redis_trouble(exc):
                    log.debug("cluster %s: redis unavailable: %s", getattr(job, "__name__", job), exc)
                else:
                    log.exception("cluster job %s failed", getattr(job, "__name__", job))

    async def _subscribe(self, channel: str) -> None:
        await self.listener.subscribe(channel)

    async def _unsubscribe(self, channel: str) -> None:
        await self.listener.unsubscribe(channel)

    async def _tick(self) -> None:
        self.router.tick()

    async def _check_relayed(self) -> None:
        """Compare each relayed table's stored events with what this node
        delivered: a connection that lost events (a message lost while this
        node or Redis was away) resumes from its cursor."""
        tables = list(self.router.relayed)
        if not tables:
            return
        async with self.client.pipeline(transaction=False) as pipe:  # tables of many slots: no MULTI
            for table in tables:
                pipe.xrevrange(self.keys.events(table), count=1)  # its stream's newest event
            tops = await pipe.execute()
        self.router.behind({t: int(top[0][0].split(b"-")[0]) if top else None for t, top in zip(tables, tops)})

    # -- registry ----------------------------------------------------------------
    def heartbeat_info(self) -> Data:
        """What this node says of itself: id, address, pid, tables, connections."""
        host = self.host
        return {"id": self.id, "nonce": self.nonce, "address": self.address, "host": socket.gethostname(),
                "pid": os.getpid(),
                "tables": len(host.tables),
                "connections": len(host.connections), "table_ids": sorted(host.tables)[:1000],
                "stopping": self.stopping, "started": round(host.started, 3)}

    async def heartbeat(self) -> None:
        """Write this node's heartbeat and read the live nodes (:attr:`live`);
        when a node left, forget its connections at this node's tables."""
        before = set(self.registry.live)
        placed, self._placed = self._placed, []  # taken with the table count: each placed table counted once
        try:
            lapsed = await self.registry.beat(self.heartbeat_info(), placed)
        except BaseException:
            self._placed += placed
            raise
        if lapsed and self._beats:
            # the other nodes may have counted this one gone and forgotten its connections at
            # their tables: every connection watching a table owned elsewhere resumes
            log.warning("node %s: its heartbeat had lapsed; its relayed connections resume", self.id)
            self.router.resync()
        self._beats += 1
        if self.departures.seen(before, self.registry.live) or self._beats % 10 == 0:
            self.prune()

    def prune(self) -> None:
        """Subscribers of this node's tables whose node has been missing from
        the registry for a TTL are disconnected (:mod:`.departures`), and the
        handles on remote subscribers that left are dropped."""
        self.departures.prune(self.host.tables, self.registry.live)
        self.owned.prune(self.host.tables)

    async def place(self, table: str) -> str:
        """The node new table ``table`` goes to (``placement``:
        :meth:`Registry.place`; this one while stopping, or when Redis cannot
        be asked: the creation then says so itself)."""
        if self.stopping or self.host.settings.placement == "local":
            return self.id
        try:
            return await self.registry.place(table) or self.id
        except Exception as exc:
            if not redis_trouble(exc):
                raise
            return self.id

    def created(self, table: str) -> None:
        """The creation of ``table``, placed here, is over (made or refused):
        the next heartbeat reports it (:meth:`Registry.beat`)."""
        self._placed.append(table)

    # -- rebalancing ---------------------------------------------------------------
    def _serving(self) -> dict[str, Data]:
        return {n: self.live[n] for n in self.registry.serving()}

    def _local_viewers(self, table: TableActor) -> int:
        return sum(1 for key in table.machine.subscribers.viewers if self.host.connections.get(key) is not None)

    async def _rebalance(self) -> None:
        if not self.stopping and self.id in self.live:
            await self.rebalancer.step()

    async def move(self, table: TableActor, to: str) -> bool:
        """Hand ``table`` to node ``to`` while this node goes on
        (:func:`~cardhall.server.cluster.handover.move`)."""
        return await move(self.handover_parts(), table, to, self.owned)

    # -- leases ------------------------------------------------------------------
    async def claim(self, table: str, takeover: bool = False) -> TableActor | None:
        """Claim ``table`` and serve it here (restored from its checkpoint);
        None when another node holds it, it is not stored, or it cannot be read."""
        if table in self.host.tables or table in self._claiming:
            return self.host.tables.get(table)
        self._claiming.add(table)
        try:
            token = await self.leases.claim(table, TAKEOVER if takeover else "0")
            if token is None:
                return None
            self.claims += 1
            self.router.owned_here(table)
            actor = await self.host.restore(table, token)
            released = self._handovers.pop(table, None)
            if actor is not None:
                self.router.adopt(table)
                if released is not None and released[1]:
                    self.rebalancer.arrived(table)
                if released is not None:  # handed over: the pause, from stopping there to serving here
                    self.host.metrics.handover(max(0.0, time.time() - released[0]), rebalanced=released[1])
            return actor
        finally:
            self._claiming.discard(table)

    async def _claimed(self, table: str) -> bool:
        return await self.claim(table) is not None

    async def lease_new(self, table: str) -> str:
        """A lease for a table being created here (not stored yet); raises
        ProtocolError ``unavailable`` when Redis cannot be reached."""
        try:
            token = await self.leases.claim(table, NEW)
        except Exception as exc:
            if not redis_trouble(exc):
                raise
            raise ProtocolError("unavailable", "the store cannot be written right now; retry") from None
        if token is None:
            raise ProtocolError("unavailable", "the store cannot be written right now; retry")
        self.router.owned_here(table)
        return token

    async def _renew(self) -> None:
        owned = [t for t in self.host.tables.values() if t.token is not None]
        lost = await self.leases.renew([(t.id, t.token) for t in owned if t.token is not None])
        for index in lost:
            table = owned[index]
            if self.host.tables.get(table.id) is table:
                try:
                    await self.reclaim_or_drop(table)
                except StoreEmpty as exc:  # every table is written again (the hall's watcher), leases first
                    self.host.store_failed(exc)
                    return

    async def reclaim_or_drop(self, table: TableActor) -> bool:
        """``table``'s lease is not its token any more. If it is free and its
        epoch is still ours (it expired while Redis or this node was away and
        nobody owned it since), claim it again: nothing was written meanwhile,
        so this node's state is the newest. Otherwise drop it. Returns True
        when the table is this node's again; raises StoreUnavailable when
        Redis cannot be asked (the table stalls and asks again later)."""
        lock = self._reclaims.setdefault(table.id, asyncio.Lock())
        async with lock:  # the renewal and a refused commit may both ask
            token = table.token
            if token is None or self.host.tables.get(table.id) is not table:
                return False
            try:
                if await self.leases.current(table.id) == token:
                    return True  # claimed again meanwhile
                if not await self.store.probe():  # Redis lost its data: the hall writes every table again
                    raise StoreEmpty("the store holds no cardhall data")
                again = await self.leases.claim(table.id, expected_epoch=token_epoch(token))
            except Exception as exc:
                if not redis_trouble(exc):
                    raise
                raise StoreUnavailable(f"redis: {exc}") from None
        if again is not None:
            table.token = again
            log.warning("table %s: lease expired unowned; claimed again", table.id)
            return True
        log.warning("table %s: lease lost to another node; dropping it", table.id)
        self.lost(table)
        return False

    def lost(self, table: TableActor) -> None:
        """Drop ``table`` (its lease is another's): its actor ends, nothing
        it holds is published, every request it took or held unanswered gets
        ``unavailable``, and this node's connections watching it join its
        new owner with ``since``: what they were last delivered."""
        if self.host.tables.get(table.id) is not table:
            return
        unanswered = table.drop()
        self.host.tables.pop(table.id, None)
        self.forget_peers(table.id)
        self.router.forget_owner(table.id)
        leaving.refuse(self.host, self.owned, table, unanswered)
        leaving.follow(self.host, self.router, table)

    async def _scan(self, takeover: bool = False) -> None:
        """Claim the tables nobody holds (failover). Each orphan is meant for
        one live node (rendezvous hashing over the live nodes that did not
        hold it), so a dead node's tables spread over the others and each
        goes at its node's first scan; one still unclaimed a renewal period
        after it was first seen is claimed by whoever sees it (its node may
        be gone too). With ``takeover`` (at start) every one found is claimed."""
        if self.stopping:
            return
        ids = [t for t in await self.leases.orphans(takeover) if t not in self.host.tables]
        if not ids:
            self._orphans.clear()
            return
        mine = ids
        if not takeover:
            await self.heartbeat()  # who is alive now
            found = set(ids)
            # a node whose last heartbeat lists one of them lost it (its heartbeat may outlive its leases)
            nodes = [n for n in self.registry.serving()
                     if n == self.id or not found.intersection(self.live[n].get("table_ids", ()))] or [self.id]
            now = time.monotonic()
            self._orphans = {t: self._orphans.get(t, now) for t in ids}
            mine = [t for t in ids if meant_for(t, nodes) == self.id or now - self._orphans[t] > self.renew_every]
        started = time.perf_counter()
        claimed = 0
        for start in range(0, len(mine), CLAIM_BATCH):  # side by side: each claim is a few round trips
            done = await asyncio.gather(*(self.claim(t, takeover=takeover) for t in mine[start:start + CLAIM_BATCH]))
            claimed += sum(1 for actor in done if actor is not None)
        if claimed:
            log.info("node %s claimed %d tables in %.3f s", self.id, claimed, time.perf_counter() - started)

    # -- the owner's side -----------------------------------------------------------
    def forget_peers(self, table: str) -> None:
        """``table`` closed or left this node: what this node kept for it goes."""
        self.owned.forget(table)
        self._reclaims.pop(table, None)

    # -- requests and connections --------------------------------------------------------
    async def owners(self, tables: list[str]) -> dict[str, str | None]:
        """The owner node of each table (None: no lease right now)."""
        return await self.leases.owners(tables)

    # -- calls to other nodes ------------------------------------------------------------
    async def call(self, node: str, op: str, args: list[Any]) -> Any:
        """Run ``op`` on ``node`` (:meth:`Calls.call`)."""
        return await self.calls.call(node, op, args)

    # -- the listener -------------------------------------------------------------------
    def _inbox(self, data: list[Any]) -> None:
        kind = data[0]
        if kind == "in":
            self.router.on_input(data[1], data[2])
        elif kind == "out":
            self.router.on_out(data)
        elif kind == "moved":
            self.router.forget_owner(data[1])
        elif kind == "claim":
            rebalanced = len(data) > 3 and data[3] == "rebalance"
            asyncio.get_running_loop().create_task(self._take_over(data[1], data[2], rebalanced))
        elif kind == "call":
            self.calls.answer(data[1], data[2], data[3], data[4])
        elif kind == "ret":
            self.calls.returned(data[1], data[2], data[3])

    # -- handover ---------------------------------------------------------------------------
    async def _take_over(self, table: str, stopped: float, rebalanced: bool = False) -> None:
        self._handovers[table] = (stopped, rebalanced)
        async with self._taking:  # a stopping node sends all its claims at once: restore a few at a time
            actor = await self.claim(table)
        if actor is not None and rebalanced:
            # the givers plan their next move on the heartbeats: this node's count, now
            with contextlib.suppress(rexc.RedisError, OSError):
                await self.heartbeat()

    async def hand_over(self, timeout: float) -> int:
        """Hand every table of this node to other live nodes (SIGTERM): see
        :func:`~cardhall.server.cluster.handover.hand_over`."""
        self.stopping = True
        try:
            await self.heartbeat()
        except (rexc.RedisError, OSError):
            return 0
        others = [n for n in self.registry.serving() if n != self.id]
        return await hand_over(self.handover_parts(), others, timeout)

    def handover_parts(self) -> Parts:
        """What a handover works with."""
        return Parts(self.host, self.store, self.leases, self.router, self.live, self.forget_peers)

    async def release_lease(self, table: TableActor) -> bool:
        """Release ``table``'s lease as it is (the service stops); False when it was not ours."""
        token = table.token
        if token is None:
            return False
        table.token = None
        return await self.leases.release(table.id, token)

    def describe(self) -> Data:
        """What ``/healthz`` shows of the cluster."""
        return {"node": self.id, "address": self.address, "live_nodes": len(self.live),
                "relayed_tables": len(self.router.relayed), "claims": self.claims,
                "resumes": sum(rt.resumes for rt in self.router.relayed.values())}
