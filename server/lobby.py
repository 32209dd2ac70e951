"""The lobby's list (``GET /api/tables``): which tables it shows, its filters, its order (SPEC "HTTP").

A table is listed unless it is unlisted (``visibility``, SPEC "Private
tables": on no node, whatever the query) or finished with nobody connected
to it (no spectator, no person holding a seat connected). The query narrows
the list (every parameter optional, each one a condition):

* ``game``: the game's name;
* ``free``: at least this many free seats (an integer 1 to 9);
* ``bots``: ``true`` (a bot holds a seat) or ``false`` (none does);
* ``min_big_blind``, ``max_big_blind``: the big blind within these bounds
  (chips, integers; a game without blinds is left out when either is given;
  a table of blind levels is listed by its first);
* ``player``: a player's public id: the tables it owns or holds a seat at
  come first (in the same order among themselves), then the others.

A bad value is ``bad_request``. Each entry is :data:`ENTRY_FIELDS` of the
table's public info, ``bots`` the number of seats bots hold.

>>> q = LobbyQuery.parse({"free": "2", "bots": "false"})
>>> q.free, q.bots
(2, False)
>>> LobbyQuery.parse({"free": "x"})
Traceback (most recent call last):
...
cardhall.protocol.errors.ProtocolError: free must be an integer from 1 to 9
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cardhall.engine.options import MAX_CHIPS
from cardhall.engine.registry import engine_class
from cardhall.protocol.errors import ProtocolError

Data = dict[str, Any]

#: the lobby entry's fields (``GET /api/tables``), as in a table's public info, and ``bots``
ENTRY_FIELDS = ("id", "game", "seats", "taken", "spectators", "status", "owner", "options", "password", "bots")


@dataclass(frozen=True, slots=True)
class Listed:
    """One open table as the lobby weighs it: its ``entry``, how many are
    connected to it (``connected``: spectators and connected people holding
    a seat), and the players it belongs to (``players``: its owner and every
    person seated)."""

    entry: Data
    connected: int
    players: frozenset[str]


def from_info(info: Data) -> Listed:
    """A table from its public info (as a cluster's lobby keeps it)."""
    occupants = info.get("occupants") or []
    entry = {k: info.get(k) for k in ENTRY_FIELDS}
    entry["password"] = bool(info.get("password"))
    entry["bots"] = sum(1 for o in occupants if o.get("bot") is not None)
    people = [o for o in occupants if o.get("player") is not None]
    connected = int(info.get("spectators") or 0) + sum(1 for o in people if o.get("connected"))
    players = frozenset([o["player"] for o in people] + ([info["owner"]] if info.get("owner") else []))
    return Listed(entry, connected, players)


def _int(query: Mapping[str, str], name: str, low: int, high: int) -> int | None:
    raw = query.get(name)
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit() and low <= int(raw) <= high):
        raise ProtocolError("bad_request", f"{name} must be an integer from {low} to {high}")
    return int(raw)


@dataclass(frozen=True, slots=True)
class LobbyQuery:
    """The query of ``GET /api/tables`` (see the module docstring)."""

    game: str | None = None
    free: int | None = None
    bots: bool | None = None
    min_big_blind: int | None = None
    max_big_blind: int | None = None
    player: str | None = None

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> LobbyQuery:
        """From the request's query parameters; ProtocolError ``bad_request``."""
        bots = query.get("bots")
        if bots not in (None, "true", "false"):
            raise ProtocolError("bad_request", "bots must be true or false")
        return cls(query.get("game"), _int(query, "free", 1, 9), None if bots is None else bots == "true",
                   _int(query, "min_big_blind", 0, MAX_CHIPS), _int(query, "max_big_blind", 0, MAX_CHIPS),
                   query.get("player"))

    def wants(self, entry: Data) -> bool:
        """Does the table of lobby entry ``entry`` meet every condition?"""
        if self.game is not None and entry["game"] != self.game:
            return False
        if self.free is not None and entry["seats"] - entry["taken"] < self.free:
            return False
        if self.bots is not None and (entry["bots"] > 0) != self.bots:
            return False
        if self.min_big_blind is None and self.max_big_blind is None:
            return True
        blind = big_blind(entry)
        return blind is not None and (self.min_big_blind or 0) <= blind <= (self.max_big_blind or MAX_CHIPS)


def big_blind(entry: Data) -> int | None:
    """The big blind a table's matches start with (chips), or None for a game without blinds."""
    given = (entry.get("options") or {}).get("big_blind")
    if given is None:
        try:
            spec = {o.name: o for o in engine_class(entry["game"]).options_spec}
        except (KeyError, ImportError, AttributeError):
            return None
        option = spec.get("big_blind")
        given = option.default if option is not None else None
    if isinstance(given, list):
        given = max(given, default=None)
    return given if isinstance(given, int) else None


def shown(table: Listed) -> bool:
    """Does the lobby list ``table`` at all (see the module docstring)?"""
    entry = table.entry
    if (entry.get("options") or {}).get("visibility") == "unlisted":
        return False
    return not (entry["status"] == "finished" and table.connected == 0)


def lobby(tables: Iterable[Listed], query: LobbyQuery) -> list[Data]:
    """The lobby entries of ``tables`` (in their order) the list shows for ``query``."""
    out = [t for t in tables if shown(t) and query.wants(t.entry)]
    if query.player is not None:
        out.sort(key=lambda t: query.player not in t.players)
    return [t.entry for t in out]
