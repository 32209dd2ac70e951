"""The per-player and per-address limits: one interface, two topologies (SPEC "Limits").

What a client could multiply by opening more connections, or by reaching
more nodes of a cluster, is counted here, per player or per client address:

* **open tables** owned by one player (``max_tables_per_player``) and created
  from one address (``max_tables_per_address``), counted from creation until
  the table closes, is deleted or is quarantined;
* **new players** (``hello`` without a token) from one address
  (``new_players_per_address`` per ``new_players_window``: a token bucket);
* **chat** messages of one player, all its connections together
  (:data:`~cardhall.server.chat.BURST` at once, one every ``1 / RATE`` s),
  and from one address, all its players and connections together
  (:data:`~cardhall.server.chat.ADDRESS_BURST` at once, one every
  ``1 / ADDRESS_RATE`` s); a message counts against both, its player's first:
  one the address refuses has spent its player's token (the slack falls on
  the sender), while one its player's bucket refuses spends none of the
  address's (a flooding player cannot use up its neighbours' share);
* **renames** of one player (``rename``), all its connections together
  (:data:`RENAME_BURST` at once, one every ``1 / RENAME_RATE`` s): each one
  is told to every table where the player sits or watches;
* **table passwords** tried (SPEC "Private tables") by one player, all its
  connections together, and from one address, all its players and
  connections and its HTTP requests together (:data:`PASSWORD_TRIES` at
  once, one every :data:`PASSWORD_EVERY` s): a try is counted before its
  key is derived (so tries running at once are bounded too), against its
  player first, then its address, and a ``join``'s right password is given
  back (:meth:`Limits.password_right`): the wrong ones count. What each
  connection tries is bounded on its node (:mod:`cardhall.server.private_access`);
* **websockets** open at once from one client address (``max_connections_per_ip``;
  the TCP connections counted at accept stay the gate's, per node:
  :mod:`cardhall.server.gate`).

Two implementations of :class:`Limits`:

* :class:`MemoryLimits` (this module): counted in this process (the memory
  store: one process serves everything);
* :class:`~cardhall.server.store.redis_limits.RedisLimits`: one count in
  Redis for every node on the store's Redis and prefix (a cluster, or one node
  on Redis), answering the same codes at the same counts.

:func:`cardhall.server.wiring.limits_for` picks one by the store; the hall,
the players and the websocket session see only :class:`Limits`.
"""

from __future__ import annotations

import math
import time
from typing import Protocol

from cardhall.protocol.errors import ProtocolError
from cardhall.server.chat import ADDRESS_BURST, ADDRESS_RATE, BURST, RATE
from cardhall.server.config import Settings
from cardhall.server.ratelimit import AddressBudget

#: renames a player may make at once (SPEC "Limits")
RENAME_BURST = 3.0
#: renames per second after the burst (one every 10 s)
RENAME_RATE = 0.1
#: table passwords tried at once per player and per address (and per connection, on its node)
PASSWORD_TRIES = 5
#: seconds per password try after those (a token bucket refilling one try this often)
PASSWORD_EVERY = 10.0


def too_many_tables(player: bool, limit: int) -> ProtocolError:
    """The refusal of a table past ``limit`` open tables of one player
    (``player``) or of one client address.

    >>> too_many_tables(False, 3).message
    'at most 3 open tables per client address'
    """
    per = "player" if player else "client address"
    return ProtocolError("too_many_tables", f"at most {limit} open tables per {per}")


def too_many_players(settings: Settings) -> ProtocolError:
    """The refusal of a ``hello`` without a token past the address's budget."""
    return ProtocolError("rate_limited", f"at most {settings.new_players_per_address} new players per "
                         f"{settings.new_players_window:g} s from one address; say hello with your token, "
                         "or retry later")


def too_much_chat() -> ProtocolError:
    """The refusal of a ``chat`` message past the player's rate."""
    return ProtocolError("rate_limited", f"too many chat messages: at most {BURST:g} per {BURST / RATE:g} s")


