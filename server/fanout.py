"""Delivering a table's events to its subscribers (delta events).

Subscribers are grouped by viewer (a seat, or None for every spectator; the
table machine keeps the groups). A step's events are encoded at most once per
*distinct view* and codec: a seat whose view of the events equals the
spectators' (no private fields for it, no legal actions for it) shares the
spectators' bytes, and every connection that gets the same frames in the same
form (one ``batch`` message, or ``events`` groups: SPEC "Batching and
grouping") shares that message too, built once. Every viewer receives every
``seq``. Redaction is the engine's (``Event.view``), legal actions pass the
one gate (:func:`~cardhall.server.table.records.legal_for`), frames are built
by :mod:`cardhall.protocol.frames`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from typing import Any, Protocol, cast

from cardhall.protocol import frames
from cardhall.protocol.codec import MSGPACK, Codec
from cardhall.protocol.compact import Layouts
from cardhall.protocol.frames import EventFrame, EventsFrame
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

    @property
    def batch(self) -> bool:
        """It takes ``batch`` frames (``hello.batch``)."""

    @property
    def group(self) -> bool:
        """It takes its events as ``events`` frames (``hello.group``, 1.7)."""

    @property
    def compact(self) -> Layouts | None:
        """The layouts it takes its events under as compact arrays
        (``hello.compact``, 1.8), or None."""

    def push(self, payload: Any) -> None:
        """Queue one frame already encoded with :attr:`codec`."""

    def deliver(self, payloads: list[Any], message: Any = None) -> None:
        """Queue the frames ``payloads`` (encoded, in order) and write them now:
        a step's frames for this subscriber in one call. ``message``: the same
        frames as one ``batch`` already encoded (shared by the connections
        that get them), for a subscriber that takes batches."""

    def send(self, message: Mapping[str, Any]) -> None:
        """Encode a frame and queue it."""

    def flush(self) -> None:
        """Write what is queued now."""

    def follows(self, seq: int) -> None:
        """The frames sent next follow the table's ``seq`` (a subscriber on
        another node delivers them after that event; a local connection gets
        them in order by construction)."""

    def answers_join(self, viewer: int | None, game: str | None = None) -> None:
        """The frames sent next answer a join as ``viewer`` (the view the
        table gave the subscriber: a seat, or None for a spectator) at a table
        of ``game``."""


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


def runs(records: Sequence[EventRecord]) -> list[Sequence[EventRecord]]:
    """``records`` (consecutive seqs) cut where ``ts`` changes: each run is
    one ``events`` frame (the events of one step share its ``ts``)."""
    out: list[Sequence[EventRecord]] = []
    start = 0
    for i in range(1, len(records)):
        if records[i].ts != records[i - 1].ts or records[i].seq != records[i - 1].seq + 1:
            out.append(records[start:i])
            start = i
    out.append(records[start:])
    return out


class Fanout:
    """Publishing one table's events: ``table_id`` names the frames,
    ``resolve`` finds a subscriber's connection, ``game`` (the table's) picks
    the layouts of compact arrays (1.8, :mod:`cardhall.protocol.compact`)."""

    __slots__ = ("game", "primed", "resolve", "table_id")

    def __init__(self, table_id: str, resolve: Resolve, game: str | None = None) -> None:
        self.table_id = table_id
        self.resolve = resolve
        self.game = game
        #: ``(seq, view key) -> msgpack frame`` already encoded for this step's
        #: events (by the cluster's publication): :meth:`publish` uses them
        #: for msgpack subscribers instead of encoding again, then forgets them
        self.primed: dict[tuple[int, int | None], bytes] = {}

    def frame(self, rec: EventRecord, key: int | None, with_legal: bool) -> EventFrame:
        """The ``event`` frame of ``rec`` as ``key`` (a seat or None) sees it;
        ``with_legal``: the turn it carries is still open."""
        legal = legal_for(key, rec.legal_seat, rec.legal) if with_legal else None
        return frames.event(self.table_id, rec.seq, rec.event.view(key), rec.ts, rec.turn, legal)

    def group(self, records: Sequence[EventRecord], keys: Sequence[int | None], with_legal: bool | None = None,
              current_turn: int | None = None) -> EventsFrame:
        """The ``events`` frame of ``records`` (one run: consecutive seqs, one
        ``ts``), each as its ``keys`` entry (a seat or None) sees it; legal
        actions on every event carrying a turn (``with_legal``), or only on
        those carrying ``current_turn`` (a replay: :func:`carries_turn`)."""
        items = []
        for rec, key in zip(records, keys):
            shown = with_legal if with_legal is not None else carries_turn(rec, current_turn)
            legal = legal_for(key, rec.legal_seat, rec.legal) if shown else None
            items.append(frames.event_item(rec.event.view(key), rec.turn, legal))
        first = records[0]
        return frames.events(self.table_id, first.seq, first.ts, items)

    def compact(self, records: Sequence[EventRecord], keys: Sequence[int | None], layouts: Layouts,
                elements: dict[tuple[int, int | None, Layouts], Any]) -> list[Any]:
        """The compact array (1.8) of ``records`` (one run) as :meth:`group`
        with ``with_legal`` writes them, each element made once per step and
        view and layouts (``elements``: (seq, view key, layouts) -> element,
        shared by the classes of one :meth:`publish`)."""
        first = records[0]
        out: list[Any] = [self.table_id, first.seq, first.ts]
        game = self.game
        for rec, key in zip(records, keys):
            element = elements.get((rec.seq, key, layouts))
            if element is None:
                legal = legal_for(key, rec.legal_seat, rec.legal) if rec.turn is not None else None
                element = elements[(rec.seq, key, layouts)] = layouts.element(game, rec.event.view(key), rec.turn, legal)
            out.append(element)
        return out

    def publish(self, records: Sequence[EventRecord], groups: Mapping[int | None, Iterable[Hashable]],
                skip: Collection[Hashable] = (), tails: Mapping[Hashable, list[Mapping[str, Any]]] | None = None) -> int:
        """Push ``records`` (consecutive seqs) to the subscribers of ``groups``
        (viewer -> keys) except ``skip``, each followed by its ``tails`` entry
        (frames for it: the replies of the step, so they leave in the same
        message), and write them; returns the number of frames queued.

        Subscribers are sorted by what they get: the view of each record
        (*signature*), the codec, grouped or not (``events`` frames), compact
        or not (arrays, 1.8); each
        such class is encoded once, and for those that take batches its one
        ``batch`` message is built once and shared (the websocket layer then
        frames it once: ``server/ws_protocol.py``). Each subscriber gets its
        frames in one call (``deliver``: queued and written at once)."""
        resolve = self.resolve
        classes: dict[tuple[tuple[int | None, ...], Codec, bool, Layouts | None], list[tuple[Hashable, Peer]]] = {}
        shared_view: tuple[int | None, ...] = (None,) * len(records)
        # the seats with a view of their own of some record (private fields, legal actions): view_key, once
        views_of = [(rec.event.private or (), rec.legal_seat) for rec in records]
        special: set[int | None] = {seat for _, seat in views_of}
        for private, _ in views_of:
            special.update(private)
        for viewer, keys in groups.items():
            if viewer is None or viewer not in special:
                signature = shared_view
            else:
                signature = tuple(viewer if viewer in private or viewer == seat else None for private, seat in views_of)
            for k in keys:
                if k in skip or (peer := resolve(k)) is None:
                    continue
                cls = (signature, peer.codec, peer.group, peer.compact)
                members = classes.get(cls)
                if members is None:
                    classes[cls] = [(k, peer)]
                else:
                    members.append((k, peer))
        primed = self.primed
        if not classes:
            primed.clear()
            return 0
        cuts = runs(records) if any(cls[2] for cls in classes) else []
        encoded: dict[tuple[int, int | None, str], Any] = {}  # (seq, view key, codec) -> an event frame
        elements: dict[tuple[int, int | None, Layouts], Any] = {}  # (seq, view key, layouts) -> compact element
        if primed:
            for (seq, key), blob in primed.items():
                encoded[(seq, key, MSGPACK)] = blob
        sent = 0
        for (signature, codec, grouped, layouts), members in classes.items():
            name = codec.name
            payloads: list[Any]
            if grouped:
                payloads = []
                at = 0
                for run in cuts:
                    keys = signature[at:at + len(run)]
                    at += len(run)
                    if layouts is None:
                        payloads.append(codec.encode(cast(Data, self.group(run, keys, True))))
                    else:
                        payloads.append(codec.encode(self.compact(run, keys, layouts, elements)))
            else:
                payloads = []
                for rec, key in zip(records, signature):
                    ek = (rec.seq, key, name)
                    payload = encoded.get(ek)
                    if payload is None:
                        payload = encoded[ek] = codec.encode(cast(Data, self.frame(rec, key, True)))
                    payloads.append(payload)
            shared: Any = None
            for k, peer in members:
                tail = tails.get(k) if tails else None
                if tail:
                    own = payloads + [codec.encode(cast(Data, frame)) for frame in tail]
                    sent += len(own)
                    peer.deliver(own)
                    continue
                if shared is None and len(payloads) > 1 and peer.batch:
                    shared = codec.batch(payloads)
                sent += len(payloads)
                peer.deliver(payloads, shared if peer.batch else None)
        primed.clear()
        return sent

    def replay(self, peer: Peer, viewer: int | None, records: Sequence[EventRecord], current_turn: int | None) -> None:
        """Send ``records`` (missed since a client's ``since``) to one
        connection; legal actions only with the events carrying the turn that
        is still open (the one that began it, a ``resumed`` carrying it again)."""
        if not records:
            return
        if peer.group:
            layouts = peer.compact
            for run in runs(records):
                keys = [view_key(rec, viewer) for rec in run]
                frame = self.group(run, keys, None, current_turn)
                if layouts is None:
                    peer.send(frame)
                else:
                    peer.push(peer.codec.encode(layouts.compact(frame, self.game)))
            return
        for rec in records:
            peer.send(self.frame(rec, view_key(rec, viewer), carries_turn(rec, current_turn)))
