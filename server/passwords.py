"""Table passwords: stored only as a scrypt hash, checked in constant time (SPEC "Private tables").

A table's ``password`` option never stays in the clear: at creation it becomes
a :data:`Hashed` record (the KDF's name and parameters, a random 16-byte salt
of the table's own, the 32-byte derived key, all as plain data so a stored
table keeps it) and the password itself is dropped. Checking a ``join``'s
password derives the key again with the record's parameters and compares
with :func:`hmac.compare_digest`.

The KDF is OpenSSL's scrypt (:func:`hashlib.scrypt`, RFC 7914) with
``n`` = 2^14, ``r`` = 8, ``p`` = 1: 16 MiB and a few tens of milliseconds per
derivation, too slow for the event loop, so :func:`derive` and :func:`matches`
run in a worker thread (:func:`asyncio.to_thread`), at most
:data:`CONCURRENT` at a time per process (each holds its 16 MiB while it
runs). The table machine never derives a key: the node a ``join`` arrives on
checks it before the join is posted (:mod:`cardhall.server.private_access`).

Passwords are compared as Unicode NFC, so the same text typed on two devices
(composed or decomposed accents) is the same password.

>>> import asyncio
>>> record = asyncio.run(derive("sesame"))
>>> sorted(record), record["kdf"], len(record["salt"]), len(record["hash"])
(['hash', 'kdf', 'n', 'p', 'r', 'salt'], 'scrypt', 32, 64)
>>> asyncio.run(matches(record, "sesame")), asyncio.run(matches(record, "Sesame"))
(True, False)
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import unicodedata
import weakref
from typing import Any

#: a stored password: ``{"kdf": "scrypt", "n", "r", "p", "salt": hex, "hash": hex}``
Hashed = dict[str, Any]

#: scrypt's cost parameters for new passwords (RFC 7914): 16 MiB, tens of milliseconds
N, R, P = 2 ** 14, 8, 1
#: bytes of salt (per table) and of the derived key
SALT_BYTES, KEY_BYTES = 16, 32
#: derivations running at once in this process (each holds 128 * r * n bytes)
CONCURRENT = 2
#: the largest cost a stored record may ask for (a record is the server's own; this bounds a bad one)
MAX_N = 2 ** 17

#: the running event loop's semaphore (one per loop: a semaphore belongs to the loop it first waits in)
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def _semaphore() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    slots = _slots.get(loop)
    if slots is None:
        slots = _slots[loop] = asyncio.Semaphore(CONCURRENT)
    return slots


def _key(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    text = unicodedata.normalize("NFC", password).encode("utf-8")
    return hashlib.scrypt(text, salt=salt, n=n, r=r, p=p, maxmem=256 * r * n, dklen=KEY_BYTES)


def derive_now(password: str) -> Hashed:
    """The record of ``password`` with a new random salt, derived in this
    thread (blocking: tens of milliseconds)."""
    salt = secrets.token_bytes(SALT_BYTES)
    return {"kdf": "scrypt", "n": N, "r": R, "p": P, "salt": salt.hex(), "hash": _key(password, salt, N, R, P).hex()}


def matches_now(record: Hashed, password: str) -> bool:
    """True when ``password`` is the one ``record`` was derived from (blocking).
    False for a record this code cannot read."""
    try:
        n, r, p = int(record["n"]), int(record["r"]), int(record["p"])
        if record.get("kdf") != "scrypt" or not (2 <= n <= MAX_N and 1 <= r <= 16 and 1 <= p <= 4):
            return False
        salt, expected = bytes.fromhex(record["salt"]), bytes.fromhex(record["hash"])
    except (KeyError, TypeError, ValueError):
        return False
    return hmac.compare_digest(_key(password, salt, n, r, p), expected)


async def derive(password: str) -> Hashed:
    """:func:`derive_now` in a worker thread (see the module docstring)."""
    async with _semaphore():
        return await asyncio.to_thread(derive_now, password)


async def matches(record: Hashed, password: str) -> bool:
    """:func:`matches_now` in a worker thread (see the module docstring)."""
    async with _semaphore():
        return await asyncio.to_thread(matches_now, record, password)