def too_much_chat_from_address() -> ProtocolError:
    """The refusal of a ``chat`` message past its client address's rate.

    >>> too_much_chat_from_address().message
    'too many chat messages from this address: at most 15 per 10 s'
    """
    return ProtocolError("rate_limited", f"too many chat messages from this address: at most {ADDRESS_BURST:g} "
                         f"per {ADDRESS_BURST / ADDRESS_RATE:g} s")


def too_many_renames() -> ProtocolError:
    """The refusal of a ``rename`` past the player's rate.

    >>> too_many_renames().message
    'too many renames: at most 3 at once, then one every 10 s'
    """
    return ProtocolError("rate_limited", f"too many renames: at most {RENAME_BURST:g} at once, "
                         f"then one every {1 / RENAME_RATE:g} s")


def too_many_passwords(wait: float) -> ProtocolError:
    """The refusal of a table password past a count of tries, ``wait``
    seconds before the next (nothing is derived, the right password too).

    >>> too_many_passwords(2.2).message
    'too many table passwords tried: retry in 3 s'
    """
    return ProtocolError("rate_limited", f"too many table passwords tried: retry in {math.ceil(wait)} s")


class Limits(Protocol):
    """The counts behind the limits above. Every refusal is a ProtocolError
    with the code and message the limit has on a single node; ``unavailable``
    when the count cannot be read (Redis down)."""

    async def take_table(self, table: str, owner: str | None, address: str | None) -> None:
        """Count new table ``table`` against ``owner`` (a player id; None: no
        owner, not counted) and ``address`` (the creating client's; None: an
        operator's, not counted), or refuse it: ProtocolError
        ``too_many_tables`` (the player's limit named first), ``unavailable``."""

    async def release_table(self, table: str) -> None:
        """``table`` stopped being open (closed, deleted, quarantined, or its
        creation failed): its counts go. Never raises (a count that could not
        be released heals: :mod:`cardhall.server.store.redis_limits`); a
        table not counted, or released before, is ignored."""

    def restored(self, table: str, owner: str | None) -> None:
        """``table`` (owned by ``owner``) is served here from the store."""

    async def new_player(self, address: str) -> None:
        """Count a new player from ``address`` or refuse it: ProtocolError
        ``rate_limited``, ``unavailable``."""

    async def chat(self, player: str, address: str) -> None:
        """Count a chat message of ``player`` sent from client ``address``
        against the player's bucket, then the address's, or refuse it:
        ProtocolError ``rate_limited`` (:func:`too_much_chat`, or
        :func:`too_much_chat_from_address` with the player's token spent),
        ``unavailable``."""

    async def rename(self, player: str) -> None:
        """Count a rename of ``player`` against its bucket, or refuse it:
        ProtocolError ``rate_limited`` (:func:`too_many_renames`), ``unavailable``."""

    async def password_try(self, player: str | None, address: str) -> None:
        """Count a table password tried by ``player`` (None: an HTTP request's)
        from client ``address``, before its key is derived: its player's
        bucket, then its address's, or refuse it: ProtocolError
        ``rate_limited`` (:func:`too_many_passwords`; one the address refuses
        has spent its player's token), ``unavailable``."""

    async def password_right(self, player: str, address: str) -> None:
        """The password ``player`` tried from ``address`` (counted by
        :meth:`password_try`) was right: both tokens are given back, so only
        wrong ones count. Never raises (a token not given back is one try less
        for a while)."""

    async def open_socket(self, address: str) -> bool:
        """Count a websocket from ``address``; False (not counted) when the
        address has ``max_connections_per_ip`` open already."""

    def close_socket(self, address: str) -> None:
        """A websocket from ``address`` that :meth:`open_socket` counted closed."""

    async def sweep(self, now: float) -> None:
        """Housekeeping, called by the hall's sweeper (``now``: monotonic seconds)."""


