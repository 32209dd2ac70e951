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


class TableSet(Protocol):
    """The tables a subscriber has joined, as delivery changes them (a
    connection's is a ``set[str]``)."""

    def add(self, table: str) -> None:
        """It joined ``table``."""

    def discard(self, table: str) -> None:
        """It left ``table``."""


class Peer(Protocol):
    """What delivery needs of a subscriber's connection
    (:class:`~cardhall.server.connection.Connection` is one)."""

    @property
    def codec(self) -> Codec:
        """How its frames are encoded."""

    @property
    def tables(self) -> TableSet:
        """Ids of the tables it has joined."""

    def push(self, payload: Any) -> None:
        """Queue one frame already encoded with :attr:`codec`."""

    def deliver(self, payloads: list[Any]) -> None:
        """Queue the frames ``payloads`` (encoded, in order) and write them now:
        a step's frames for this subscriber in one call."""

    def send(self, message: Mapping[str, Any]) -> None:
        """Encode a frame and queue it."""

    def flush(self) -> None:
        """Write what is queued now."""

    def follows(self, seq: int) -> None:
        """The frames sent next follow the table's ``seq`` (a subscriber on
        another node delivers them after that event; a local connection gets
        them in order by construction)."""

    def answers_join(self, viewer: int | None) -> None:
        """The frames sent next answer a join as ``viewer`` (the view the
        table gave the subscriber: a seat, or None for a spectator)."""


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
        subscriber's as one message); returns the number of frames queued.

        Each subscriber's frames are gathered first and handed over in one
        call (``deliver``: queued and written at once), so a connection costs
        one call and one write per step, not one per event."""
        resolve = self.resolve
        # viewer -> its connections by codec: each (view, codec) encoded once per record
        members: list[tuple[int | None, list[tuple[Codec, list[list[Any]]]]]] = []
        outboxes: list[tuple[Peer, list[Any]]] = []
        for viewer, keys in groups.items():
            by_codec: dict[str, tuple[Codec, list[list[Any]]]] = {}
            for k in keys:
                if k in skip or (peer := resolve(k)) is None:
                    continue
                codec = peer.codec
                entry = by_codec.get(codec.name)
                if entry is None:
                    entry = by_codec[codec.name] = (codec, [])
                outbox: list[Any] = []
                entry[1].append(outbox)
                outboxes.append((peer, outbox))
            if by_codec:
                members.append((viewer, list(by_codec.values())))
        if not outboxes:
            self.primed.clear()
            return 0
        primed = self.primed
        for rec in records:
            cache: dict[tuple[int | None, str], Any] = {}
            if primed:
                for (seq, key), blob in primed.items():
                    if seq == rec.seq:
                        cache[(key, MSGPACK)] = blob
            for viewer, codecs in members:
                key = view_key(rec, viewer)
                for codec, boxes in codecs:
                    ck = (key, codec.name)
                    payload = cache.get(ck)
                    if payload is None:
                        payload = cache[ck] = codec.encode(cast(Data, self.frame(rec, key, True)))
                    for box in boxes:
                        box.append(payload)
        sent = 0
        for peer, outbox in outboxes:
            sent += len(outbox)
            peer.deliver(outbox)
        primed.clear()
        return sent

    def replay(self, peer: Peer, viewer: int | None, records: Iterable[EventRecord], current_turn: int | None) -> None:
        """Send ``records`` (missed since a client's ``since``) to one
        connection; legal actions only with the events carrying the turn that
        is still open (the one that began it, a ``resumed`` carrying it again)."""
        for rec in records:
            peer.send(self.frame(rec, view_key(rec, viewer), carries_turn(rec, current_turn)))
