"""A real Redis Cluster for tests: the one harness,
:mod:`cardhall.clients.bench.redis_cluster_procs` (``redis-server`` processes
in cluster mode on free loopback ports, made one cluster by ``redis-cli
--cluster create``, waited for until whole), on the tests' ports, with the
faults a test inflicts on it; and cardhall nodes (tests/cluster/harness.py) on it.

* :class:`RedisClusterProcs`: three masters and a replica each by default,
  ports from :func:`tests.server.conftest.free_port` (never handed out twice:
  a killed server's ports stay its own). Faults: :meth:`~RedisClusterProcs.kill`
  (SIGKILL) and :meth:`~RedisClusterProcs.wait_promoted` (until the cluster
  itself made the dead master's replica a master),
  :meth:`~RedisClusterProcs.restart`, :meth:`~RedisClusterProcs.add_replica`,
  :meth:`~RedisClusterProcs.flushall` (one shard loses its data; its replica
  follows), :meth:`~RedisClusterProcs.migrate_slot` (one slot moved to
  another master, the steps of ``redis-cli --cluster reshard``).
* :class:`RedisProc`: one cluster-mode ``redis-server`` on the tests' ports.
* :class:`CardhallOnRedisCluster`: :class:`tests.cluster.harness.Cluster`
  (nodes ``n1..nN`` and nginx) whose Redis is a :class:`RedisClusterProcs`;
  node ``i`` is given the URL of master ``i`` (any master's URL will do).
* :class:`SlotRouter`: what :class:`tests.cluster.driver.Driver` checks with
  (``db.pipeline(transaction=True)`` of one table's keys, ``db.mget``)
  served from the cluster: each MULTI sent to the master of its slot, the
  slot map read again after a redirection, a failover or a migration.

``python -m tests.cluster.redis_cluster`` starts one by hand and prints it
until Ctrl-C. Times are in seconds throughout.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import redis
import redis.asyncio as aioredis

from cardhall.clients.bench.redis_cluster_procs import RedisCluster, RedisNode, Shard, wait_until
from cardhall.server.store import keys
from tests.cluster.harness import Cluster
from tests.server.conftest import REDIS_SERVER, free_port

#: the redis-cli binary (``CARDHALL_REDIS_CLI`` overrides)
REDIS_CLI = os.environ.get("CARDHALL_REDIS_CLI") or shutil.which("redis-cli")


def slot_of_table(table: str) -> int:
    """The hash slot of every key of ``table`` (its partition's tag)."""
    return keys.slot(keys.tag(keys.partition_of(table)))


class RedisProc(RedisNode):
    """A :class:`~cardhall.clients.bench.redis_cluster_procs.RedisNode` on the tests' ports."""

    def __init__(self, binary: str, root: Path, node_timeout: int, extra_args: Sequence[str] = ()) -> None:
        super().__init__(binary, root, node_timeout, extra_args, free_port=free_port)


class RedisClusterProcs(RedisCluster):
    """The harness's :class:`~cardhall.clients.bench.redis_cluster_procs.RedisCluster`
    on the tests' ports and binaries (``CARDHALL_REDIS_SERVER``,
    ``CARDHALL_REDIS_CLI``): ``masters`` masters with ``replicas`` replicas each,
    ``--cluster-node-timeout`` ``node_timeout`` ms, ``extra_args`` for each
    server; and the faults of the module docstring."""

    def __init__(self, masters: int = 3, replicas: int = 1, *, node_timeout: int = 1000, binary: str | None = None,
                 cli: str | None = None, extra_args: Sequence[str] = ()) -> None:
        super().__init__(masters, replicas, node_timeout=node_timeout, server=binary or REDIS_SERVER,
                         cli=cli or REDIS_CLI, extra_args=extra_args, free_port=free_port)
        self._killed: dict[int, Shard] = {}

    def master_of_table(self, table: str) -> Shard:
        """The master holding ``table``'s keys (its partition's slot)."""
        return self.master_of(slot_of_table(table))

    # -- faults ------------------------------------------------------------------------
    def kill(self, port: int) -> None:
        """SIGKILL the server on ``port`` (what it served is remembered for :meth:`wait_promoted`)."""
        for shard in self.masters():
            if shard.port == port:
                self._killed[port] = shard
        self.proc(port).kill()

    def wait_promoted(self, dead_port: int, timeout: float = 30.0) -> Shard:
        """After :meth:`kill` of the master on ``dead_port``: until another
        server (its replica, promoted by the cluster itself) is the master of
        every slot it served, and the cluster is whole again (:meth:`problems`).
        Returns the new master."""
        dead = self._killed[dead_port]
        found: list[Shard] = []

        def check() -> str | None:
            owners = {self.master_of(a).port for a, _ in dead.slots} | {self.master_of(b).port for _, b in dead.slots}
            if owners == {dead_port} or len(owners) != 1:
                return f"slots {dead.slots} still on {sorted(owners)}"
            found[:] = [self.master_of(dead.slots[0][0])]
            return self.problems()

        wait_until(f"a replica of {dead_port} promoted", check, timeout)
        return found[0]

    def restart(self, port: int, timeout: float = 30.0) -> None:
        """Start the killed server on ``port`` again (same ports, same
        ``nodes-<port>.conf``, no data): a master that was failed over rejoins
        as a replica of the master that took its place. Returns once the
        cluster is whole again (its link up)."""
        p = self.proc(port)
        assert not p.alive, f"{port} is alive"
        p.start()
        self.wait_ok(timeout)

    def add_replica(self, master_port: int, timeout: float = 30.0) -> Shard:
        """One more server, made a replica of the master on ``master_port``
        (``CLUSTER MEET``, then ``CLUSTER REPLICATE`` once it knows the
        master); returns once the cluster is whole again (its link up)."""
        master = next(s for s in self.masters() if s.port == master_port)
        p = self.add_node()
        p.start()
        wait_until(f"redis-server on {p.port} answers", lambda: None if p.pong() else "no PONG", timeout)
        p.call("CLUSTER", "MEET", "127.0.0.1", master_port, self.proc(master_port).bus)
        wait_until(f"{p.port} knows {master_port}", lambda: None if any(
            line.id == master.id and not line.failed for line in self.view(p.port)) else "not yet", timeout)
        p.call("CLUSTER", "REPLICATE", master.id)
        wait_until(f"{p.port} a replica of {master_port} everywhere", lambda: self.problems() or (
            None if any(s.port == p.port and s.master_port == master_port for s in self.replicas()) else "not yet"),
            timeout)
        return next(s for s in self.replicas() if s.port == p.port)

    def flushall(self, port: int) -> None:
        """``FLUSHALL`` on the master on ``port``: its shard loses every key;
        returns once its replicas applied it (``WAIT``)."""
        p = self.proc(port)
        assert p.call("FLUSHALL") in ("OK", True)
        replicas = sum(1 for s in self.replicas() if s.master_port == port)
        if replicas:
            p.call("WAIT", replicas, 5000)

    def migrate_slot(self, slot: int, to_port: int, batch: int = 100, pause: float = 0.0) -> int:
        """Move ``slot`` to the master on ``to_port`` as ``redis-cli --cluster
        reshard`` does: ``CLUSTER SETSLOT IMPORTING`` on the target,
        ``MIGRATING`` on the source, ``MIGRATE ... KEYS`` in batches of what
        ``CLUSTER GETKEYSINSLOT`` lists, then ``CLUSTER SETSLOT NODE`` on the
        target, the source and every other master; then waits until the
        cluster agrees (:meth:`problems`). ``pause``: seconds between two
        batches (the slot stays half moved meanwhile: commands on it get
        ``ASK`` or ``TRYAGAIN``). Returns the keys moved."""
        source = self.master_of(slot)
        target = next(s for s in self.masters() if s.port == to_port) if to_port != source.port else None
        if target is None:
            raise ValueError(f"slot {slot} is on {to_port} already, or {to_port} is not a master")
        src, dst = self.proc(source.port), self.proc(target.port)
        dst.call("CLUSTER", "SETSLOT", slot, "IMPORTING", source.id)
        src.call("CLUSTER", "SETSLOT", slot, "MIGRATING", target.id)
        moved = 0
        while True:
            names = src.call("CLUSTER", "GETKEYSINSLOT", slot, batch)
            if not names:
                break
            src.call("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *names)
            moved += len(names)
            if pause:
                time.sleep(pause)
        dst.call("CLUSTER", "SETSLOT", slot, "NODE", target.id)
        src.call("CLUSTER", "SETSLOT", slot, "NODE", target.id)
        for s in self.masters():
            if s.port not in (source.port, target.port):
                self.proc(s.port).call("CLUSTER", "SETSLOT", slot, "NODE", target.id)
        wait_until(f"slot {slot} on {to_port} everywhere",
                   lambda: self.problems() if self.master_of(slot).port == to_port else "not yet", 10.0)
        return moved


class SlotRouter:
    """Stands for the Redis client of :class:`tests.cluster.driver.Driver`'s
    checks on a cluster: ``pipeline(transaction=True)`` (commands of one slot,
    sent as one MULTI to that slot's master), ``mget`` (one ``GET`` per key)
    and ``aclose``. A reply of a master that does not serve the slot (any
    ``MOVED``, ``CLUSTERDOWN``, a dead master) makes it read the slot map
    again and retry, up to ``timeout``."""

    def __init__(self, procs: RedisClusterProcs, timeout: float = 30.0) -> None:
        self.procs = procs
        self.timeout = timeout
        self._clients: dict[int, aioredis.Redis] = {}
        self._map: list[Shard] = []

    def _client(self, port: int) -> aioredis.Redis:
        if port not in self._clients:
            self._clients[port] = aioredis.Redis(host="127.0.0.1", port=port, protocol=2, socket_timeout=5)
        return self._clients[port]

    async def _port(self, slot: int, fresh: bool) -> int:
        if fresh or not self._map:
            self._map = await asyncio.to_thread(self.procs.masters)
        for s in self._map:
            if s.serves(slot):
                return s.port
        raise LookupError(f"no master serves slot {slot}")

    async def run(self, calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]], transaction: bool) -> list[Any]:
        slot = keys.slot(calls[0][1][0] if isinstance(calls[0][1][0], str) else calls[0][1][0].decode())
        deadline = time.monotonic() + self.timeout
        fresh = False
        while True:
            try:
                async with self._client(await self._port(slot, fresh)).pipeline(transaction=transaction) as pipe:
                    for name, args, kw in calls:
                        getattr(pipe, name)(*args, **kw)
                    return await pipe.execute()
            except (redis.RedisError, OSError, LookupError):
                if time.monotonic() > deadline:
                    raise
            fresh = True
            await asyncio.sleep(0.1)

    def pipeline(self, transaction: bool = True) -> _Pipe:
        return _Pipe(self, transaction)

    async def mget(self, names: Sequence[str]) -> list[Any]:
        return [(await self.run([("get", (n,), {})], False))[0] for n in names]

    async def aclose(self) -> None:
        for c in self._clients.values():
            await c.aclose()
        self._clients.clear()