class MemoryLimits:
    """:class:`Limits` counted in this process's memory: each open table's
    ``(owner, address)`` by id, a token bucket per address for new players
    and per player and per address for chat and for table passwords, per player for renames
    (:class:`~cardhall.server.ratelimit.AddressBudget`, kept while not
    full), websockets per address.

    >>> import asyncio
    >>> limits = MemoryLimits(Settings(max_tables_per_player=1))
    >>> asyncio.run(limits.take_table("t_1", "p1", "a"))
    >>> asyncio.run(limits.take_table("t_2", "p1", "a"))
    Traceback (most recent call last):
    ...
    cardhall.protocol.errors.ProtocolError: at most 1 open tables per player
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._tables: dict[str, tuple[str | None, str | None]] = {}
        self._owned: dict[str, int] = {}
        self._from: dict[str, int] = {}
        per, window = settings.new_players_per_address, settings.new_players_window
        self._players = AddressBudget(per, window) if per > 0 else None
        self._chat = AddressBudget(int(BURST), BURST / RATE)
        self._chat_from = AddressBudget(int(ADDRESS_BURST), ADDRESS_BURST / ADDRESS_RATE)
        self._renames = AddressBudget(int(RENAME_BURST), RENAME_BURST / RENAME_RATE)
        self._passwords = AddressBudget(PASSWORD_TRIES, PASSWORD_TRIES * PASSWORD_EVERY)
        self._passwords_from = AddressBudget(PASSWORD_TRIES, PASSWORD_TRIES * PASSWORD_EVERY)
        self._sockets: dict[str, int] = {}

    async def take_table(self, table: str, owner: str | None, address: str | None) -> None:
        settings = self.settings
        if address is not None and not settings.max_tables_per_address:
            address = None
        if owner is not None and self._owned.get(owner, 0) >= settings.max_tables_per_player:
            raise too_many_tables(True, settings.max_tables_per_player)
        if address is not None and self._from.get(address, 0) >= settings.max_tables_per_address:
            raise too_many_tables(False, settings.max_tables_per_address)
        self._count(table, owner, address)

    def _count(self, table: str, owner: str | None, address: str | None) -> None:
        if table in self._tables:
            return
        self._tables[table] = (owner, address)
        if owner is not None:
            self._owned[owner] = self._owned.get(owner, 0) + 1
        if address is not None:
            self._from[address] = self._from.get(address, 0) + 1

    async def release_table(self, table: str) -> None:
        owner, address = self._tables.pop(table, (None, None))
        for counts, key in ((self._owned, owner), (self._from, address)):
            if key is not None:
                left = counts.get(key, 1) - 1
                if left > 0:
                    counts[key] = left
                else:
                    counts.pop(key, None)

    def restored(self, table: str, owner: str | None) -> None:
        """Counted against ``owner`` (its creator's address is not part of the
        table's state: only the memory store restores here, in one process)."""
        self._count(table, owner, None)

    async def new_player(self, address: str) -> None:
        if self._players is not None and not self._players.take(address, time.monotonic()):
            raise too_many_players(self.settings)

    async def chat(self, player: str, address: str) -> None:
        now = time.monotonic()
        if not self._chat.take(player, now):
            raise too_much_chat()
        if not self._chat_from.take(address, now):
            raise too_much_chat_from_address()

    async def rename(self, player: str) -> None:
        if not self._renames.take(player, time.monotonic()):
            raise too_many_renames()

    async def password_try(self, player: str | None, address: str) -> None:
        now = time.monotonic()
        for budget, key in ((self._passwords, player), (self._passwords_from, address)):
            if key is not None and not budget.take(key, now):
                raise too_many_passwords(budget.wait(key, now))

    async def password_right(self, player: str, address: str) -> None:
        now = time.monotonic()
        self._passwords.give(player, now)
        self._passwords_from.give(address, now)

    async def open_socket(self, address: str) -> bool:
        limit = self.settings.max_connections_per_ip
        if not limit:
            return True
        here = self._sockets.get(address, 0)
        if here >= limit:
            return False
        self._sockets[address] = here + 1
        return True

    def close_socket(self, address: str) -> None:
        if not self.settings.max_connections_per_ip:
            return
        left = self._sockets.get(address, 1) - 1
        if left > 0:
            self._sockets[address] = left
        else:
            self._sockets.pop(address, None)

    async def sweep(self, now: float) -> None:
        return None
