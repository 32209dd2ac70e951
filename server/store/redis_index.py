"""Reading the Redis store's table index and states so that one bad entry
never stops the rest from loading (``server/STORAGE.md``, "Quarantine").

* :func:`table_ids`: the members of ``P:tables``. A member that is not UTF-8
  text is no id the service ever wrote (ids are ``t_`` and hex): it is moved
  out of the index into ``P:quarantine`` at once (under a printable form of
  its bytes, the note naming them exactly), and the ids that are text load.
* :func:`stored_table`: one state blob as a
  :class:`~cardhall.server.store.base.StoredTable`; whatever makes it
  unreadable (not msgpack, a newer format, a migration that fails) becomes its
  ``error``, never an exception, so the hall quarantines that table alone.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from cardhall.server.store.base import StoredTable
from cardhall.server.store.format import unpack_entry, unpack_state
from cardhall.server.store.keys import Keys

log = logging.getLogger("cardhall.store")


def printable(member: bytes) -> str:
    """A printable name for an index member that is not UTF-8 text.

    >>> printable(b"t_\\xff")
    't_\\\\xff'
    """
    return member.decode("utf-8", "backslashreplace")


async def table_ids(client: Any, keys: Keys, set_aside: dict[str, str]) -> list[str]:
    """The ids in the table index, sorted. Members that are not UTF-8 are
    moved to the quarantine hash (one MULTI: ``HSET`` quarantine, ``SREM``
    index) and recorded in ``set_aside`` (printable name -> note). Raises
    what the Redis client raises (the caller maps it to StoreUnavailable)."""
    ids: list[str] = []
    bad: list[bytes] = []
    for member in await client.smembers(keys.tables):
        try:
            ids.append(member.decode())
        except UnicodeDecodeError:
            bad.append(member)
    if bad:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        async with client.pipeline(transaction=True) as pipe:
            for member in bad:
                name = printable(member)
                note = f"{stamp} the table index held {member!r}, not UTF-8 text: no table id; removed from the index"
                log.error("table index member %s quarantined: not UTF-8 text (server/STORAGE.md)", name)
                pipe.hset(keys.quarantine, name, note)
                pipe.srem(keys.tables, member)
                set_aside[name] = note
            await pipe.execute()
    return sorted(ids)


def stored_table(table: str, blob: bytes | None, log: list[bytes] | None = None) -> StoredTable:
    """``table``'s state blob decoded and migrated, with its input log's
    entries (``log``: packed entries), or the error that makes either unreadable."""
    try:
        return StoredTable(table, unpack_state(blob), log=tuple(unpack_entry(e) for e in log or ()))
    except Exception as exc:  # CheckpointError, or a migration that cannot read what it found
        return StoredTable(table, error=str(exc)[:300] or repr(exc)[:300])
