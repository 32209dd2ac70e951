"""Provably fair randomness (RULES G-2).

A match's randomness comes from one deterministic generator keyed by a 32-byte
server seed drawn from the OS CSPRNG and the players' client seeds. The server
publishes ``commitment(server_seed)`` before anyone sits down and reveals the
seed when the match ends; any client can then rebuild this generator and replay
every shuffle and random choice of the match.

The construction, specified byte for byte in ``protocol/SPEC.md`` ("Randomness"):

* key = SHA-256(``b"cardhall/g2/v1"`` || server_seed || for each client seed in
  seat order: 4-byte big-endian length || seed bytes)
* stream = SHA-256(key || 0 as 8-byte big-endian) || SHA-256(key || 1) || ...
* ``randbelow(n)``: read 8 bytes as a big-endian unsigned integer x; if
  x >= 2**64 - (2**64 mod n), discard it and read again; else return x mod n.
* ``shuffle(items)``: Fisher-Yates from the end: for i = len-1 down to 1,
  j = randbelow(i + 1), swap items[i] and items[j].

>>> rng = FairRandom(bytes(32))
>>> deck = list(range(5)); rng.shuffle(deck); deck
[3, 2, 0, 4, 1]
>>> FairRandom.from_data(rng.to_data()).randbelow(1000) == rng.randbelow(1000)
True
"""

from __future__ import annotations

import functools
import hashlib
import operator
import secrets
import struct
from collections.abc import MutableSequence, Sequence
from typing import Any, Protocol

DOMAIN = b"cardhall/g2/v1"
SEED_BYTES = 32
_BLOCK = 32
_TWO64 = 1 << 64
_U64 = struct.Struct(">Q")


#: randbelow's rejection limit per ``n`` >= 2: ``2**64 - (2**64 mod n)``
_LIMIT: dict[int, int] = {}


@functools.lru_cache(maxsize=64)
def _limits(n: int) -> tuple[int, ...]:
    """randbelow's rejection limits of a shuffle's steps, m = n down to 2."""
    return tuple(_TWO64 - (_TWO64 % m) for m in range(n, 1, -1))


class RandomSource(Protocol):
    """What an engine needs from randomness: uniform integers and shuffles, and
    its position as plain data so a checkpoint can resume it exactly."""

    def randbelow(self, n: int) -> int:
        """Uniform integer in ``[0, n)``; ``n >= 1``."""

    def shuffle(self, items: MutableSequence[Any]) -> None:
        """Shuffle ``items`` in place, uniformly."""

    def to_data(self) -> dict[str, Any]:
        """The generator's whole state as plain data."""


def new_server_seed() -> bytes:
    """32 bytes from the OS CSPRNG (``secrets``), RULES G-2."""
    return secrets.token_bytes(SEED_BYTES)


def commitment(server_seed: bytes) -> str:
    """Hex SHA-256 of the server seed, published before the match (G-2)."""
    return hashlib.sha256(server_seed).hexdigest()


def derive_key(server_seed: bytes, client_seeds: Sequence[bytes] = ()) -> bytes:
    """The generator key from the server seed and the client seeds in seat order."""
    h = hashlib.sha256(DOMAIN)
    h.update(server_seed)
    for seed in client_seeds:
        h.update(len(seed).to_bytes(4, "big"))
        h.update(seed)
    return h.digest()


