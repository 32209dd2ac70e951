"""A private table's invite and password, checked where a request arrives (SPEC "Private tables").

A ``join`` may carry ``invite`` and ``password``; the node whose connection
sent it checks both against the table's lock (:func:`cardhall.server.table.access.lock`:
the digest of its invite, its password's scrypt record), read from the table
when it is served here, else from the cluster's lobby record
(``Topology.lock``), and posts the join with only the outcome
(``Join.invited``, ``Join.password_ok``): neither secret reaches the table,
its input log, the store or a log line. The table decides what the outcome
allows (:mod:`cardhall.server.table.access`). The HTTP endpoints of a table
check the same (:meth:`PrivateAccess.http`), from headers.

Deriving a password's key takes tens of milliseconds (:mod:`cardhall.server.passwords`):
it runs in a worker thread while the connection's next frames wait (the
session reads one frame at a time, so a join keeps its place before them).
Tries are bounded: :data:`TRIES` at once, then one every :data:`TRY_EVERY`
seconds, per connection (every try: each costs a derivation), counted here
on this node, and per player and per client address (the forwarded one
behind a trusted proxy: a websocket's wrong tries and every HTTP try
together), counted by the hall's :class:`~cardhall.server.limits.Limits`
(in Redis: on every node of a cluster together). Each try is counted before
its key is derived, so tries running at once are bounded too; a ``join``'s
right password is then given back to its player and address. Past any
count a request carrying a password gets ``rate_limited`` without a
derivation. A table lets a player in once (:mod:`cardhall.server.table.access`),
so a client sends its password once per table. An invite is 128 random
bits: a wrong one is not counted.
"""

from __future__ import annotations

import dataclasses
import hmac
import time
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from cardhall.protocol.errors import ProtocolError
from cardhall.server import passwords
from cardhall.server.limits import PASSWORD_EVERY, PASSWORD_TRIES, too_many_passwords
from cardhall.server.options import PASSWORD_MAX
from cardhall.server.ratelimit import AddressBudget
from cardhall.server.table.access import lock
from cardhall.server.table.inputs import Join
from cardhall.server.table.privacy import invite_digest

if TYPE_CHECKING:
    from cardhall.server.hall import Hall

Data = dict[str, Any]

#: password tries at once per connection, per player and per client address (SPEC "Limits")
TRIES = PASSWORD_TRIES
#: seconds per try after those (a token bucket refilling one try this often)
TRY_EVERY = PASSWORD_EVERY
#: the longest invite a request may carry (the server's are 22 characters)
INVITE_MAX = 64
#: the HTTP headers that carry a table's invite and password (SPEC "HTTP")
INVITE_HEADER, PASSWORD_HEADER = "x-table-invite", "x-table-password"

_BY_HALL: weakref.WeakKeyDictionary[Hall, PrivateAccess] = weakref.WeakKeyDictionary()


def private_access(hall: Hall) -> PrivateAccess:
    """The hall's one :class:`PrivateAccess` (its counts are shared by the websocket and HTTP)."""
    found = _BY_HALL.get(hall)
    if found is None:
        found = _BY_HALL[hall] = PrivateAccess(hall)
    return found


def _secret(value: Any, field: str, most: int) -> str | None:
    """``value`` when it is a string of 1 to ``most`` characters, None when
    absent; ProtocolError ``bad_request`` otherwise (the value never in the message)."""
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= most:
        raise ProtocolError("bad_request", f"{field} must be a string of 1 to {most} characters")
    return value


def _decoded(raw: str | None) -> str | None:
    """A header's percent-encoded UTF-8 text (None: absent, too long or not UTF-8)."""
    if raw is None or len(raw) > 12 * PASSWORD_MAX:
        return None
    try:
        return unquote(raw, errors="strict")
    except UnicodeDecodeError:
        return None


