"""A table's recent events, packed, for clients that ``join`` with ``since``.

Each committed event is kept as the msgpack bytes of its stored record
(``{"data", "private"?, "ts", "turn"?}``, :func:`cardhall.server.store.format.pack_record`: the
very bytes the table handed to the store with its checkpoint, packed once)
next to its ``seq`` (two deques: ints and bytes, no tuple per event), not as
live Python objects: bytes and ints are a few hundred bytes, untracked by the
garbage collector, where the event's records, dicts and lists were ~1-2 KiB of
objects the collector traversed again and again while they lived (measured
with 500 tables at full speed: the young generation held 100,000+ objects at
each collection, pausing the loop for 50-150 ms; docs/LOAD.md). Reading it back
(a reconnect) unpacks only what the client missed.

>>> from cardhall.engine.base import Event
>>> from cardhall.server.store.format import pack_record
>>> buf = EventBuffer(2, lambda seq, record: (seq, record["data"]["type"]))
>>> for seq, kind in enumerate(["deal", "bet", "fold"], 1):
...     private = {2: {"cards": ["Ah"]}} if kind == "deal" else None
...     buf.append(seq, pack_record(Event({"type": kind}, private), 0.0, None))
>>> buf.first_seq, buf.last_seq, len(buf)
(2, 3, 2)
>>> buf.since(2)
[(3, 'fold')]
>>> list(buf)
[(2, 'bet'), (3, 'fold')]
>>> buf.packed()[0][0], unpack_event(buf.packed()[0][1])
(2, {'data': {'type': 'bet'}, 'ts': 0.0})
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from cardhall.server.store.format import unpack_event

R = TypeVar("R")
Data = dict[str, Any]


class EventBuffer(Generic[R]):
    """The last ``size`` events; ``decode(seq, record)`` turns a stored record
    back into what readers want (the table's ``EventRecord``)."""

    __slots__ = ("_seqs", "_blobs", "_decode")

    def __init__(self, size: int, decode: Callable[[int, Data], R]) -> None:
        self._seqs: deque[int] = deque(maxlen=size)
        self._blobs: deque[bytes] = deque(maxlen=size)
        self._decode = decode

    def append(self, seq: int, blob: bytes) -> None:
        """Keep event ``seq``, its stored record packed (``blob``); the oldest
        goes when full."""
        self._seqs.append(seq)
        self._blobs.append(blob)

    @property
    def first_seq(self) -> int | None:
        """The oldest ``seq`` kept (None when empty)."""
        return self._seqs[0] if self._seqs else None

    @property
    def last_seq(self) -> int | None:
        return self._seqs[-1] if self._seqs else None

    def since(self, seq: int) -> list[R]:
        """The events kept after ``seq``, decoded, in order."""
        seqs = self._seqs
        if not seqs or seqs[-1] <= seq:
            return []
        return [self._decode(s, unpack_event(b)) for s, b in zip(seqs, self._blobs) if s > seq]

    def packed(self) -> list[tuple[int, bytes]]:
        """Every event kept as ``(seq, packed stored record)`` (to rewrite a store)."""
        return list(zip(self._seqs, self._blobs))

    def drop_after(self, seq: int) -> None:
        """Forget the events after ``seq``."""
        while self._seqs and self._seqs[-1] > seq:
            self._seqs.pop()
            self._blobs.pop()

    def clear(self) -> None:
        self._seqs.clear()
        self._blobs.clear()

    def __len__(self) -> int:
        return len(self._seqs)

    def __bool__(self) -> bool:
        return bool(self._seqs)

    def __iter__(self) -> Iterator[R]:
        """Every event kept, decoded, oldest first."""
        for s, b in list(zip(self._seqs, self._blobs)):
            yield self._decode(s, unpack_event(b))

