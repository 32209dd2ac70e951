"""Players in Redis: a player's two expiring keys, and the cache of the players this process knows.

``P:player:{token hash}`` holds msgpack ``[player id, name]`` and
``P:player-id:{id}`` the token hash (``server/STORAGE.md``); both expire
``player_ttl`` seconds after their last use (0: never). Players stored before
they expired, in the shared hash ``P:players``, move to their own keys on
first use. The two keys of a player carry no hash tag (each is read and
written alone, so players spread over a cluster's shards): they are written
together by a non-transactional pipeline, never a ``MULTI`` (on a Redis
Cluster they lie in two slots). A write cut in half (one shard did not
answer) may leave one key without the other; the save then raises
StoreUnavailable as any failed save does, and saving again writes both.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

import msgpack

from cardhall.server.store.keys import Keys

log = logging.getLogger("cardhall.store")

#: runs a Redis call, StoreUnavailable when Redis cannot be reached (the store's ``_call``)
Call = Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]
Blob = bytes | None


class RedisPlayers:
    """The players of one key prefix (``keys``) through ``client``; every
    call goes through ``call`` (raises StoreUnavailable)."""

    def __init__(self, client: Any, keys: Keys, call: Call, ttl: float = 0.0) -> None:
        self.client = client
        self.keys = keys
        self.call = call
        #: seconds a player's keys live after their last use (0: for ever; ``Settings.player_expiry``)
        self.ttl = ttl
        #: every player this process saved or found (token hash -> (id, name)): ``hello`` with a
        #: known token needs no round trip, and a Redis that lost its data gets them back
        self.cache: dict[str, tuple[str, str]] = {}

    def queue(self, pipe: Any, player: str, token_hash: str, name: str) -> None:
        """Queue the two keys of a player on ``pipe``, expiring after :attr:`ttl`."""
        ttl = int(self.ttl) if self.ttl >= 1 else None
        pipe.set(self.keys.player(token_hash), msgpack.packb([player, name]), ex=ttl)
        pipe.set(self.keys.player_id(player), token_hash, ex=ttl)

    async def save(self, player: str, token_hash: str, name: str) -> None:
        """Store a player (its token only as ``token_hash``)."""
        await self.save_all([(token_hash, (player, name))])
        self.cache[token_hash] = (player, name)

    async def save_all(self, players: Sequence[tuple[str, tuple[str, str]]]) -> None:
        """Store ``players`` (``(token hash, (id, name))`` each: :attr:`cache`'s
        items) in one non-transactional pipeline."""
        if not players:
            return

        async def run() -> Any:
            async with self.client.pipeline(transaction=False) as pipe:
                for token_hash, (player, name) in players:
                    self.queue(pipe, player, token_hash, name)
                return await pipe.execute()
        await self.call(run)

    async def touch(self, players: Sequence[str]) -> None:
        """Renew both keys of each player in ``players`` (ids) for :attr:`ttl` seconds."""
        if self.ttl < 1 or not players:
            return
        ttl = int(self.ttl)
        id_keys = [self.keys.player_id(p) for p in players]

        async def read() -> list[Blob]:
            async with self.client.pipeline(transaction=False) as pipe:  # keys of many slots: no MGET
                for key in id_keys:
                    pipe.get(key)
                return cast(list[Blob], await pipe.execute())
        hashes = await self.call(read)

        async def run() -> Any:
            async with self.client.pipeline(transaction=False) as pipe:
                for key, found in zip(id_keys, hashes, strict=True):
                    if found is not None:
                        pipe.expire(key, ttl)
                        pipe.expire(self.keys.player(found.decode()), ttl)
                return await pipe.execute()
        if any(h is not None for h in hashes):
            await self.call(run)

    async def find(self, token_hash: str) -> tuple[str, str] | None:
        """``(player id, name)`` of the token whose hash is ``token_hash``, or None."""
        found = self.cache.get(token_hash)
        if found is not None:
            return found
        blob = cast(Blob, await self.call(lambda: self.client.get(self.keys.player(token_hash))))
        if blob is None:  # stored before players expired: moved to its own keys on first use
            blob = cast(Blob, await self.call(lambda: self.client.hget(self.keys.players, token_hash)))
            if blob is not None:
                await self._move(token_hash, blob)
        if blob is None:
            return None
        try:
            pid, name = msgpack.unpackb(blob)
        except Exception:
            log.error("player record %s in %s is unreadable", token_hash[:12], self.keys.player(token_hash))
            return None
        self.cache[token_hash] = (pid, name)
        return pid, name

    async def _move(self, token_hash: str, blob: bytes) -> None:
        """A player of the old shared hash goes to its own expiring keys."""
        try:
            pid, name = msgpack.unpackb(blob)
        except Exception:
            return  # reported as unreadable by the caller

        async def run() -> Any:
            async with self.client.pipeline(transaction=False) as pipe:  # three slots: in order, no MULTI
                self.queue(pipe, pid, token_hash, name)
                pipe.hdel(self.keys.players, token_hash)
                return await pipe.execute()
        await self.call(run)
