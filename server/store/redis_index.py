"""Reading the Redis store's table index, quarantine and states, partition by
partition, so that one bad entry never stops the rest from loading
(``server/STORAGE.md``, "Redis key layout", "Quarantine").

Every read that spans partitions is one non-transactional pipeline of
single-key commands (never a cross-slot ``MGET`` or ``SUNION``): on a Redis
Cluster redis-py splits it per master and sends the parts side by side.

* :func:`table_ids`: the members of every partition's table index. A member
  that is not UTF-8 text is no id the service ever wrote (ids are ``t_`` and
  hex): it is moved out of its partition's index into the partition's
  quarantine at once (under a printable form of its bytes, the note naming
  them exactly), and the ids that are text load.
* :func:`load_states`: tables' states and input logs; :func:`read_table`: one
  table's, and whether it is quarantined.
* :func:`quarantined`: every partition's quarantine; :func:`generations`:
  every partition's marker generation, :func:`mark` writes markers.
* :func:`stored_table`: one state blob as a
  :class:`~cardhall.server.store.base.StoredTable`; whatever makes it
  unreadable (not msgpack, a newer format, a migration that fails) becomes its
  ``error``, never an exception, so the hall quarantines that table alone.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Sequence
from typing import Any

from cardhall.server.store.base import StoredTable
from cardhall.server.store.format import FORMAT_VERSION, unpack_entry, unpack_state
from cardhall.server.store.keys import PARTITIONS, Keys, partition_of
from cardhall.server.store.scripts import MARK_SCRIPT, SET_ASIDE_SCRIPT

log = logging.getLogger("cardhall.store")


def printable(member: bytes) -> str:
    """A printable name for an index member that is not UTF-8 text.

    >>> printable(b"t_\\xff")
    't_\\\\xff'
    """
    return member.decode("utf-8", "backslashreplace")


def set_aside_note(member: bytes) -> str:
    """The quarantine note of an index member that is not UTF-8 text."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return f"{stamp} the table index held {member!r}, not UTF-8 text: no table id; removed from the index"


async def table_ids(client: Any, keys: Keys, set_aside: dict[str, str]) -> list[str]:
    """The ids in every partition's table index, sorted (one pipeline of
    ``SMEMBERS``). Members that are not UTF-8 are moved to their partition's
    quarantine hash (:data:`SET_ASIDE_SCRIPT`: ``HSET`` quarantine, ``SREM``
    index, in one step) and recorded in ``set_aside`` (printable name ->
    note). Raises what the Redis client raises (the caller maps it to
    StoreUnavailable)."""
    async with client.pipeline(transaction=False) as pipe:
        for n in range(PARTITIONS):
            pipe.smembers(keys.tables(n))
        members = await pipe.execute()
    ids: list[str] = []
    bad: list[tuple[int, bytes]] = []
    for n, found in enumerate(members):
        for member in found:
            try:
                ids.append(member.decode())
            except UnicodeDecodeError:
                bad.append((n, member))
    if bad:
        async with client.pipeline(transaction=False) as pipe:
            for n, member in bad:
                name, note = printable(member), set_aside_note(member)
                log.error("table index member %s quarantined: not UTF-8 text (server/STORAGE.md)", name)
                pipe.eval(SET_ASIDE_SCRIPT, 2, keys.tables(n), keys.quarantine(n), member, name, note)
                set_aside[name] = note
            await pipe.execute()
    return sorted(ids)


async def load_states(client: Any, keys: Keys, tables: Sequence[str]) -> list[StoredTable]:
    """``tables`` with their states and input logs (one pipeline: ``GET`` the
    state and ``LRANGE`` the log of each)."""
    async with client.pipeline(transaction=False) as pipe:
        for table in tables:
            pipe.get(keys.state(table))
            pipe.lrange(keys.log(table), 0, -1)
        replies = await pipe.execute()
    return [stored_table(table, replies[2 * i], replies[2 * i + 1]) for i, table in enumerate(tables)]


async def read_table(client: Any, keys: Keys, table: str) -> tuple[bytes | None, bool, list[bytes]]:
    """``table``'s state blob (None: none stored), whether it is in its
    partition's quarantine, and its input log (one pipeline, one slot)."""
    async with client.pipeline(transaction=False) as pipe:
        pipe.get(keys.state(table))
        pipe.hexists(keys.quarantine(partition_of(table)), table)
        pipe.lrange(keys.log(table), 0, -1)
        blob, held, log = await pipe.execute()
    return blob, bool(held), log


async def generations(client: Any, keys: Keys) -> list[bytes | None]:
    """Every partition's marker generation (None: no marker), one pipeline of ``HGET``."""
    async with client.pipeline(transaction=False) as pipe:
        for n in range(PARTITIONS):
            pipe.hget(keys.meta(n), "generation")
        return list(await pipe.execute())


def queue_mark(pipe: Any, keys: Keys, n: int) -> None:
    """Queue :data:`MARK_SCRIPT` for partition ``n`` on ``pipe``: its marker
    written, with a new generation unless it has one (its reply: the generation)."""
    marked = f"{time.time():.3f}"
    pipe.execute_command("EVAL", MARK_SCRIPT, 1, keys.meta(n), FORMAT_VERSION, marked, secrets.token_hex(8))


async def mark(client: Any, keys: Keys, partitions: Sequence[int]) -> list[bytes]:
    """Mark ``partitions`` (one pipeline); their generations."""
    if not partitions:
        return []
    async with client.pipeline(transaction=False) as pipe:
        for n in partitions:
            queue_mark(pipe, keys, n)
        return list(await pipe.execute())


async def quarantined(client: Any, keys: Keys) -> dict[str, str]:
    """Every partition's quarantine (one pipeline of ``HGETALL``): table id -> note."""
    async with client.pipeline(transaction=False) as pipe:
        for n in range(PARTITIONS):
            pipe.hgetall(keys.quarantine(n))
        found = await pipe.execute()
    return {k.decode(errors="replace"): v.decode(errors="replace") for part in found for k, v in part.items()}


def stored_table(table: str, blob: bytes | None, log: list[bytes] | None = None) -> StoredTable:
    """``table``'s state blob decoded and migrated, with its input log's
    entries (``log``: packed entries), or the error that makes either unreadable."""
    try:
        return StoredTable(table, unpack_state(blob), log=tuple(unpack_entry(e) for e in log or ()))
    except Exception as exc:  # CheckpointError, or a migration that cannot read what it found
        return StoredTable(table, error=str(exc)[:300] or repr(exc)[:300])
