"""Delivering a table's events to its subscribers (delta events).

Subscribers are grouped by viewer (a seat, or None for every spectator; the
table machine keeps the groups). Each event is encoded at most once per
*distinct view* and codec: a seat whose view of an event equals the
spectators' (no private fields for it, no legal actions for it) shares the
spectators' bytes. Every viewer receives every ``seq``. Redaction is the
engine's (``Event.view``), legal actions pass the one gate
(:func:`~cardhall.server.table.records.legal_for`), frames are built by
:func:`cardhall.protocol.frames.event`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from typing import Any, Protocol, cast

from cardhall.protocol import frames
from cardhall.protocol.codec import MSGPACK, Codec
from cardhall.protocol.frames import EventFrame
from cardhall.server.table.records import EventRecord, carries_turn, legal_for

Data = dict[str, Any]


class Peer(Protocol):
    """What delivery needs of a subscriber's connection
    (:class:`~cardhall.server.connection.Connection` is one)."""

    @property
    def codec(self) -> Codec:
        """How its frames are encoded."""

    @property
    def tables(self) -> set[str]:
        """Ids of the tables it has joined."""

    def push(self, payload: Any) -> None:
        """Queue one frame already encoded with :attr:`codec`."""

    def send(self, message: Mapping[str, Any]) -> None:
        """Encode a frame and queue it."""

    def flush(self) -> None:
        """Write what is queued now."""


#: subscriber key -> its connection, or None when it is gone
Resolve = Callable[[Hashable], "Peer | None"]


def view_key(rec: EventRecord, viewer: int | None) -> int | None:
    """The distinct view ``viewer`` has of ``rec``: its seat when it sees
    something the spectators do not (private fields, legal actions), else
    None (shared bytes)."""
    if viewer is None:
        return None
    private = rec.event.private
    if (private and viewer in private) or viewer == rec.legal_seat:
        return viewer
    return None


class Fanout:
    """Publishing one table's events: ``table_id`` names the frames,
    ``resolve`` finds a subscriber's connection."""

    __slots__ = ("primed", "resolve", "table_id")

    def __init__(self, table_id: str, resolve: Resolve) -> None:
        self.table_id = table_id
        self.resolve = resolve
        #: ``(seq, view key) -> msgpack frame`` already encoded for this step's
        #: events (by the cluster's publication): :meth:`publish` uses them
        #: for msgpack subscribers instead of encoding again, then forgets them
        self.primed: dict[tuple[int, int | None], bytes] = {}

    def frame(self, rec: EventRecord, key: int | None, with_legal: bool) -> EventFrame:
        """The ``event`` frame of ``rec`` as ``key`` (a seat or None) sees it;
        ``with_legal``: the turn it carries is still open."""
        legal = legal_for(key, rec.legal_seat, rec.legal) if with_legal else None
        return frames.event(self.table_id, rec.seq, rec.event.view(key), rec.ts, rec.turn, legal)

    def publish(self, records: Iterable[EventRecord], groups: Mapping[int | None, Iterable[Hashable]],
                skip: Collection[Hashable] = ()) -> int:
        """Push ``records`` to the subscribers of ``groups`` (viewer -> keys)
        except ``skip``, then flush each (they leave now, all of a
        subscriber's as one message); returns the number of frames queued."""
        resolve = self.resolve
        members: list[tuple[int | None, list[Peer]]] = []
        for viewer, keys in groups.items():
            peers = [p for k in keys if k not in skip and (p := resolve(k)) is not None]
            if peers:
                members.append((viewer, peers))
        sent = 0
        primed = self.primed
        for rec in records:
            cache: dict[tuple[int | None, str], Any] = {}
            if primed:
                for (seq, key), blob in primed.items():
                    if seq == rec.seq:
                        cache[(key, MSGPACK)] = blob
            for viewer, peers in members:
                key = view_key(rec, viewer)
                for peer in peers:
                    codec = peer.codec
                    ck = (key, codec.name)
                    payload = cache.get(ck)
                    if payload is None:
                        payload = cache[ck] = codec.encode(cast(Data, self.frame(rec, key, True)))
                    peer.push(payload)
                    sent += 1
        for _, peers in members:
            for peer in peers:
                peer.flush()
        primed.clear()
        return sent

    def replay(self, peer: Peer, viewer: int | None, records: Iterable[EventRecord], current_turn: int | None) -> None:
        """Send ``records`` (missed since a client's ``since``) to one
        connection; legal actions only with the events carrying the turn that
        is still open (the one that began it, a ``resumed`` carrying it again)."""
        for rec in records:
            peer.send(self.frame(rec, view_key(rec, viewer), carries_turn(rec, current_turn)))
