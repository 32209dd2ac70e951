"""A table's subscribers and the delivery of its events (issue 4, delta events).

Subscribers are grouped by viewer (a seat, or None for every spectator). Each
event is encoded at most once per *distinct view* and codec: a seat whose view
of an event equals the spectators' (no private fields for it, no legal actions
for it) shares the spectators' bytes. Every viewer receives every ``seq``.
Redaction is the engine's: ``Event.view(viewer)``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cardhall.server.connection import Connection
    from cardhall.server.table import EventRecord, Table

Data = dict[str, Any]


class Fanout:
    """Subscribers of one table, and publishing to them."""

    __slots__ = ("table", "subs", "groups")

    def __init__(self, table: Table) -> None:
        self.table = table
        self.subs: dict[Connection, int | None] = {}
        self.groups: dict[int | None, dict[Connection, None]] = {}

    # -- membership ---------------------------------------------------------
    def subscribe(self, conn: Connection, viewer: int | None) -> int | None | bool:
        """Subscribe ``conn`` as ``viewer``; returns its previous viewer, or False."""
        previous = self.subs.get(conn, False)
        if previous is not False:
            self.groups[previous].pop(conn, None)  # type: ignore[index]
        self.subs[conn] = viewer
        self.groups.setdefault(viewer, {})[conn] = None
        return previous

    def unsubscribe(self, conn: Connection) -> int | None:
        """Forget ``conn``; returns the viewer it had (None also when it had none)."""
        viewer = self.subs.pop(conn, None)
        group = self.groups.get(viewer)
        if group is not None:
            group.pop(conn, None)
        return viewer

    def viewer(self, conn: Connection) -> int | None | bool:
        """``conn``'s viewer (a seat or None), or False when not subscribed."""
        return self.subs.get(conn, False)

    def presence(self, seat: int) -> int:
        """How many connections watch as ``seat``."""
        return len(self.groups.get(seat, ()))

    @property
    def count(self) -> int:
        return len(self.subs)

    @property
    def spectators(self) -> int:
        return len(self.groups.get(None, ()))

    def connections(self) -> list[Connection]:
        return list(self.subs)

    # -- delivery -----------------------------------------------------------
    def frame(self, rec: EventRecord, key: int | None, with_legal: bool) -> Data:
        """The ``event`` frame of ``rec`` as ``key`` (a seat or None) sees it."""
        out: Data = {"type": "event", "table": self.table.id, "seq": rec.seq,
                     "event": rec.event.view(key), "ts": rec.ts}
        if rec.turn is not None:
            out["turn"] = rec.turn
            if with_legal and key is not None and key == rec.legal_seat:
                out["legal"] = rec.legal
        return out

    @staticmethod
    def view_key(rec: EventRecord, viewer: int | None) -> int | None:
        """The distinct view ``viewer`` has of ``rec``: its seat when it sees
        something the spectators do not, else None (shared bytes)."""
        if viewer is None:
            return None
        private = rec.event.private
        if (private and viewer in private) or viewer == rec.legal_seat:
            return viewer
        return None

    def publish(self, records: Iterable[EventRecord], skip: Collection[Connection] = ()) -> int:
        """Push ``records`` to every subscriber except ``skip``, then flush each
        (they leave now, all of a subscriber's as one message); returns the
        number of frames queued."""
        sent = 0
        groups = [(viewer, list(members)) for viewer, members in self.groups.items() if members]
        if skip:
            groups = [(v, [c for c in m if c not in skip]) for v, m in groups]
        for rec in records:
            cache: dict[tuple[int | None, str], Any] = {}
            for viewer, members in groups:
                key = self.view_key(rec, viewer)
                for conn in members:
                    codec = conn.codec
                    ck = (key, codec.name)
                    payload = cache.get(ck)
                    if payload is None:
                        payload = cache[ck] = codec.encode(self.frame(rec, key, True))
                    conn.push(payload)
                    sent += 1
        for _, members in groups:
            for conn in members:
                conn.flush()
        return sent

    def replay(self, conn: Connection, viewer: int | None, records: Iterable[EventRecord],
               current_turn: int | None) -> None:
        """Send ``records`` (missed since a client's ``since``) to one connection;
        legal actions only with the turn that is still current."""
        for rec in records:
            key = self.view_key(rec, viewer)
            conn.send(self.frame(rec, key, rec.seq == current_turn))
