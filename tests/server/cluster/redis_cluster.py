"""The Redis Cluster of the server's cluster tests (tests/server/cluster/,
tests/server/test_store_cluster.py): the one harness
(:class:`tests.cluster.redis_cluster.RedisClusterProcs`, on
:mod:`cardhall.clients.bench.redis_cluster_procs`) with ``masters`` masters
and no replica, started when made, under the names these tests use:
:meth:`RedisCluster.move_slot`, and :meth:`RedisCluster.start` of one killed
master."""

from __future__ import annotations

from tests.cluster.redis_cluster import REDIS_CLI, RedisClusterProcs

__all__ = ["REDIS_CLI", "RedisCluster"]


class RedisCluster(RedisClusterProcs):
    """``masters`` masters, no replica, ``--cluster-node-timeout 2000``; started (and whole) once made."""

    def __init__(self, masters: int = 3) -> None:
        super().__init__(masters, 0, node_timeout=2000)
        super().start()

    def start(self, port: int | None = None, timeout: float = 30.0) -> RedisCluster:
        """The cluster (done when made); with ``port``: the killed server on ``port`` again (:meth:`restart`)."""
        if port is None:
            super().start(timeout)
        else:
            self.restart(port, timeout)
        return self

    def move_slot(self, slot: int, source: int, target: int) -> None:
        """Migrate ``slot`` (and its keys) from the master on port ``source`` to
        the one on ``target`` (:meth:`migrate_slot`)."""
        assert self.master_of(slot).port == source, f"slot {slot} is not on {source}"
        self.migrate_slot(slot, target)
