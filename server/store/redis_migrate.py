"""Moving a store of the key layout before partitions to the partitioned one.

Before partitions (``server/STORAGE.md``, "Redis key layout") one standalone
Redis held the whole store: one marker ``P:meta``, one table index
``P:tables``, one lobby ``P:lobby``, one quarantine ``P:quarantine``, and
each table's keys under its own hash tag, ``P:{id}...`` (older still: the
four ``P:t:{id}...`` keys before hash tags). :func:`migrate` moves each table
to its partition with one script (:data:`MIGRATE_TABLE_SCRIPT`: its keys
renamed, its index, lobby and quarantine entries moved; cross-slot, which a
standalone Redis allows), then drops the old marker once the old index,
lobby and quarantine are empty. Every node runs it at start
(``ClusterNode.start``, through ``RedisStore.migrate_keys``): it is
idempotent and atomic per table, so nodes that start together may run it
side by side. A Redis Cluster never held the old layout: nothing to do there.
Every node of the old version must be stopped first (an old node would go on
writing the old names).
"""

from __future__ import annotations

import logging
from typing import Any

from cardhall.server.store.keys import Keys, partition_of
from cardhall.server.store.redis_index import printable, set_aside_note
from cardhall.server.store.scripts import MIGRATE_TABLE_SCRIPT

log = logging.getLogger("cardhall.store")

#: the kinds of a table's keys after its state key, in the order of :data:`MIGRATE_TABLE_SCRIPT`'s KEYS
_KINDS = (":events", ":hands", ":handseq", ":log", ":logn", ":lease", ":epoch")


def table_keys(keys: Keys, table: str) -> list[str]:
    """The 26 KEYS of :data:`MIGRATE_TABLE_SCRIPT` for ``table``.

    >>> k = table_keys(Keys("P"), "t_1")
    >>> k[0], k[8], k[16], k[20], k[23]
    ('P:{p59.115}:t_1', 'P:{t_1}', 'P:t:t_1', 'P:tables', 'P:{p59.115}:tables')
    """
    n = partition_of(table)
    new = [keys.state(table), keys.events(table), keys.hands(table), keys.handseq(table), keys.log(table),
           keys.logn(table), keys.lease(table), keys.epoch(table)]
    old = keys.old_base(table)
    legacy = keys.legacy_state(table)
    return [*new, old, *(old + kind for kind in _KINDS), legacy, *(legacy + kind for kind in _KINDS[:3]),
            keys.old_tables, keys.old_lobby, keys.old_quarantine, keys.tables(n), keys.lobby(n), keys.quarantine(n)]


async def migrate(client: Any, keys: Keys) -> int:
    """Move every table of the old layout on the standalone Redis of
    ``client`` to its partition; returns the number of tables moved (0 when
    nothing was left to move). Raises what the client raises."""
    old = (keys.old_tables, keys.old_lobby, keys.old_quarantine)
    if not await client.exists(*old, keys.old_meta):
        return 0
    ids: set[str] = set()
    for member in await client.smembers(keys.old_tables):
        try:
            ids.add(member.decode())
        except UnicodeDecodeError:  # no table id: set aside in the partition its printable name falls in
            name = printable(member)
            n = partition_of(name)
            async with client.pipeline(transaction=True) as pipe:
                pipe.hset(keys.quarantine(n), name, set_aside_note(member))
                pipe.srem(keys.old_tables, member)
                await pipe.execute()
            log.error("table index member %s quarantined: not UTF-8 text (server/STORAGE.md)", name)
    for key in (keys.old_lobby, keys.old_quarantine):
        ids.update(field.decode(errors="replace") for field in await client.hkeys(key))
    moved = 0
    for table in sorted(ids):
        names = table_keys(keys, table)
        if await client.eval(MIGRATE_TABLE_SCRIPT, len(names), *names, table):
            moved += 1
    if await client.exists(*old):
        log.error("%s, %s or %s still holds entries after the move to partitions (names that are not "
                  "text?): left for an operator (server/STORAGE.md)", *old)
    else:
        await client.delete(keys.old_meta)
    if moved:
        log.warning("moved %d tables to the partitioned key layout (server/STORAGE.md, \"Redis key layout\")",
                    moved)
    return moved
