"""Players and their tokens (SPEC "Client messages", RULES G-5).

A player is created by ``hello`` without a token: the server draws a public id
and a 128-bit secret token from ``secrets``; the token is kept only as its
SHA-256 (so a store never holds a usable token). ``hello`` with the token
returns the same player, which restores its seats (G-5).

Two limits keep a public server's memory bounded (deploy/README.md, "Limits"):
each client address may create ``new_players_per_address`` players per
``new_players_window`` seconds (counted by the hall's
:class:`~cardhall.server.limits.Limits`: across every node on one Redis), and a player that has had no connection, no seat and no open table
it owns for ``player_expiry`` seconds is forgotten (:meth:`Players.sweep`;
on Redis its keys expire that long after their last use). A player whose
token holds a seat or owns a table is never forgotten (G-5).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Set
from dataclasses import dataclass

from cardhall.protocol.errors import ProtocolError
from cardhall.server.store.base import Store, StoreUnavailable

log = logging.getLogger("cardhall.players")

TOKEN_BYTES = 16  # 128 bits

#: the longest gap between two sweeps of idle players, seconds
SWEEP_EVERY = 60.0


@dataclass(slots=True)
class Player:
    """A person or program known to the server: public ``id`` and ``name``;
    ``token_hash``: the hex SHA-256 of its token (empty when not known here);
    ``seen``: monotonic seconds it was last in use on this node."""

    id: str
    name: str
    token_hash: str = ""
    seen: float = 0.0


def token_hash(token: str) -> str:
    """Hex SHA-256 of a token (what is stored)."""
    return hashlib.sha256(token.encode()).hexdigest()


def in_use(connected: Iterable[Player | None], tables: Iterable[Iterable[str | None]]) -> set[str]:
    """Ids of the players in use on a node: ``connected``, the player of each
    open connection (None before its ``hello``); ``tables``, for each open
    table, its owner's and its seated players' ids (None for no owner, a bot).

    >>> sorted(in_use([Player("p1", "a"), None], [("p2", None, "p3")]))
    ['p1', 'p2', 'p3']
    """
    live = {p.id for p in connected if p is not None}
    for ids in tables:
        live.update(pid for pid in ids if pid is not None)
    return live


class Players:
    """The registry of players, backed by the store.

    ``admit(address)``: counts a new player from a client address, raising
    ProtocolError (``rate_limited``, ``unavailable``) past its budget
    (:meth:`cardhall.server.limits.Limits.new_player`; None: no limit);
    ``expiry``: seconds of disuse after which a player is forgotten (0: never)."""

    def __init__(self, store: Store, admit: Callable[[str], Awaitable[None]] | None = None,
                 expiry: float = 0.0) -> None:
        self._store = store
        self._by_id: dict[str, Player] = {}
        self._admit = admit
        self.expiry = expiry
        self._next_sweep = 0.0
        #: sweeps that ran (not skipped for being too soon after the last)
        self.sweeps = 0

    def __len__(self) -> int:
        """Players this node holds in memory."""
        return len(self._by_id)

    async def create(self, name: str, address: str = "", exempt: bool = False) -> tuple[Player, str]:
        """A new player and its token. ``address``: the client's (counted by
        ``admit`` unless ``exempt``). Raises ProtocolError ``rate_limited``
        past the address's budget, ``unavailable`` when the store cannot
        count or save it."""
        if self._admit is not None and not exempt:
            await self._admit(address)
        now = time.monotonic()
        token = secrets.token_urlsafe(TOKEN_BYTES)
        hashed = token_hash(token)
        player = Player("p_" + secrets.token_hex(8), name, hashed, now)
        try:
            await self._store.save_player(player.id, hashed, name)
        except StoreUnavailable:
            raise ProtocolError("unavailable", "players cannot be saved right now; retry shortly") from None
        self._by_id[player.id] = player
        return player, token

    async def by_token(self, token: str) -> Player:
        """The player holding ``token``; ProtocolError ``unknown_token`` otherwise
        (``unavailable`` when the store cannot be read)."""
        if not isinstance(token, str) or not token or len(token) > 128:
            raise ProtocolError("unknown_token", "no player has this token")
        hashed = token_hash(token)
        try:
            found = await self._store.find_player(hashed)
        except StoreUnavailable:
            raise ProtocolError("unavailable", "players cannot be read right now; retry shortly") from None
        if found is None:
            raise ProtocolError("unknown_token", "no player has this token")
        pid, name = found
        player = self._by_id.get(pid)
        if player is None:
            player = self._by_id[pid] = Player(pid, name, hashed)
        player.token_hash = hashed
        player.seen = time.monotonic()
        return player

    def get(self, pid: str) -> Player | None:
        """The player with id ``pid`` if this node holds it."""
        return self._by_id.get(pid)

    async def identified(self, pid: str, claimed: str | None, name: str) -> tuple[Player, str]:
        """The player of an operator-issued identity (SPEC "Identity"):
        public id ``pid``, ``claimed`` its token's checked ``name`` claim (or
        None), ``name`` the hello's. The one held here, else a new record named
        by its last rename (``Store.player_name``), else ``claimed``, else
        ``name``; either way with a new resume token, saved (earlier tokens of
        the player stay valid: another device may hold one). Not counted as a
        new player (the operator vouches for it). Raises ProtocolError
        ``unavailable`` when the store cannot be read or written."""
        try:
            if pid not in self._by_id:
                chosen = await self._store.player_name(pid)
                # one Player per id, even when two hellos of it read the store at once
                self._by_id.setdefault(pid, Player(pid, chosen or claimed or name, "", time.monotonic()))
            player = self._by_id[pid]
            player.seen = time.monotonic()  # in use: not swept while its token is saved
            token = secrets.token_urlsafe(TOKEN_BYTES)
            hashed = token_hash(token)
            await self._store.save_player(pid, hashed, player.name)
        except StoreUnavailable:
            raise ProtocolError("unavailable", "players cannot be saved right now; retry shortly") from None
        player.token_hash = hashed
        player.seen = time.monotonic()
        return player, token

    async def save_name(self, player: Player, name: str) -> None:
        """Write ``player``'s new ``name`` (already checked: SPEC "Names") to
        the store; :meth:`renamed` then applies it on each node. Raises
        ProtocolError ``unavailable`` when the store cannot write it."""
        try:
            await self._store.rename_player(player.id, player.token_hash, name)
        except StoreUnavailable:
            raise ProtocolError("unavailable", "players cannot be saved right now; retry shortly") from None

    def renamed(self, pid: str, token_hash: str, name: str) -> None:
        """Player ``pid`` (token hash ``token_hash``, empty when unknown) is
        named ``name`` now (saved by :meth:`save_name`, on this node or
        another): the player held here, and the store's cache, take it."""
        player = self._by_id.get(pid)
        if player is not None:
            player.name = name
        self._store.player_renamed(pid, token_hash, name)

    async def sweep(self, live: Set[str], now: float | None = None) -> int:
        """Forget the players idle for ``expiry`` seconds; returns how many.
        ``live``: ids of the players in use on this node (connected, seated
        at a table here, or owning an open table here): their time starts
        again, in the store too (``Store.touch_players``). Runs at most every
        ``min(SWEEP_EVERY, expiry / 4)`` seconds (``now``: monotonic seconds);
        a store that cannot be reached is logged and tried at the next sweep."""
        if self.expiry <= 0:
            return 0
        now = time.monotonic() if now is None else now
        if now < self._next_sweep:
            return 0
        self._next_sweep = now + min(SWEEP_EVERY, self.expiry / 4)
        self.sweeps += 1
        for pid in live:
            player = self._by_id.get(pid)
            if player is not None:
                player.seen = now
        idle = [p for p in self._by_id.values() if now - p.seen >= self.expiry and p.id not in live]
        for player in idle:
            del self._by_id[player.id]
        try:
            for player in idle:
                if player.token_hash:
                    await self._store.forget_player(player.token_hash)
            await self._store.touch_players(sorted(live))
        except StoreUnavailable as exc:
            log.warning("players in use could not be renewed in the store: %s", exc)
        if idle:
            log.info("forgot %d idle players (%d held)", len(idle), len(self._by_id))
        return len(idle)
