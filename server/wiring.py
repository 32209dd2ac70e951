"""Which store, topology and limits the settings ask for: the one place that
names both kinds (the hall and the rest of the service see only
:class:`~cardhall.server.store.base.Store`,
:class:`~cardhall.server.topology.Topology` and
:class:`~cardhall.server.limits.Limits`)."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from cardhall.server.config import Settings
from cardhall.server.limits import Limits, MemoryLimits
from cardhall.server.store.base import Store
from cardhall.server.store.memory import MemoryStore
from cardhall.server.topology import LocalTopology, Topology

if TYPE_CHECKING:
    from cardhall.server.hall import Hall


def make_store(settings: Settings) -> Store:
    """The store ``settings`` ask for: Redis when ``redis_url`` is set, else in memory."""
    if settings.redis_url:
        from cardhall.server.store.redis import RedisStore

        return RedisStore(settings.redis_url, settings.redis_prefix, settings.stream_bound, settings.redis_timeout,
                          player_ttl=settings.player_expiry, clustered=settings.redis_clustered,
                          wait_replicas=settings.redis_wait_replicas, wait_timeout=settings.redis_timeout / 2)
    return MemoryStore(settings.event_buffer)


def topology_for(hall: Hall) -> Topology:
    """The topology of ``hall``'s store: a node of the cluster on its Redis
    (every node on the same Redis and prefix serves every table), else one
    process. A cluster's outbox is flushed before each commit, so a table's
    replies reach other nodes before its later events (:mod:`cardhall.server.cluster.outbox`)."""
    from cardhall.server.store.redis import RedisStore

    if isinstance(hall.store, RedisStore):
        from cardhall.server.cluster.topology import RedisTopology

        topology = RedisTopology(hall, hall.store)
        hall.committer.before = topology.node.outbox.flushed
        return topology
    return LocalTopology(hall)


def limits_for(hall: Hall) -> Limits:
    """The limits of ``hall``'s store: counted in its Redis for every node on
    the same Redis and prefix (:class:`~cardhall.server.store.redis_limits.RedisLimits`;
    call it once the hall's topology is made: a websocket count names this
    node process and sums the live ones), else in this process."""
    from cardhall.server.store.redis import RedisStore

    if isinstance(hall.store, RedisStore):
        from cardhall.server.cluster.topology import RedisTopology
        from cardhall.server.store.redis_limits import RedisLimits

        topology = hall.topology
        if not isinstance(topology, RedisTopology):  # one process on Redis: only its own websockets count
            return RedisLimits(hall.store, hall.settings, f"{hall.settings.node_id}|{secrets.token_hex(6)}", list)
        node = topology.node

        def live() -> list[str]:
            return [f"{nid}|{info.get('nonce')}" for nid, info in node.live.items()]
        return RedisLimits(hall.store, hall.settings, f"{node.id}|{node.nonce}", live)
    return MemoryLimits(hall.settings)