class _Pipe:
    """Commands recorded for :meth:`SlotRouter.run` (``pipe.get(...)``, ..., ``await pipe.execute()``)."""

    def __init__(self, router: SlotRouter, transaction: bool) -> None:
        self.router = router
        self.transaction = transaction
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Callable[..., _Pipe]:
        def record(*args: Any, **kw: Any) -> _Pipe:
            self.calls.append((name, args, kw))
            return self
        return record

    async def execute(self) -> list[Any]:
        calls, self.calls = self.calls, []
        return await self.router.run(calls, self.transaction)

    async def __aenter__(self) -> _Pipe:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.calls = []


class CardhallOnRedisCluster(Cluster):
    """:class:`tests.cluster.harness.Cluster` on ``redis`` (a
    :class:`RedisClusterProcs`, started by :meth:`start` unless it runs;
    closed by :meth:`stop` unless ``own_redis`` is False): ``size`` nodes, node
    ``i`` given master ``i``'s URL in turn, nginx in front."""

    def __init__(self, redis_cluster: RedisClusterProcs, size: int = 3, *, node_args: Sequence[str] = (),
                 lease_ttl: float = 2.0, lease_renew: float = 0.5, prefix: str | None = None,
                 operator_key: str | None = None, ready_timeout: float = 30.0, own_redis: bool = False) -> None:
        if not redis_cluster.started:
            redis_cluster.start()
        super().__init__(size, node_args=node_args, lease_ttl=lease_ttl, lease_renew=lease_renew, prefix=prefix,
                         operator_key=operator_key, ready_timeout=ready_timeout, redis=redis_cluster,
                         own_redis=own_redis)

    def redis_url(self, node_id: str) -> str:
        urls = self.redis.master_urls
        return str(urls[(int(node_id[1:]) - 1) % len(urls)])


def _main() -> None:
    procs = RedisClusterProcs().start()
    print(f"redis cluster up in {procs.start_seconds:.2f} s, {procs.url}")
    for s in procs.masters():
        print(f"  master {s.port} pid {s.pid} slots {s.slots}")
    for s in procs.replicas():
        print(f"  replica {s.port} pid {s.pid} of {s.master_port}")
    stop = False

    def done(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, done)
    try:
        while not stop:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        procs.close()


if __name__ == "__main__":
    _main()
    sys.exit(0)