class PrivateAccess:
    """The checks of one node (see the module docstring)."""

    def __init__(self, hall: Hall) -> None:
        self.hall = hall
        self.by_connection = AddressBudget(TRIES, TRIES * TRY_EVERY)

    async def lock(self, table_id: str) -> Data | None:
        """The lock of open table ``table_id`` (None: a public table without a
        password, or no such open table). Raises ProtocolError ``unavailable``."""
        table = self.hall.tables.get(table_id)
        if table is not None:
            return lock(table.machine)
        return await self.hall.topology.lock(table_id)

    async def join(self, conn_id: int, address: str, table_id: str, join: Join, msg: Mapping[str, Any]) -> Join:
        """``join`` with its request's ``ask`` and the outcome of its ``invite``
        and ``password`` (checked only when it carries them). Raises
        ProtocolError ``bad_request`` (a field), ``rate_limited`` (too many
        wrong passwords), ``unavailable``."""
        invite = _secret(msg.get("invite"), "invite", INVITE_MAX)
        password = _secret(msg.get("password"), "password", PASSWORD_MAX)
        invited = password_ok = False
        if invite is not None or password is not None:
            held = await self.lock(table_id)
            if held is not None:
                invited = invite is not None and hmac.compare_digest(invite_digest(invite), held["invite"])
                if password is not None and held["password"] is not None:
                    password_ok = await self.try_password(held["password"], password, address,
                                                          (f"c{conn_id}", join.player))
        return dataclasses.replace(join, ask=msg.get("ask"), invited=invited, password_ok=password_ok)

    async def try_password(self, record: Data, password: str, address: str,
                           joining: tuple[str, str] | None = None) -> bool:
        """Is ``password`` the one of ``record``? ``joining``: a ``join``'s
        connection key and player (None: an HTTP request's). A join's try
        counts against its connection (each costs a derivation, right or
        wrong), and against its player and ``address`` unless it is right;
        an HTTP request's every try against ``address``. ProtocolError
        ``rate_limited`` past any count (nothing derived then),
        ``unavailable`` (the cluster's counts cannot be read)."""
        now = time.monotonic()
        if joining is not None and (wait := self.by_connection.wait(joining[0], now)) > 0:
            self.hall.metrics.error("rate_limited")
            raise too_many_passwords(wait)
        player = None if joining is None else joining[1]
        try:
            await self.hall.limits.password_try(player, address)
        except ProtocolError as exc:
            self.hall.metrics.error(exc.code)
            raise
        if joining is not None:
            self.by_connection.take(joining[0], now)
        if not await passwords.matches(record, password):
            return False
        if player is not None:  # a join's right password: only wrong ones count against its player and address
            await self.hall.limits.password_right(player, address)
        return True

    async def http(self, held: Data | None, headers: Mapping[str, str], address: str, table_id: str,
                   hands: bool) -> None:
        """May an HTTP request with ``headers`` from ``address`` read table
        ``table_id`` (lock ``held``)? Its info (``hands`` False) needs the
        invite when the table is unlisted; its hands need that and, when
        watching the table needs the password, the password too. Raises
        ProtocolError ``unknown_table`` (word for word as for no such table),
        ``bad_password``, ``rate_limited``. The password header is
        percent-encoded UTF-8 (an HTTP header holds no other text)."""
        if held is None:
            return
        invite = headers.get(INVITE_HEADER)
        invited = invite is not None and hmac.compare_digest(invite_digest(invite), str(held.get("invite")))
        if held.get("unlisted") and not invited:
            raise ProtocolError("unknown_table", f"no table {table_id!r}" if hands else f"no open table {table_id!r}")
        record = held.get("password")
        if hands and record is not None and held.get("spectators"):
            given = _decoded(headers.get(PASSWORD_HEADER))
            if not given or len(given) > PASSWORD_MAX or not await self.try_password(record, given, address):
                raise ProtocolError("bad_password", f"watching this table needs its password: send it in "
                                    f"{PASSWORD_HEADER}, the right one")
