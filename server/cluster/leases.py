"""Table leases with fencing tokens, through the scripts of :mod:`.scripts`.

A token is ``node|nonce|epoch``: the node id, a random nonce of this process
and the table's fencing epoch at the claim. Every method raises redis-py's
``RedisError`` (or ``OSError``) when Redis cannot be reached.

``client`` is the store's (``RedisConn.client``: a ``redis.asyncio.Redis``, or a
``RedisCluster`` on a Redis Cluster). Each script runs on one slot: a table's
keys, or one partition's (:mod:`cardhall.server.store.keys`); what spans
partitions (renewing every lease of the node, looking for orphans, reading
owners) is one call per partition or per key, sent together in one
non-transactional pipeline (on a cluster redis-py sends each master its share
at once).

>>> token_node("n1|ab12|7"), token_epoch("n1|ab12|7"), token_node(None)
('n1', 7, None)
"""

from __future__ import annotations

from typing import Any

from cardhall.server.cluster import scripts
from cardhall.server.store.keys import PARTITIONS, Keys, partition_of

#: claim modes of the CLAIM script
FREE, TAKEOVER, NEW = "0", "1", "n"


def token_node(token: bytes | str | None) -> str | None:
    """The node id in a fencing token (None for no token); for a lease
    reserved by a handover (``node|handover|epoch``), the node it goes to."""
    if token is None:
        return None
    text = token.decode() if isinstance(token, bytes) else token
    return text.rsplit("|", 2)[0]


def token_epoch(token: str) -> int:
    """The fencing epoch in a token."""
    return int(token.rsplit("|", 1)[1])


class Leases:
    """The leases node ``node`` takes (``nonce``: this process's), ``ttl_ms`` milliseconds each."""

    def __init__(self, client: Any, keys: Keys, node: str, nonce: str, ttl_ms: int) -> None:
        self.client = client
        self.keys = keys
        self.node = node
        self.nonce = nonce
        self.ttl_ms = ttl_ms

    async def claim(self, table: str, mode: str = FREE, expected_epoch: int | None = None) -> str | None:
        """Take ``table``'s lease when it is free (``mode`` TAKEOVER: also when
        an earlier process of this node id holds it; NEW: a table not stored
        yet). ``expected_epoch``: only if nobody claimed it since that epoch.
        Returns the token, or None. The owner change is published on the
        table's channel."""
        k = self.keys
        token = await self.client.eval(
            scripts.CLAIM, 3, k.lease(table), k.epoch(table), k.tables(partition_of(table)), table, self.node,
            self.nonce, self.ttl_ms, mode, k.channel(table), "" if expected_epoch is None else str(expected_epoch))
        return None if not token else str(token.decode())

    async def renew(self, held: list[tuple[str, str]]) -> list[int]:
        """Extend each ``(table, token)`` lease still held; returns the indexes
        (0-based, in ``held``) of those that are not that token any more. One
        script per partition, all in one pipeline."""
        if not held:
            return []
        groups: dict[int, list[int]] = {}
        for index, (table, _) in enumerate(held):
            groups.setdefault(partition_of(table), []).append(index)
        order = list(groups.values())
        async with self.client.pipeline(transaction=False) as pipe:
            for indexes in order:
                keys = [self.keys.lease(held[i][0]) for i in indexes]
                pipe.eval(scripts.RENEW, len(keys), *keys, self.ttl_ms, *[held[i][1] for i in indexes])
            replies = await pipe.execute()
        return sorted(indexes[int(i) - 1] for indexes, lost in zip(order, replies) for i in lost)

    async def release(self, table: str, token: str, to: str | None = None) -> bool:
        """Free ``table``'s lease if it is ``token`` (True when it was); with
        ``to``, reserve it for that node for one TTL (a handover: nobody else
        claims it meanwhile)."""
        args = [token] if to is None else [token, to, self.ttl_ms]
        return bool(await self.client.eval(scripts.RELEASE, 1, self.keys.lease(table), *args))

    async def orphans(self, takeover: bool = False, limit: int = 10_000) -> list[str]:
        """Stored tables nobody holds (and with ``takeover``, those an earlier
        process of this node id holds), at most ``limit``: the ORPHANS script
        of every partition, in one pipeline."""
        k = self.keys
        async with self.client.pipeline(transaction=False) as pipe:
            for n in range(PARTITIONS):
                pipe.eval(scripts.ORPHANS, 1, k.tables(n), k.partition(n) + ":", limit, self.node if takeover else "")
            found = await pipe.execute()
        out: list[str] = []
        for member in (i for ids in found for i in ids):
            try:
                out.append(member.decode())
            except UnicodeDecodeError:  # no table id: the store sets it aside when it next reads the index
                continue
        return out[:limit]

    async def current(self, table: str) -> str | None:
        """``table``'s lease token now (None: free)."""
        token = await self.client.get(self.keys.lease(table))
        return None if token is None else str(token.decode())

    async def owner(self, table: str) -> str | None:
        """The node holding ``table``'s lease, or None."""
        return token_node(await self.client.get(self.keys.lease(table)))

    async def owners(self, tables: list[str]) -> dict[str, str | None]:
        """The node holding each table's lease (None: free): a pipeline of
        ``GET`` (the leases are in as many slots as partitions)."""
        if not tables:
            return {}
        async with self.client.pipeline(transaction=False) as pipe:
            for table in tables:
                pipe.get(self.keys.lease(table))
            tokens = await pipe.execute()
        return {t: token_node(tok) for t, tok in zip(tables, tokens)}

    async def stored(self, table: str) -> bool:
        """Is ``table`` stored (open)? (in its partition's tables set)"""
        return bool(await self.client.sismember(self.keys.tables(partition_of(table)), table))
