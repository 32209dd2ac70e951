"""The stored format of a table: its state and its event records as msgpack
bytes, the format version and the migrations from older versions.

A table's state is ``TableMachine.to_data()`` packed with msgpack; its ``"v"``
is :data:`FORMAT_VERSION`. :func:`unpack_state` reads a stored state,
upgrading an older version through :data:`MIGRATIONS`, and raises
:class:`CheckpointError` for anything it cannot read (the hall then
quarantines that table). ``server/STORAGE.md`` documents the format.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import msgpack

Data = dict[str, Any]

#: format version of a stored table state (``to_data()["v"]``). Bump it
#: when the state changes and add a migration. 1: the first; 2: the last
#: recorded hand is kept as its digest (``last_hand_digest``) instead of the
#: whole record (``last_hand``); 3: checkpoints between full states are an
#: input log, and a state says which step of it it covers (``log``) and
#: what a replay after it needs (``replay``).
FORMAT_VERSION = 3
#: format version of a stored event record (``{"data", "private"?, "ts", "turn"?}``)
EVENT_VERSION = 1

#: one packer for every state and event record (the service is single-threaded)
_packer = msgpack.Packer(autoreset=True)


def digest(data: Data) -> str:
    """A short digest (32 hex digits of SHA-256) of plain data as msgpack packs it.

    >>> digest({"n": 1}) == digest({"n": 1}) != digest({"n": 2})
    True
    """
    return hashlib.sha256(_packer.pack(data)).hexdigest()[:32]


def hand_digest(record: Data | None) -> str | None:
    """The :func:`digest` of a hand record: how a table knows a hand is already recorded."""
    return None if record is None else digest(record)


def _v1_to_v2(data: Data) -> Data:
    """Format 1 kept the whole last hand record; 2 keeps its digest."""
    data = dict(data)
    data["last_hand_digest"] = hand_digest(data.pop("last_hand", None))
    return data


def _v2_to_v3(data: Data) -> Data:
    """Format 2 wrote the whole state with every action: no input log follows
    it (``log`` 0), and so no replay needs a context (``replay`` None)."""
    data = dict(data)
    data["log"] = 0
    data["replay"] = None
    return data


#: ``MIGRATIONS[v]`` turns a state of version ``v`` into one of ``v + 1``
#: (plain data in, plain data out). A checkpoint written by an older server is
#: upgraded step by step when it is read; it is written back in the current
#: format by the table's next checkpoint.
MIGRATIONS: dict[int, Callable[[Data], Data]] = {1: _v1_to_v2, 2: _v2_to_v3}



class CheckpointError(ValueError):
    """A stored checkpoint that cannot be read: not msgpack, not a map, or
    of a format version this server does not know (newer, or with no
    migration path)."""



def pack_state(state: Data) -> bytes:
    """A table state (``TableMachine.to_data()``) as stored: msgpack bytes."""
    return _packer.pack(state)


def unpack_state(blob: bytes | None) -> Data:
    """The state in ``blob``, migrated to :data:`FORMAT_VERSION`; raises
    :class:`CheckpointError` when it cannot be read.

    >>> unpack_state(pack_state({"v": FORMAT_VERSION, "id": "t_1"}))["id"]
    't_1'
    >>> unpack_state(b"\\xc1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cardhall.server.store.format.CheckpointError: not a msgpack checkpoint: ...
    >>> unpack_state(pack_state({"v": 99}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cardhall.server.store.format.CheckpointError: checkpoint format 99 is newer than this server's (...)
    """
    if blob is None:
        raise CheckpointError("no state stored")
    try:
        data = msgpack.unpackb(blob, strict_map_key=False)
    except Exception as exc:
        raise CheckpointError(f"not a msgpack checkpoint: {exc!r}"[:200]) from None
    if not isinstance(data, dict):
        raise CheckpointError(f"checkpoint is a {type(data).__name__}, not a map")
    return migrate(data)


def migrate(data: Data) -> Data:
    """``data`` upgraded to :data:`FORMAT_VERSION` through :data:`MIGRATIONS`;
    :class:`CheckpointError` for a version that is unknown or newer."""
    version = data.get("v")
    if isinstance(version, bool) or not isinstance(version, int):
        raise CheckpointError(f"checkpoint has no format version (v={version!r})")
    if version > FORMAT_VERSION:
        raise CheckpointError(f"checkpoint format {version} is newer than this server's ({FORMAT_VERSION})")
    while version < FORMAT_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise CheckpointError(f"no migration from checkpoint format {version} to {version + 1}")
        data = step(data)
        version += 1
        data["v"] = version
    return data


#: format version of a stored input log entry (``{"n", "w", "m", "i", "d"?, "b"?, "h"?}``:
#: ``cardhall.server.table.log``)
LOG_VERSION = 1


def pack_entry(entry: Data) -> bytes:
    """An input log entry as stored: msgpack of ``[LOG_VERSION, entry]``."""
    return _packer.pack([LOG_VERSION, entry])


def unpack_entry(blob: bytes) -> Data:
    """The input log entry in ``blob``; :class:`CheckpointError` when it
    cannot be read or is of another version.

    >>> unpack_entry(pack_entry({"n": 4, "w": 1.5, "m": 2.0, "i": [["s"]]}))["n"]
    4
    """
    try:
        version, entry = msgpack.unpackb(blob, strict_map_key=False)
    except Exception as exc:
        raise CheckpointError(f"not a msgpack log entry: {exc!r}"[:200]) from None
    if version != LOG_VERSION or not isinstance(entry, dict) or not isinstance(entry.get("n"), int):
        raise CheckpointError(f"log entry of format {version!r}, not {LOG_VERSION}")
    return entry


def pack_event(record: Data) -> bytes:
    """A stored event record (``{"data", "private"?, "ts", "turn"?}``) as bytes."""
    return _packer.pack(record)


def pack_record(event: Any, ts: float, turn: Data | None) -> bytes:
    """The stored event record of ``event`` (an ``cardhall.engine.base.Event``) that
    happened at ``ts`` (Unix seconds) and began ``turn`` (or None), packed:
    ``Event.to_data()`` plus ``ts`` and ``turn``. The table packs each
    committed event once; the same bytes go to the store and to its event
    buffer (``server/buffer.py``).

    >>> from cardhall.engine.base import Event
    >>> unpack_event(pack_record(Event({"type": "deal"}, {2: {"cards": ["Ah"]}}), 1.5, None))
    {'data': {'type': 'deal'}, 'private': {'2': {'cards': ['Ah']}}, 'ts': 1.5}
    """
    record = event.to_data()
    record["ts"] = ts
    if turn is not None:
        record["turn"] = turn
    return _packer.pack(record)


def unpack_event(blob: bytes) -> Data:
    """The event record in ``blob``; :class:`CheckpointError` if unreadable."""
    try:
        record = msgpack.unpackb(blob, strict_map_key=False)
    except Exception as exc:
        raise CheckpointError(f"not a msgpack event: {exc!r}"[:200]) from None
    if not isinstance(record, dict) or "data" not in record:
        raise CheckpointError("event record without data")
    return record