class FairRandom:
    """SHA-256 counter-mode generator (G-2); deterministic for a given key.

    ``FairRandom(server_seed, client_seeds)`` builds the key as the module
    docstring says; ``FairRandom.from_key(key)`` takes a key directly (bots and
    tests derive their own). ``to_data``/``from_data`` carry the exact position
    in the stream, so a restored generator continues with the same numbers.
    """

    __slots__ = ("_key", "_block", "_buf", "_pos")

    def __init__(self, server_seed: bytes, client_seeds: Sequence[bytes] = ()) -> None:
        self._init(derive_key(server_seed, client_seeds), 0)

    @classmethod
    def from_key(cls, key: bytes, position: int = 0) -> FairRandom:
        """A generator with ``key`` (32 bytes), ``position`` bytes already consumed."""
        self = cls.__new__(cls)
        self._init(key, position)
        return self

    def _init(self, key: bytes, position: int) -> None:
        self._key = key
        self._block, self._pos = divmod(position, _BLOCK)
        self._buf = self._blocks(self._block, 1)

    def _blocks(self, first: int, count: int) -> bytes:
        """Blocks ``first`` .. ``first + count - 1`` of the stream, concatenated."""
        key = self._key
        return b"".join([hashlib.sha256(key + i.to_bytes(8, "big")).digest() for i in range(first, first + count)])

    @property
    def position(self) -> int:
        """Bytes of the stream consumed so far."""
        return self._block * _BLOCK + self._pos

    def read(self, n: int) -> bytes:
        """The next ``n`` bytes of the stream (``n >= 0``)."""
        pos = self._pos
        left = _BLOCK - pos
        if n <= left:  # within the current block
            if n <= 0:
                return b""
            self._pos = pos + n
            return self._buf[pos : pos + n]
        count = -(-(n - left) // _BLOCK)  # whole blocks needed after the current one
        data = self._buf[pos:] + self._blocks(self._block + 1, count)
        self._block += count
        self._buf = data[-_BLOCK:]
        self._pos = _BLOCK - (len(data) - n)
        return data[:n]

    def randbelow(self, n: int) -> int:
        """Uniform integer in ``[0, n)`` by rejection sampling; raises ValueError if n < 1."""
        limit = _LIMIT.get(n)
        if limit is None:
            if n < 1:
                raise ValueError("randbelow needs n >= 1")
            if n == 1:
                return 0
            if len(_LIMIT) > 4096:
                _LIMIT.clear()
            limit = _LIMIT[n] = _TWO64 - (_TWO64 % n)
        pos = self._pos
        if pos <= _BLOCK - 8:  # the common draw: 8 bytes of the current block, accepted
            self._pos = pos + 8
            (x,) = _U64.unpack_from(self._buf, pos)
            if x < limit:
                return x % n
        while True:
            pos = self._pos
            if pos <= _BLOCK - 8:  # the 8 bytes lie in the current block: decode them in place
                self._pos = pos + 8
                (x,) = _U64.unpack_from(self._buf, pos)
            elif pos == _BLOCK:  # the current block is used up: the 8 bytes open the next one
                block = self._block = self._block + 1
                self._buf = buf = self._blocks(block, 1)
                self._pos = 8
                (x,) = _U64.unpack_from(buf, 0)
            else:
                x = int.from_bytes(self.read(8), "big")
            if x < limit:
                return x % n

    def shuffle(self, items: MutableSequence[Any]) -> None:
        """Fisher-Yates from the end, as the module docstring specifies.

        Same draws as calling :meth:`randbelow` for each step, faster: the
        8 bytes of every step are read and decoded at once. When none of
        them is rejected (all but about one shuffle of a deck in 10**16) the
        swap targets ``x mod m`` are computed together; otherwise each step
        is drawn in turn, a rejected draw moving on to the next 8 bytes and
        reading 8 more at the end, so the stream is consumed identically.
        """
        n = len(items)
        if n < 2:
            return
        draws = struct.unpack(f">{n - 1}Q", self.read(8 * (n - 1)))
        sizes = range(n, 1, -1)  # m = i + 1 for i = n - 1 down to 1
        if all(map(operator.lt, draws, _limits(n))):
            for i, j in zip(range(n - 1, 0, -1), map(operator.mod, draws, sizes)):
                items[i], items[j] = items[j], items[i]
            return
        k, end = 0, n - 1
        for m in sizes:
            limit = _TWO64 - (_TWO64 % m)
            while True:
                if k < end:
                    x = draws[k]
                    k += 1
                else:
                    x = int.from_bytes(self.read(8), "big")
                if x < limit:
                    break
            j = x % m
            i = m - 1
            items[i], items[j] = items[j], items[i]

    def choice(self, items: Sequence[Any]) -> Any:
        """One element of a non-empty sequence, uniformly."""
        return items[self.randbelow(len(items))]

    def spawn(self, label: str) -> FairRandom:
        """An independent generator derived from this key and ``label`` (for bots,
        whose choices are not part of the match's provable randomness)."""
        return FairRandom.from_key(hashlib.sha256(self._key + b"/" + label.encode()).digest())

    def to_data(self) -> dict[str, Any]:
        """``{"kind": "fair", "key": hex, "position": bytes consumed}``."""
        return {"kind": "fair", "key": self._key.hex(), "position": self.position}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> FairRandom:
        """Inverse of :meth:`to_data`."""
        return cls.from_key(bytes.fromhex(data["key"]), data["position"])


def random_from_data(data: dict[str, Any]) -> RandomSource:
    """Rebuild a random source from its ``to_data`` form (kinds ``"fair"`` and
    ``"stacked"``, the scripted deck of ``cardhall.engine.stacked``); raises ValueError
    for an unknown kind."""
    if data.get("kind") == "stacked":
        from cardhall.engine.stacked import StackedDeck

        return StackedDeck.from_data(data)
    if data.get("kind") != "fair":
        raise ValueError(f"unknown random source kind {data.get('kind')!r}")
    return FairRandom.from_data(data)
