"""Players and their tokens (SPEC "Client messages", RULES G-5).

A player is created by ``hello`` without a token: the server draws a public id
and a 128-bit secret token from ``secrets``; the token is kept only as its
SHA-256 (so a store never holds a usable token). ``hello`` with the token
returns the same player, which restores its seats (G-5).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from cardhall.protocol.errors import ProtocolError
from cardhall.server.store.base import Store, StoreUnavailable

TOKEN_BYTES = 16  # 128 bits


@dataclass(slots=True)
class Player:
    """A person or program known to the server: public ``id`` and ``name``."""

    id: str
    name: str


def token_hash(token: str) -> str:
    """Hex SHA-256 of a token (what is stored)."""
    return hashlib.sha256(token.encode()).hexdigest()


class Players:
    """The registry of players, backed by the store."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._by_id: dict[str, Player] = {}

    async def create(self, name: str) -> tuple[Player, str]:
        """A new player and its token."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        player = Player("p_" + secrets.token_hex(8), name)
        try:
            await self._store.save_player(player.id, token_hash(token), name)
        except StoreUnavailable:
            raise ProtocolError("unavailable", "players cannot be saved right now; retry shortly") from None
        self._by_id[player.id] = player
        return player, token

    async def by_token(self, token: str) -> Player:
        """The player holding ``token``; ProtocolError ``unknown_token`` otherwise."""
        if not isinstance(token, str) or not token or len(token) > 128:
            raise ProtocolError("unknown_token", "no player has this token")
        try:
            found = await self._store.find_player(token_hash(token))
        except StoreUnavailable:
            raise ProtocolError("unavailable", "players cannot be read right now; retry shortly") from None
        if found is None:
            raise ProtocolError("unknown_token", "no player has this token")
        pid, name = found
        player = self._by_id.get(pid)
        if player is None:
            player = self._by_id[pid] = Player(pid, name)
        return player

    def get(self, pid: str) -> Player | None:
        return self._by_id.get(pid)
