"""RULES G-2: the fair generator is deterministic, uniform and resumable."""

from __future__ import annotations

import hashlib
from collections import Counter

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cardhall.engine.rng import FairRandom, commitment, derive_key, new_server_seed, random_from_data


def test_G2_server_seed_is_32_bytes_from_the_csprng_and_unique():
    seeds = {new_server_seed() for _ in range(100)}
    assert len(seeds) == 100
    assert all(len(s) == 32 for s in seeds)


def test_G2_commitment_is_sha256_of_the_seed():
    seed = bytes(range(32))
    assert commitment(seed) == hashlib.sha256(seed).hexdigest()


def test_G2_key_derivation_is_byte_exact():
    server, clients = b"s" * 32, [b"alice", b""]
    expected = hashlib.sha256(
        b"cardhall/g2/v1" + server + (5).to_bytes(4, "big") + b"alice" + (0).to_bytes(4, "big")
    ).digest()
    assert derive_key(server, clients) == expected


def test_G2_stream_is_sha256_counter_mode():
    rng = FairRandom(b"x" * 32)
    key = derive_key(b"x" * 32)
    expected = hashlib.sha256(key + (0).to_bytes(8, "big")).digest() + hashlib.sha256(key + (1).to_bytes(8, "big")).digest()
    assert rng.read(64) == expected


def test_G2_client_seeds_change_the_shuffle():
    a, b = list(range(52)), list(range(52))
    FairRandom(b"s" * 32, [b"one"]).shuffle(a)
    FairRandom(b"s" * 32, [b"two"]).shuffle(b)
    assert a != b and sorted(a) == sorted(b)


def test_G2_shuffle_is_a_fisher_yates_replayable_from_randbelow():
    items = list(range(10))
    FairRandom(b"k" * 32).shuffle(items)
    replay, again = list(range(10)), FairRandom(b"k" * 32)
    for i in range(9, 0, -1):
        j = again.randbelow(i + 1)
        replay[i], replay[j] = replay[j], replay[i]
    assert items == replay


def test_randbelow_is_uniform_enough():
    rng = FairRandom(b"u" * 32)
    counts = Counter(rng.randbelow(6) for _ in range(60_000))
    assert set(counts) == set(range(6))
    assert all(abs(c - 10_000) < 500 for c in counts.values())  # > 5 sigma away would be a bug


def test_randbelow_rejects_nonpositive():
    with pytest.raises(ValueError):
        FairRandom(b"").randbelow(0)


@given(st.binary(min_size=1, max_size=40), st.integers(min_value=0, max_value=200), st.integers(2, 10**9))
def test_state_round_trips_through_msgpack_and_continues_identically(seed, skip, n):
    rng = FairRandom(seed)
    rng.read(skip)
    restored = random_from_data(msgpack.unpackb(msgpack.packb(rng.to_data())))
    assert [restored.randbelow(n) for _ in range(5)] == [rng.randbelow(n) for _ in range(5)]


def test_spawned_generators_are_independent_of_the_match_stream():
    rng = FairRandom(b"m" * 32)
    bot = rng.spawn("bot:3")
    assert bot.read(32) != FairRandom(b"m" * 32).read(32)
    assert rng.position == 0  # spawning consumes nothing from the match's stream


class _ScriptedStream(FairRandom):
    """The G-2 stream with some blocks replaced by 0xff bytes: every 8-byte draw
    there is 2**64 - 1, which randbelow rejects for any n that is not a power of
    two, so a shuffle goes through its rejection path."""

    __slots__ = ()
    rejected_blocks = frozenset({1, 3, 7})

    def _blocks(self, first: int, count: int) -> bytes:
        return b"".join(
            b"\xff" * 32 if i in self.rejected_blocks else super(_ScriptedStream, self)._blocks(i, 1)
            for i in range(first, first + count)
        )


@pytest.mark.parametrize("size", [2, 10, 52, 54, 104])
def test_G2_shuffle_matches_randbelow_steps_through_rejected_draws(size):
    items = list(range(size))
    shuffled = _ScriptedStream.from_key(b"r" * 32)
    shuffled.shuffle(items)
    replay, again = list(range(size)), _ScriptedStream.from_key(b"r" * 32)
    rejected = 0
    for i in range(size - 1, 0, -1):
        before = again.position
        j = again.randbelow(i + 1)
        rejected += (again.position - before) // 8 - 1
        replay[i], replay[j] = replay[j], replay[i]
    assert items == replay
    assert shuffled.position == again.position
    assert rejected > 0 or size < 10  # the scripted blocks were reached and rejected


@given(st.binary(min_size=1, max_size=8), st.lists(st.integers(0, 300), max_size=12))
def test_read_returns_the_counter_mode_stream_in_any_pieces(seed, sizes):
    rng = FairRandom(seed)
    key = derive_key(seed)
    whole = b"".join(hashlib.sha256(key + i.to_bytes(8, "big")).digest() for i in range(sum(sizes) // 32 + 1))
    pieces = [rng.read(n) for n in sizes]
    assert b"".join(pieces) == whole[: sum(sizes)]
    assert [len(p) for p in pieces] == sizes and rng.position == sum(sizes)
