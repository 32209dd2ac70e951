"""Hand-history export for ``GET /api/tables/{id}/hands``.

The Hold'em engines record each hand as a PHH hand (``engine/phh.py``), so a
table's history is a ``.phhs`` text (hands ``[1]``, ``[2]``, ...; each with
its match number in ``_cardhall_match``). The other games have no standard
format: their records (``Engine.hand_record()``) go out as JSON
``{"table", "game", "hands": [{"match", "hand"}, ...]}``.

A long history is never built at once: :meth:`HandExports.open` reads the stored
hands :data:`BATCH` records at a time (Redis: one ``LRANGE`` each), encodes
each batch into one chunk of the streamed body and lets the event loop run
between batches, so an export of thousands of hands costs the other tables one
batch's work per loop step, not the whole history's; concurrent exports take
turns (:class:`HandExports`). The body is exactly what
encoding every served record at once gives (:func:`cardhall.engine.phh.dumps_section`).

Only finished matches are served (RULES G-2: mucked cards stay hidden until
the match ends), whether the table is open here, open on another node, or
only in the store (quarantined: :func:`served_through`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from cardhall.engine import phh
from cardhall.server.store.base import Store
from cardhall.server.table.core import CLOSED, FINISHED

Data = dict[str, Any]

#: hand records read, filtered and encoded per step of an export (about 60 µs
#: of work each, decoding and writing Hold'em PHH or Avalanche JSON: a batch is
#: about 2 ms of the loop)
BATCH = 32

PHH_MEDIA = "text/plain; charset=utf-8"
JSON_MEDIA = "application/json"


@dataclass(frozen=True, slots=True)
class Export:
    """A hand-history body to stream: its ``media`` type and its ``chunks``
    (bytes; the iterator raises StoreUnavailable if the store fails midway,
    which must cut the response off rather than end it cleanly)."""

    media: str
    chunks: AsyncIterator[bytes]


def finished_through(match: int, status: str) -> int:
    """The last match of a table whose hands may be served (RULES G-2): its
    current ``match`` once the table is finished or closed, else the one before."""
    return match if status in (FINISHED, CLOSED) else match - 1


async def served_through(store: Store, table_id: str, info: Data | None, count: int) -> int | None:
    """The last match whose hands may be served, or None for every stored one.

    ``info``: the table's public info when it is open (here or on another
    node). A quarantined table's kept state decides: its ``match`` and
    ``status``; when that state is unreadable the highest match recorded is
    withheld, as it may be unfinished. Any other table is closed (closing
    ends its match) and every hand is served. ``count``: the table's stored
    hand records. Raises StoreUnavailable."""
    if info is not None:
        return finished_through(int(info["match"]), str(info["status"]))
    stored = await store.quarantined_state(table_id)
    if stored is None:
        return None
    data = stored.data
    if data is not None and isinstance(data.get("match"), int) and isinstance(data.get("status"), str):
        return finished_through(data["match"], data["status"])
    last = await store.hands_range(table_id, count - 1, count) if count else []
    return int(last[0].get("match", 0)) - 1 if last else 0


class HandExports:
    """The exports of one service: they take turns, one batch at a time.

    A batch is read and encoded holding a lock that is released only at the
    event loop's next iteration (``call_soon``), never while a chunk waits
    for a slow client: whatever the number of exports streaming at once,
    the loop encodes at most one batch of them per iteration, so ten exports
    cost the tables' loop what one does, each taking longer."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._turn = asyncio.Lock()

    async def open(self, table_id: str, info: Data | None) -> Export | None:
        """The export of ``table_id``'s hands as they are stored now (hands
        recorded while it streams are not in it), or None when there is no
        such table (``info`` None and no hand stored). Raises StoreUnavailable."""
        store = self.store
        count = await store.hand_count(table_id)
        first = await store.hands_range(table_id, 0, BATCH) if count else []
        if info is None and not first:
            return None
        game = str(info["game"]) if info is not None else str(first[0].get("game", ""))
        through = await served_through(store, table_id, info, count)
        if game in phh.GAME_VARIANTS:
            return Export(PHH_MEDIA, self._chunks(table_id, first, count, through, _phh_part, b"", b""))
        head = b'{"table":' + orjson.dumps(table_id) + b',"game":' + orjson.dumps(game) + b',"hands":['
        return Export(JSON_MEDIA, self._chunks(table_id, first, count, through, _json_part, head, b"]}"))

    async def _chunks(self, table_id: str, first: Sequence[Data], count: int, through: int | None,
                      part: Callable[[int, Data], bytes], head: bytes, tail: bytes) -> AsyncIterator[bytes]:
        """``head``, one chunk per batch of served records, ``tail``."""
        if head:
            yield head
        loop = asyncio.get_running_loop()
        served, start, batch = 0, 0, first
        while start < count:
            await self._turn.acquire()  # suspends at least until the previous batch's loop iteration ended
            try:
                if start:
                    batch = await self.store.hands_range(table_id, start, start + BATCH)
                parts = []
                for record in batch:
                    if through is not None and record.get("match", 0) > through:
                        count = 0  # records are oldest first: every later one is of an unfinished match too
                        break
                    served += 1
                    parts.append(part(served, record))
            finally:
                loop.call_soon(self._turn.release)
            if parts:
                yield b"".join(parts)
            start += BATCH
        if tail:
            yield tail


def _phh_part(number: int, record: Data) -> bytes:
    text = phh.dumps_section(number, {**record["hand"], "_cardhall_match": record["match"]})
    return (text if number == 1 else "\n" + text).encode()


def _json_part(number: int, record: Data) -> bytes:
    part = orjson.dumps({"match": record["match"], "hand": record["hand"]}, option=orjson.OPT_NON_STR_KEYS)
    return part if number == 1 else b"," + part
