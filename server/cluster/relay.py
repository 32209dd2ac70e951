"""The receiving side: this node's connections watching tables owned elsewhere.

For each such table (:class:`Relayed`) the node keeps, per local connection
(:class:`Watch`), the viewer the *owner* gave it and the last ``seq``
delivered to it (its cursor). The owner sends a table's messages to this
node in the order the table produced them (its commits publish the events,
then its replies are published before its next commit: :mod:`.outbox`), and
they are handled here in that order, synchronously, by one path:

* events (``e``): first the owner's changes of this node's subscribers'
  viewers (a seat freed, a seat taken, a subscriber the owner no longer has),
  then each event to each connection as the next ``seq`` in the view the
  owner gave it. A relaying node never chooses a view itself: it only picks,
  among the frames the owner rendered, the one of the viewer the owner named.
* replies (``out``): delivered as they come (their events came before them);
  a join answer names the connection's viewer and where its events start.
* an owner change (``o``): every connection joins again with the new owner.

A connection whose next event is missing (a message lost while the node or
Redis was away), that the owner no longer counts as a subscriber although it
did not leave, or whose stream position is behind the stored events for a
whole check (:meth:`Relayed.behind`), *resumes*: the node sends the owner its
own join (:data:`~cardhall.server.table.inputs.REJOIN`) with ``since`` = the
cursor, and the owner answers with the missed events (or a snapshot when the
stream no longer holds them), so every event reaches it once, in order. A
connection whose resume is not answered within :data:`RESYNC_WITHIN` seconds
is closed with 4012 (SPEC "Closing codes": reconnect, join with ``since``):
never left silent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack

from cardhall.protocol import frames
from cardhall.protocol.codec import CODECS, MSGPACK
from cardhall.protocol.compact import Layouts
from cardhall.server.cluster.peers import GONE
from cardhall.server.connection import CLOSE_RESUBSCRIBE, Connection
from cardhall.server.table.inputs import REJOIN, Join

log = logging.getLogger("cardhall.cluster")

Data = dict[str, Any]
MSGPACK_CODEC = CODECS[MSGPACK]

#: seconds the server's own join may go unanswered before it is sent again (pub/sub may lose it)
ASK_AGAIN = 2.0
#: seconds a request may go unanswered before it gets ``unavailable`` (lost with an owner or Redis)
ANSWER_WITHIN = 5.0
#: seconds a connection may wait for its resume before it is closed with 4012 (at least; the node
#: passes three lease TTLs when that is longer)
RESYNC_WITHIN = 10.0

#: sends a join (again) to the table's owner
Rejoin = Callable[[str, Join], None]


@dataclass(slots=True, eq=False)
class Watch:
    """One local connection watching a relayed table."""

    conn: Connection
    join: Join  # the join that made it watch (its fields are sent again on a resume)
    viewer: int | None = None  # as the owner last said: a seat, or None (a spectator)
    cursor: int | None = None  # the last seq delivered to it (an event's, or a snapshot's)
    waiting: bool = True  # a join of it is not answered yet: events wait for the answer
    asked: float | None = None  # when the server's own join was last sent
    resyncing: float | None = None  # when it started to wait for a resume (closed past RESYNC_WITHIN)
    leaving: bool = False  # it sent ``leave``: the owner's "no longer a subscriber" is expected
    behind: int | None = None  # its cursor when a check found it behind the stored events
    #: ``id`` of requests not answered -> (when sent, the request: sent again after a resume)
    pending: dict[Any, tuple[float, Any]] = field(default_factory=dict)
    #: requests it sent while it resumed: they go to the owner right after the resume (a request
    #: before it would find the connection unknown there)
    held: list[Any] = field(default_factory=list)
    #: replies that came before the events they follow (``(the owner's seq when it replied, frames)``):
    #: delivered once the connection has those events (SPEC "Ordering guarantee")
    later: list[tuple[int, list[bytes]]] = field(default_factory=list)


def push_all(conn: Connection, blobs: list[bytes], cache: dict[Any, Any] | None = None) -> None:
    """Queue ``blobs`` (msgpack frames from the owner, in order) on ``conn``
    in its codec; for a connection that asked for ``events`` frames (1.7) the
    owner's ``event`` frames are regrouped first (:func:`frames.grouped`).
    With a ``cache`` (one per owner's message) each distinct list of blobs is
    converted once per codec, whichever connections of one view get it."""
    if not blobs:
        return
    if not conn.group:
        for blob in blobs:
            conn.push(to_codec(conn, blob, cache))
        return
    layouts = conn.compact
    # the same blobs, in one codec and form: regrouped once
    key = (tuple(map(id, blobs)), conn.codec.name, layouts is not None)
    payloads = cache.get(key) if cache is not None else None
    if payloads is None:
        decoded = [msgpack.unpackb(blob, raw=False, strict_map_key=False) for blob in blobs]
        if layouts is None:
            payloads = [conn.codec.encode(frame) for frame in frames.grouped(decoded)]
        else:
            payloads = [conn.codec.encode(compacted(conn, layouts, frame)) for frame in frames.grouped(decoded)]
        if cache is not None:
            cache[key] = payloads
    for payload in payloads:
        conn.push(payload)


def compacted(conn: Connection, layouts: Layouts, frame: dict[str, Any]) -> dict[str, Any] | list[Any]:
    """``frame`` as ``conn`` (which said ``hello`` with ``compact``, 1.8) gets
    it: an ``events`` frame as its compact array, written under its table's
    game (``conn.games``: the owner names it in each join answer, wire.py's
    ``out``); any other frame as it is."""
    if frame.get("type") == "events":
        return layouts.compact(frame, conn.games.get(frame["table"]))
    return frame


def to_codec(conn: Connection, blob: bytes, cache: dict[tuple[int, str], Any] | None = None) -> Any:
    """``blob`` (a msgpack frame) in ``conn``'s codec; with a ``cache``, each
    blob is converted once per codec (keyed by the blob itself: two views of
    one event are two blobs, never one conversion)."""
    codec = conn.codec
    if codec is MSGPACK_CODEC:
        return blob
    if cache is None:
        return codec.encode(msgpack.unpackb(blob, raw=False, strict_map_key=False))
    ck = (id(blob), codec.name)
    out = cache.get(ck)
    if out is None:
        out = cache[ck] = codec.encode(msgpack.unpackb(blob, raw=False, strict_map_key=False))
    return out


class Relayed:
    """A table owned by another node, watched by some of this node's connections.

    ``node``: this node's id (the owner's membership changes name it);
    ``rejoin(table, join)`` sends a join to the owner found now;
    ``direct(connection id, frames)`` delivers frames to a connection that
    does not watch the table; ``resync_within``: seconds a resume may take
    before the connection is closed with 4012.
    """

    def __init__(self, table: str, node: str, rejoin: Rejoin, direct: Callable[[int, list[bytes]], None],
                 resync_within: float = RESYNC_WITHIN) -> None:
        self.id = table
        self.node = node
        self.rejoin = rejoin
        self.direct = direct
        self.resync_within = max(RESYNC_WITHIN, resync_within)
        self.watches: dict[int, Watch] = {}
        #: the newest ``seq`` of the table this node heard of (None: none yet)
        self.newest: int | None = None
        self.resumes = 0

    @property
    def latest(self) -> int | None:
        """The newest ``seq`` this node has received or delivered for the table (None: none yet)."""
        cursors = [w.cursor for w in self.watches.values() if w.cursor is not None]
        if self.newest is not None:
            cursors.append(self.newest)
        return max(cursors, default=None)

    # -- this node's connections ------------------------------------------------
    def watch(self, conn: Connection, join: Join) -> Watch:
        """``conn`` sent ``join`` to the owner: it watches once the answer comes
        (a join again on the same connection keeps its cursor: the answer
        delivers only what follows it)."""
        old = self.watches.get(conn.id)
        w = self.watches[conn.id] = Watch(conn, join, cursor=old.cursor if old else None,
                                          viewer=old.viewer if old else None,
                                          pending=old.pending if old else {},
                                          held=old.held if old else [], later=old.later if old else [])
        w.asked = asyncio.get_running_loop().time()
        return w

    def sent(self, conn_id: int, re: Any, leaving: bool = False, request: Any = None) -> None:
        """Connection ``conn_id`` sent ``request`` (its ``id`` ``re``) to the
        owner (``leaving``: a ``leave``): if the owner changes before it
        answers, it gets ``unavailable``; if the owner answers ``not_joined``
        (it no longer counted the connection), the connection resumes and the
        request is sent again after it."""
        w = self.watches.get(conn_id)
        if w is None:
            return
        if leaving:
            w.leaving = True
        if re is not None and re != REJOIN:
            w.pending[re] = (asyncio.get_running_loop().time(), request)

    def forget(self, conn_id: int) -> None:
        """Connection ``conn_id`` no longer watches the table here."""
        self.watches.pop(conn_id, None)

    def fail_pending(self, older_than: float | None = None) -> None:
        """Every request not answered (sent more than ``older_than`` seconds
        ago) gets ``unavailable``: the owner changed or the message was lost;
        it may not have been applied, and sending it again is safe (an ``act``
        that was applied gets ``stale_turn``). A client's own join that is
        refused so no longer watches."""
        now = asyncio.get_running_loop().time()
        for w in list(self.watches.values()):
            late = [re for re, (at, _) in w.pending.items() if older_than is None or now - at > older_than]
            if not late:
                continue
            for re in late:
                del w.pending[re]
                give_up(w.conn, re)
                w.conn.send(frames.error("unavailable", "the table moved to another node; retry", re=re))
                if w.cursor is None and w.join.re == re:  # its first join: the client joins again itself
                    self.watches.pop(w.conn.id, None)
                    w.conn.tables.discard(self.id)
            w.conn.flush()

    # -- the owner's messages, in order ------------------------------------------
    def on_events(self, seq: int, changes: list[Any], items: list[Any]) -> None:
        """An ``e`` message: the owner's viewer changes for this node's
        subscribers, then the events (``[seq, view, frame, ...]`` each)."""
        if self.newest is None or seq > self.newest:
            self.newest = seq
        for i in range(0, len(changes) - 2, 3):
            if changes[i] != self.node:
                continue
            w = self.watches.get(changes[i + 1])
            if w is None:
                continue
            viewer = changes[i + 2]
            if viewer == GONE:  # the owner no longer counts it: gone by its own leave, else resumed
                if w.leaving:
                    self.watches.pop(w.conn.id, None)
                else:
                    self.resume(w, "the owner no longer counts it")
            else:
                w.viewer = viewer
        if not items:
            return
        flush: dict[Watch, list[bytes]] = {}
        cache: dict[Any, Any] = {}
        for item in items:
            seq, flat = item[0], item[1:]
            views: dict[int | None, bytes] = {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}
            for w in list(self.watches.values()):
                if w.waiting or w.cursor is None or seq <= w.cursor:
                    continue  # a join answer will carry it, or it was delivered
                if seq != w.cursor + 1:
                    self.resume(w, f"events {w.cursor + 1}..{seq - 1} missing")
                    continue
                blob = views.get(w.viewer) if w.viewer in views else views.get(None)
                if blob is None:  # the owner rendered no frame for the viewer it gave: ask it
                    self.resume(w, f"no view for viewer {w.viewer} at seq {seq}")
                    continue
                flush.setdefault(w, []).append(blob)
                w.cursor = seq
        for w, blobs in flush.items():
            push_all(w.conn, blobs, cache)
            self._release(w)
            w.conn.flush()

    def on_out(self, conn_id: int, after: int, blobs: list[bytes], member: bool | None,
               join: list[Any] | None) -> None:
        """An ``out`` message: frames for one connection (a join answer when
        ``join`` is ``[viewer]``: its events start after ``after``)."""
        w = self.watches.get(conn_id)
        if w is None:  # not watching (it left, or never joined): nothing to keep in order
            self.direct(conn_id, [b for b in blobs if not _answers_rejoin(b)])
            return
        if member is False and any(_banned(b) for b in blobs):
            # the owner banned its player (SPEC "The host's controls"): the table's last frames for it, or
            # the refusal of its join; it watches no more, and no resume of it is wanted
            self.watches.pop(conn_id, None)
            w.conn.tables.discard(self.id)
            self.direct(conn_id, [b for b in blobs if not _answers_rejoin(b)])
            return
        if w.pending and not w.leaving:
            blobs = self._not_joined_again(w, blobs)
        if w.pending or w.conn.given_up:
            blobs = not_given_up(w.conn, blobs, w.pending)
        blobs = [b for b in blobs if not _answers_rejoin(b)]  # the server's own join: nobody asked
        if join is not None:
            w.viewer = join[0]
            if len(join) > 1 and isinstance(join[1], str):  # the table's game: its layouts (1.8)
                w.conn.games[self.id] = join[1]
            blobs = self._fresh(w, blobs)
            w.cursor = after if w.cursor is None else max(w.cursor, after)
            w.waiting = False
            w.asked = w.resyncing = w.behind = None
        elif blobs and w.cursor is not None and (w.waiting or after > w.cursor) and member is not False:
            # a reply overtook the events before it (they were lost, or a resume is replaying them): it
            # waits for them, and a connection not resuming yet resumes to get them
            w.later.append((after, blobs))
            blobs = []
            if not w.waiting:
                self.resume(w, f"a reply follows events {w.cursor + 1}..{after} not received")
        push_all(w.conn, blobs)
        self._release(w)
        if member is False and not w.waiting:  # it left (a resume under way makes it a subscriber again)
            self.watches.pop(conn_id, None)
            w.conn.tables.discard(self.id)
            for _, held in w.later:  # nothing more will come before them
                push_all(w.conn, held)
            w.later = []
        w.conn.flush()

    @staticmethod
    def _release(w: Watch) -> None:
        """Push the replies of :attr:`Watch.later` whose events ``w`` now has."""
        if not w.later or w.waiting or w.cursor is None:
            return
        cursor = w.cursor
        ready = [blob for after, blobs in w.later if after <= cursor for blob in blobs]
        w.later = [(after, blobs) for after, blobs in w.later if after > cursor]
        push_all(w.conn, ready)

    def on_owner_changed(self) -> None:
        """The table has a new owner (or this node's messages may have been
        lost): every connection joins again with its cursor."""
        for w in list(self.watches.values()):
            if w.cursor is None:  # a client's own first join not answered yet: sent again as it was
                w.waiting = True
                w.asked = asyncio.get_running_loop().time()
                self.rejoin(self.id, w.join)
            else:
                self.resume(w, "owner changed", again=True)
        self.fail_pending()

    # -- resuming -------------------------------------------------------------------
    def resume(self, w: Watch, why: str, again: bool = False) -> None:
        """``w`` joins again from its cursor (the owner replays what it
        missed, in the view the owner gives it); nothing while it already
        waits for an answer unless ``again``."""
        if w.waiting and not again:
            return
        now = asyncio.get_running_loop().time()
        if w.cursor is not None and not w.waiting:
            log.info("relayed table %s: connection %s resumes from seq %s (%s)", self.id, w.conn.id, w.cursor, why)
        w.waiting = True
        w.asked = now
        if w.resyncing is None:
            w.resyncing = now
        self.resumes += 1
        j = w.join
        self.rejoin(self.id, Join(j.sub, j.player, j.name, REJOIN, j.role, j.seat, None, w.cursor, None))

    def behind(self, stored: int | None) -> None:
        """A check found the table's stored events up to ``stored``: a
        connection behind them at this check and the one before, without
        progress between, lost its events (the node or Redis was away):
        it resumes."""
        if stored is None:
            return
        for w in list(self.watches.values()):
            if w.waiting or w.cursor is None or w.cursor >= stored:
                w.behind = None
                continue
            if w.behind == w.cursor:
                self.resume(w, f"behind the stored events ({w.cursor} < {stored})")
            else:
                w.behind = w.cursor

    def tick(self) -> None:
        """Periodic: requests unanswered too long get ``unavailable``; a
        resume unanswered is sent again, and past :attr:`resync_within` the
        connection is closed with 4012 (it reconnects and joins with ``since``)."""
        now = asyncio.get_running_loop().time()
        self.fail_pending(older_than=ANSWER_WITHIN)
        for w in list(self.watches.values()):
            if not w.waiting or w.cursor is None:
                continue
            if w.resyncing is not None and now - w.resyncing > self.resync_within:
                log.warning("relayed table %s: connection %s not resumed in %.0f s; closing it with %d",
                            self.id, w.conn.id, now - w.resyncing, CLOSE_RESUBSCRIBE)
                self.watches.pop(w.conn.id, None)
                w.conn.close(CLOSE_RESUBSCRIBE, "reconnect and join with since")
            elif w.asked is None or now - w.asked > ASK_AGAIN:
                self.resume(w, "unanswered", again=True)

    def _not_joined_again(self, w: Watch, blobs: list[bytes]) -> list[bytes]:
        """``blobs`` without the ``not_joined`` answers to ``w``'s requests: the
        owner no longer counted the connection (it was counted gone, or the
        table moved and the request overtook the connection's join there),
        so it resumes and those requests follow its join again."""
        kept = []
        again = []
        for blob in blobs:
            if b"not_joined" in blob:
                frame = msgpack.unpackb(blob, raw=False, strict_map_key=False)
                entry = w.pending.get(frame.get("re")) if frame.get("code") == "not_joined" else None
                if entry is not None and entry[1] is not None:
                    again.append(entry[1])
                    continue
            kept.append(blob)
        if again:
            w.held.extend(again)
            self.resume(w, "the owner did not count it", again=True)
        return kept

    @staticmethod
    def _fresh(w: Watch, blobs: list[bytes]) -> list[bytes]:
        """A join answer's frames, each event only as the next ``seq`` for
        ``w`` (an answer of an earlier owner may repeat events already
        delivered), a snapshot only if not older than what ``w`` has;
        advances ``w.cursor`` over what it keeps."""
        out = []
        for blob in blobs:
            frame = msgpack.unpackb(blob, raw=False, strict_map_key=False)
            kind = frame.get("type")
            if kind == "event":
                if w.cursor is not None and frame["seq"] != w.cursor + 1:
                    continue
                w.cursor = frame["seq"]
            elif kind == "snapshot":
                if w.cursor is not None and frame["seq"] < w.cursor:
                    continue
                w.cursor = frame["seq"]
            out.append(blob)
        return out


def give_up(conn: Connection, re: Any) -> None:
    """``conn``'s request ``re`` was answered ``unavailable`` here: a later
    answer to it is not passed on (:func:`not_given_up`). Bounded: only the
    answers of recent requests come late."""
    if len(conn.given_up) >= 64:
        conn.given_up.clear()
    conn.given_up.add(re)


def not_given_up(conn: Connection, blobs: list[bytes], pending: dict[Any, Any] | None = None) -> list[bytes]:
    """``blobs`` (msgpack frames for ``conn``) without the answers to requests
    it was told are ``unavailable`` (one answer per request, even when the
    owner's comes late or twice); the answers found end their ``pending``
    entry."""
    kept = []
    for blob in blobs:
        frame = msgpack.unpackb(blob, raw=False, strict_map_key=False)
        if frame.get("type") in ("ok", "error", "snapshot") and "re" in frame:
            re = frame["re"]
            if re in conn.given_up and (pending is None or re not in pending):
                continue
            if pending is not None:
                pending.pop(re, None)
        kept.append(blob)
    return kept


def _banned(blob: bytes) -> bool:
    """Is ``blob`` (a msgpack frame) a ``banned`` event or the error ``banned``
    (SPEC "The host's controls": its connection watches the table no more)?"""
    if b"banned" not in blob:
        return False
    frame = msgpack.unpackb(blob, raw=False, strict_map_key=False)
    if frame.get("type") == "event":
        return isinstance(frame.get("event"), dict) and frame["event"].get("type") == "banned"
    return frame.get("type") == "error" and frame.get("code") == "banned"


def _answers_rejoin(blob: bytes) -> bool:
    """Is ``blob`` (a msgpack frame) an ``ok`` or error answering the server's own join?"""
    if REJOIN.encode() not in blob:
        return False
    frame = msgpack.unpackb(blob, raw=False, strict_map_key=False)
    return frame.get("re") == REJOIN and frame.get("type") in ("ok", "error")
