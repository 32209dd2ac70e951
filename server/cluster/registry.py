"""The node registry: heartbeats, the live nodes, placement, the cluster's lobby.

Heartbeats use Redis's clock (the HEARTBEAT script), so nodes need no
synchronised clocks: a node is live while its last heartbeat is younger
than the lease TTL. Every method raises redis-py's ``RedisError`` (or
``OSError``) when Redis cannot be reached.

The registry's keys share one hash tag (``P:{nodes}``, ``P:{nodes}:seen``), so
its scripts and transactions run on one slot of a Redis Cluster. The lobby
is split by partition (``P:{tag}:lobby``, each partition's tables' entries,
written by the commit): :meth:`Registry.infos` reads every partition's in one
non-transactional pipeline.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from typing import Any

import orjson

from cardhall.server.cluster import scripts
from cardhall.server.store.keys import PARTITIONS, Keys, partition_of
from cardhall.server.store.redis_conn import as_text

Data = dict[str, Any]

#: milliseconds a placement is counted for its node without being reported (a creation that failed
#: on a node that then died, or a report lost with Redis)
PLACING_MS = 10_000


def _may_run(info: Data) -> bool:
    """Whether the process of heartbeat ``info`` may still run: False when it
    was on this host and its pid is gone."""
    if info.get("host") != socket.gethostname() or not isinstance(info.get("pid"), int):
        return True
    try:
        os.kill(info["pid"], 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Registry:
    """Node ``node``'s view of the cluster: its heartbeat (valid ``ttl_ms``
    milliseconds) and the live nodes at the last one (:attr:`live`)."""

    def __init__(self, client: Any, keys: Keys, node: str, ttl_ms: int) -> None:
        self.client = client
        self.keys = keys
        self.node = node
        self.ttl_ms = ttl_ms
        #: node id -> its heartbeat (``id``, ``address``, ``pid``, ``tables``, ``connections``...)
        self.live: dict[str, Data] = {}
        #: node id -> the tables placed on it (:meth:`place`) that its heartbeat does not count yet,
        #: as of this node's last heartbeat
        self.placing: dict[str, set[str]] = {}

    async def beat(self, info: Data, placed: list[str] | tuple[str, ...] = ()) -> bool:
        """Write this node's heartbeat ``info`` and read the live nodes
        (:attr:`live`) with the tables placed on each that its heartbeat does
        not count yet (:attr:`placing`); ``placed``: the tables placed here (:meth:`place`) that ``info``'s
        ``tables`` now counts, or whose creation failed. True when its
        previous heartbeat had lapsed (other nodes may have counted this one
        gone and forgotten its connections)."""
        k = self.keys
        _, lapsed = await self.client.eval(scripts.HEARTBEAT, 3, k.nodes, k.seen, k.placing, self.node,
                                           orjson.dumps(info), self.ttl_ms, *placed)
        flat, placing = await self.client.eval(scripts.LIVE_NODES, 3, k.nodes, k.seen, k.placing, PLACING_MS)
        placed_on: dict[str, set[str]] = {}
        for i in range(0, len(placing) - 1, 2):
            placed_on.setdefault(as_text(placing[i + 1]), set()).add(as_text(placing[i]))
        self.placing = placed_on
        live: dict[str, Data] = {}
        for i in range(0, len(flat), 2):
            try:
                live[flat[i].decode()] = orjson.loads(flat[i + 1])
            except orjson.JSONDecodeError:
                continue
        self.live = live
        return bool(lapsed)

    async def holder(self, node: str) -> tuple[Data, int] | None:
        """The heartbeat registered under ``node`` and when it expires
        (Redis ms), or None."""
        info, expires = await self.client.eval(scripts.HOLDER, 2, self.keys.nodes, self.keys.seen, node)
        if info is None or expires is None:
            return None
        try:
            return orjson.loads(info), int(expires)
        except orjson.JSONDecodeError:
            return None

    async def check_unique(self, nonce: str, renew: float) -> None:
        """RuntimeError when another running process heartbeats under this
        node's id (two nodes with one id would take each other's tables).
        ``nonce``: this process's. An earlier process of this node (killed,
        its heartbeat not yet expired) is told apart by its process being
        gone (same host) or its heartbeat not renewed within one and a half
        renewal periods (``renew`` seconds)."""
        held = await self.holder(self.node)
        if held is None or held[0].get("nonce") == nonce or not _may_run(held[0]):
            return
        deadline = time.monotonic() + 1.5 * renew  # a running node renews within one period
        while time.monotonic() < deadline:
            await asyncio.sleep(min(0.2, renew / 2))
            again = await self.holder(self.node)
            if again is None:
                return
            if again[1] != held[1] and again[0].get("nonce") != nonce:
                info = again[0]
                raise RuntimeError(f"node id {self.node!r} is in use by a running node (pid {info.get('pid')} at "
                                   f"{info.get('address')}): give every node its own --node-id")

    async def leave(self) -> None:
        """Remove this node's heartbeat (it stops)."""
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hdel(self.keys.nodes, self.node)
            pipe.zrem(self.keys.seen, self.node)
            await pipe.execute()

    def serving(self) -> list[str]:
        """Live nodes that are not stopping."""
        return [n for n, info in self.live.items() if not info.get("stopping")]

    async def place(self, table: str) -> str | None:
        """The node new table ``table`` goes to: the serving node with the
        fewest tables, its heartbeat's count plus the tables placed on it
        since (this node on a tie), counted in Redis (the PLACE script) so
        that a burst of creations from every node spreads within one table
        of even. The node placed on reports the table with its next
        heartbeat (:meth:`beat`); an entry never reported goes after
        :data:`PLACING_MS`. None when no node is live."""
        k = self.keys
        node = await self.client.eval(scripts.PLACE, 3, k.nodes, k.seen, k.placing, table, self.node, PLACING_MS)
        return None if not node else as_text(node)

    async def infos(self) -> dict[str, Data]:
        """Every table's public info as its owner last wrote it (the lobby:
        ``HGETALL`` of every partition's share, in one pipeline)."""
        async with self.client.pipeline(transaction=False) as pipe:
            for n in range(PARTITIONS):
                pipe.hgetall(self.keys.lobby(n))
            parts = await pipe.execute()
        out: dict[str, Data] = {}
        for raw in parts:
            for key, blob in raw.items():
                try:
                    out[key.decode()] = orjson.loads(blob)
                except orjson.JSONDecodeError:
                    continue
        return out

    async def info(self, table: str) -> Data | None:
        """``table``'s public info as its owner last wrote it, or None."""
        blob = await self.client.hget(self.keys.lobby(partition_of(table)), table)
        return None if blob is None else orjson.loads(blob)
