"""Players in Redis: a player's expiring keys, and the cache of the players this process knows.

``P:player:{token hash}`` holds msgpack ``[player id, name]``,
``P:player-id:{id}`` the token hash and, once the player was renamed (SPEC
``rename``), ``P:player-name:{id}`` its name (``server/STORAGE.md``); all
expire ``player_ttl`` seconds after their last use (0: never). Players stored before
they expired, in the shared hash ``P:players``, move to their own keys on
first use. The keys of a player carry no hash tag (each is read and
written alone, so players spread over a cluster's shards): they are written
together by a non-transactional pipeline, never a ``MULTI`` (on a Redis
Cluster they lie in several slots). A write cut in half (one shard did not
answer) may leave one key without the other; the save then raises
StoreUnavailable as any failed save does, and saving again writes both. A
renamed player's token record is rewritten with its name, and its
``player-name`` key is read too when the record is: a record a cut write left
with the old name still reads as the new one.
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
        #: the renamed players of :attr:`cache` (id -> name): written again with it after a loss
        self.names: dict[str, str] = {}
        self._tokens: dict[str, set[str]] = {}  # player id -> its token hashes in the cache

    def _keep(self, token_hash: str, player: str, name: str) -> None:
        """Cache ``token_hash``'s record: ``(player, name)``."""
        self.cache[token_hash] = (player, name)
        self._tokens.setdefault(player, set()).add(token_hash)

    def _ttl(self) -> int | None:
        return int(self.ttl) if self.ttl >= 1 else None

    def queue(self, pipe: Any, player: str, token_hash: str, name: str) -> None:
        """Queue the two keys of a player on ``pipe``, expiring after :attr:`ttl`."""
        ttl = self._ttl()
        pipe.set(self.keys.player(token_hash), msgpack.packb([player, name]), ex=ttl)
        pipe.set(self.keys.player_id(player), token_hash, ex=ttl)

    async def save(self, player: str, token_hash: str, name: str) -> None:
        """Store a player (its token only as ``token_hash``)."""
        await self.save_all([(token_hash, (player, name))])
        self._keep(token_hash, player, name)

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

    async def rename(self, player: str, token_hash: str, name: str) -> None:
        """Player ``player`` is named ``name``: its ``player-name`` key, and
        its token's record (``token_hash``; empty: the one ``player-id``
        names, if any) rewritten with the name. Raises StoreUnavailable."""
        if not token_hash:
            found = cast(Blob, await self.call(lambda: self.client.get(self.keys.player_id(player))))
            token_hash = found.decode() if found is not None else ""

        async def run() -> Any:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.set(self.keys.player_name(player), name.encode(), ex=self._ttl())
                if token_hash:
                    self.queue(pipe, player, token_hash, name)
                return await pipe.execute()
        await self.call(run)
        self.renamed(player, token_hash, name)

    def renamed(self, player: str, token_hash: str, name: str) -> None:
        """Keep ``name`` as ``player``'s in :attr:`cache` (renamed here, or by
        another node, which wrote it), in the records of each of its tokens
        the cache holds (``token_hash``: the one renamed; a player may have
        several tokens)."""
        hashes = self._tokens.get(player)
        if not hashes:
            return
        for cached in hashes:
            self.cache[cached] = (player, name)
        self.names[player] = name

    async def name(self, player: str) -> str | None:
        """The name ``player`` was last renamed to (None: never, or expired)."""
        blob = cast(Blob, await self.call(lambda: self.client.get(self.keys.player_name(player))))
        return blob.decode() if blob is not None else None

    def forget(self, token_hash: str) -> None:
        """Drop a token's record from :attr:`cache` (its keys expire by themselves)."""
        found = self.cache.pop(token_hash, None)
        if found is None:
            return
        hashes = self._tokens.get(found[0], set())
        hashes.discard(token_hash)
        if not hashes:
            self._tokens.pop(found[0], None)
            self.names.pop(found[0], None)

    async def rewrite(self) -> None:
        """Write every player of :attr:`cache` again, with the names of the
        renamed ones (a Redis that lost its data)."""
        await self.save_all(list(self.cache.items()))

        async def run() -> Any:
            async with self.client.pipeline(transaction=False) as pipe:
                for player, name in self.names.items():
                    pipe.set(self.keys.player_name(player), name.encode(), ex=self._ttl())
                return await pipe.execute()
        if self.names:
            await self.call(run)

    async def touch(self, players: Sequence[str]) -> None:
        """Renew the keys of each player in ``players`` (ids) for :attr:`ttl` seconds."""
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
                for player, key, found in zip(players, id_keys, hashes, strict=True):
                    if found is not None:
                        pipe.expire(key, ttl)
                        pipe.expire(self.keys.player(found.decode()), ttl)
                        pipe.expire(self.keys.player_name(player), ttl)
                return await pipe.execute()
        if any(h is not None for h in hashes):
            await self.call(run)

    async def find(self, token_hash: str) -> tuple[str, str] | None:
        """``(player id, name)`` of the token whose hash is ``token_hash``, or
        None; the name its ``player-name`` key holds when it was renamed."""
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
        renamed = await self.name(pid)
        if renamed is not None:
            name = self.names[pid] = renamed
        self._keep(token_hash, pid, name)
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
