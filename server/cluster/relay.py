"""The receiving side: this node's connections watching tables owned elsewhere.

For each such table (:class:`Relayed`) the node subscribes to the table's
channel and keeps, per local connection (:class:`Watch`), the viewer it
watches as and the last ``seq`` delivered to it (its cursor). Messages of one
table are handled in order by one task:

* events (``e``): each connection gets, in ``seq`` order, the frame of its
  view; a connection whose cursor is behind the first event (a message lost,
  or published before its join was answered and no longer in the recent
  events) gets the missing events from the table's stream first, rendered
  here exactly as the owner renders them (``Event.view``), so ``seq`` stays
  gap-free on every connection;
* replies (``out``): held until the connection's cursor reaches the ``seq``
  they follow, so an ``ok`` never overtakes its own events; a join answer
  sets the cursor and then delivers the recent events after it;
* an owner change (``o``): every connection joins again with the new owner
  with ``since`` = its cursor (the answer's ``ok`` is not passed on).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

import msgpack

from cardhall.protocol import frames
from cardhall.protocol.codec import CODECS, MSGPACK
from cardhall.server.connection import Connection
from cardhall.server.fanout import Fanout, view_key
from cardhall.server.mailbox import Mailbox
from cardhall.server.table.inputs import REJOIN, Join
from cardhall.server.table.records import record_from_data

log = logging.getLogger("cardhall.cluster")

Data = dict[str, Any]
MSGPACK_CODEC = CODECS[MSGPACK]

#: events kept per relayed table for connections whose join answer comes after them
RECENT = 512
#: seconds a held reply waits for its events before the missing ones are read from the stream
HOLD = 0.5
#: seconds the server's own join may go unanswered before it is sent again (pub/sub may lose it)
ASK_AGAIN = 2.0
#: seconds a request may go unanswered before it gets ``unavailable`` (lost with an owner or Redis)
ANSWER_WITHIN = 5.0

#: reads stored events ``seq < s <= upto`` of a table (the store's ``events_since``)
ReadEvents = Callable[[str, int, int], Awaitable[list[tuple[int, Data]] | None]]
#: sends a join (again) to the table's owner
Rejoin = Callable[[str, Join], None]


@dataclass(slots=True, eq=False)
class Watch:
    """One local connection watching a relayed table."""

    conn: Connection
    join: Join  # the join that made it watch (sent again after an owner change)
    viewer: int | None = None
    cursor: int | None = None  # the last seq delivered to it (an event's, or a snapshot's)
    waiting: bool = True  # a join of it is not answered yet: events wait in the recent ones
    asked: float | None = None  # when the server's own join was sent (sent again if unanswered)
    held: deque[tuple[int, list[bytes]]] = field(default_factory=deque)
    held_since: float = 0.0
    pending: dict[Any, float] = field(default_factory=dict)  # ``id`` of requests not answered -> when sent


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
    """A table owned by another node, watched by some of this node's connections."""

    def __init__(self, table: str, read: ReadEvents, rejoin: Rejoin,
                 direct: Callable[[int, list[bytes]], None]) -> None:
        self.id = table
        self.read = read
        self.rejoin = rejoin
        self.direct = direct
        self.watches: dict[int, Watch] = {}
        self.recent: deque[tuple[int, dict[int | None, bytes]]] = deque(maxlen=RECENT)
        self.mailbox: Mailbox[list[Any]] = Mailbox()
        self.fanout = Fanout(table, lambda key: None)
        self.task: asyncio.Task[None] | None = None
        self.delivered = 0
        self._busy = False  # the task is handling messages: new ones queue behind them

    @property
    def latest(self) -> int | None:
        """The newest ``seq`` this node has received or delivered for the table (None: none yet)."""
        cursors = [w.cursor for w in self.watches.values() if w.cursor is not None]
        if self.recent:
            cursors.append(self.recent[-1][0])
        return max(cursors, default=None)

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"relay {self.id}")

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def watch(self, conn: Connection, join: Join) -> None:
        """``conn`` sent ``join`` to the owner: it watches once the answer comes."""
        old = self.watches.get(conn.id)
        self.watches[conn.id] = Watch(conn, join, cursor=old.cursor if old else None,
                                      viewer=old.viewer if old else None, pending=old.pending if old else {})

    def sent(self, conn_id: int, re: Any) -> None:
        """Connection ``conn_id`` sent request ``re`` to the owner: if the
        owner changes before it answers, the request gets ``unavailable``."""
        w = self.watches.get(conn_id)
        if w is not None and re is not None and re != REJOIN:
            w.pending[re] = asyncio.get_running_loop().time()

    def fail_pending(self, older_than: float | None = None) -> None:
        """Every request not answered (sent more than ``older_than`` seconds
        ago) gets ``unavailable``: the owner changed or the message was lost;
        it may not have been applied, and sending it again is safe (an ``act``
        that was applied gets ``stale_turn``)."""
        now = asyncio.get_running_loop().time()
        for w in self.watches.values():
            late = [re for re, at in w.pending.items() if older_than is None or now - at > older_than]
            if not late:
                continue
            for re in late:
                del w.pending[re]
                w.conn.send(frames.error("unavailable", "the table moved to another node; retry", re=re))
            w.conn.flush()

    def forget(self, conn_id: int) -> None:
        self.watches.pop(conn_id, None)

    def post(self, message: list[Any]) -> None:
        """A message for this table (``e``, ``out``, ``o``), handled in order:
        events that need no gap filling are delivered at once when nothing
        waits before them, the rest by the table's task."""
        if not self._busy and message[0] == "e" and self.mailbox.empty() and self._deliver_now(message[1:]):
            return
        self.mailbox.post(message)

    def _deliver_now(self, items: list[Any]) -> bool:
        """Deliver ``items`` (``[seq, view, frame, ...]``) if every watcher is
        at the first one's ``seq`` or past it (no gap to fill); False, having
        done nothing, otherwise."""
        first = items[0][0]
        for w in self.watches.values():
            if not w.waiting and w.cursor is not None and w.cursor < first - 1:
                return False
        flush: set[Watch] = set()
        for item in items:
            seq, flat = item[0], item[1:]
            views: dict[int | None, bytes] = {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}
            self.recent.append((seq, views))
            cache: dict[tuple[int, str], Any] = {}
            for w in self.watches.values():
                if w.waiting or w.cursor is None or seq != w.cursor + 1:
                    continue
                blob = views.get(w.viewer) if w.viewer in views else views.get(None)
                if blob is not None:
                    w.conn.push(to_codec(w.conn, blob, cache))
                    self.delivered += 1
                w.cursor = seq
                flush.add(w)
        for w in flush:
            self._release(w)
            w.conn.flush()
        return True

    async def _run(self) -> None:
        while True:
            messages = await self.mailbox.take()
            self._busy = True
            for message in messages:
                try:
                    kind = message[0]
                    if kind == "e":
                        await self._events(message[1:])
                    elif kind == "out":
                        await self._out(message)
                    elif kind == "o":
                        self._owner_changed()
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("relayed table %s: a message could not be delivered", self.id)
            await self._release_stale()
            self._busy = not self.mailbox.empty()

    # -- events --------------------------------------------------------------
    async def _events(self, items: list[Any]) -> None:
        flush: set[Watch] = set()
        for item in items:
            seq, flat = item[0], item[1:]
            views: dict[int | None, bytes] = {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}
            self.recent.append((seq, views))
            cache: dict[tuple[int, str], Any] = {}
            for w in list(self.watches.values()):
                if w.waiting or w.cursor is None or seq <= w.cursor:
                    continue
                if seq > w.cursor + 1:
                    await self._fill(w, seq - 1)
                    if w.waiting or w.cursor is None or seq != w.cursor + 1:
                        continue
                blob = views.get(w.viewer) if w.viewer in views else views.get(None)
                if blob is None:
                    continue
                w.conn.push(to_codec(w.conn, blob, cache))
                w.cursor = seq
                self.delivered += 1
                flush.add(w)
        for w in flush:
            self._release(w)
            w.conn.flush()

    async def _fill(self, w: Watch, upto: int) -> None:
        """Deliver ``w``'s missing events up to ``upto``: from the recent
        events when they are all there, else from the table's stream. Nothing
        when ``w`` is at ``upto`` or past it (its cursor never moves back)."""
        assert w.cursor is not None
        if upto <= w.cursor:
            return
        have = {seq: views for seq, views in self.recent if w.cursor < seq <= upto}
        if len(have) == upto - w.cursor:
            for seq in range(w.cursor + 1, upto + 1):
                views = have[seq]
                blob = views.get(w.viewer) if w.viewer in views else views.get(None)
                if blob is not None:
                    w.conn.push(to_codec(w.conn, blob))
            w.cursor = upto
            return
        try:
            stored = await self.read(self.id, w.cursor, upto)
        except Exception as exc:  # Redis away: tried again at the next event or tick
            log.warning("relayed table %s: events after %s unreadable now: %s", self.id, w.cursor, exc)
            return
        if stored is None:  # no longer all stored: join again (a snapshot)
            log.warning("relayed table %s: events %s..%s missing; connection %s joins again",
                        self.id, w.cursor + 1, upto, w.conn.id)
            self._join_again(w, since=None)  # its answer is a snapshot (seq >= the cursor)
            return
        for seq, data in stored:
            rec = record_from_data(seq, data)
            frame = self.fanout.frame(rec, view_key(rec, w.viewer), False)
            w.conn.send(cast(Data, frame))
        w.cursor = upto

    async def _catch_up(self, w: Watch) -> None:
        """Deliver to ``w`` every event up to the newest one received."""
        assert w.cursor is not None
        newest, views = self.recent[-1]
        if newest > w.cursor + 1:
            await self._fill(w, newest - 1)
        if w.cursor == newest - 1 and not w.waiting:
            blob = views.get(w.viewer) if w.viewer in views else views.get(None)
            if blob is not None:
                w.conn.push(to_codec(w.conn, blob))
            w.cursor = newest
        self._release(w)
        w.conn.flush()

    # -- replies ---------------------------------------------------------------
    async def _out(self, message: list[Any]) -> None:
        _, _, conn_id, after, blobs, member, join = message
        w = self.watches.get(conn_id)
        if w is None:  # not watching (it left, or never joined): no order to keep
            self.direct(conn_id, blobs)
            return
        if join is None and any(_answers_rejoin(b) for b in blobs):
            blobs = [b for b in blobs if not _answers_rejoin(b)]  # the server's own join: asked again later
        if w.pending:
            for blob in blobs:
                frame = msgpack.unpackb(blob, raw=False, strict_map_key=False)
                if frame.get("type") in ("ok", "error", "snapshot") and "re" in frame:
                    w.pending.pop(frame["re"], None)
        if join is not None:
            w.viewer = join[0]
            self._push(w, self._fresh(w, blobs))
            w.cursor = after if w.cursor is None else max(w.cursor, after)  # an ok's seq, after its events
            w.waiting = False
            w.asked = None
            for seq, views in self.recent:
                if seq == w.cursor + 1:
                    blob = views.get(w.viewer) if w.viewer in views else views.get(None)
                    if blob is not None:
                        w.conn.push(to_codec(w.conn, blob))
                    w.cursor = seq
            self._release(w)  # replies held for events this answer delivered
        elif w.cursor is not None and w.cursor < after:
            if not w.held:
                w.held_since = asyncio.get_running_loop().time()
            w.held.append((after, blobs))
        else:
            self._push(w, blobs)
        if member is False:
            self.watches.pop(conn_id, None)
            w.conn.tables.discard(self.id)
        w.conn.flush()

    @staticmethod
    def _fresh(w: Watch, blobs: list[bytes]) -> list[bytes]:
        """A join answer's frames, each event only as the next ``seq`` for
        ``w`` (an answer of an earlier owner may come after a later one's, and
        repeat events already delivered), a snapshot only if not older than
        what ``w`` has; advances ``w.cursor`` over what it keeps."""
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

    def _push(self, w: Watch, frames: list[bytes]) -> None:
        for blob in frames:
            w.conn.push(to_codec(w.conn, blob))

    def _release(self, w: Watch) -> None:
        while w.held and w.cursor is not None and w.held[0][0] <= w.cursor:
            self._push(w, w.held.popleft()[1])

    async def _release_stale(self) -> None:
        """Held replies whose events did not come within :data:`HOLD` seconds:
        read the missing events from the stream, then release them. The
        server's own joins unanswered for :data:`ASK_AGAIN` seconds are sent
        again; requests unanswered for :data:`ANSWER_WITHIN` get ``unavailable``."""
        now = asyncio.get_running_loop().time()
        self.fail_pending(older_than=ANSWER_WITHIN)
        for w in list(self.watches.values()):
            if w.waiting and w.asked is not None and now - w.asked > ASK_AGAIN:
                self._join_again(w, since=w.cursor)
            if not w.waiting and w.cursor is not None and self.recent and self.recent[-1][0] > w.cursor:
                await self._catch_up(w)  # behind the newest event (a fill that failed): deliver up to it
            if w.held and now - w.held_since > HOLD and w.cursor is not None and not w.waiting:
                await self._fill(w, w.held[-1][0])
                self._release(w)
                w.conn.flush()

    # -- owner changes -----------------------------------------------------------
    def hand_back(self) -> list[tuple[Watch, Join]]:
        """The joins that make every watcher subscribe at a new owner: a
        client's own join not answered yet goes again as it was (its ``re``
        and ``since``: the client still waits for its answer); the others
        join with :data:`REJOIN` from their cursor. Every other request not
        answered gets ``unavailable``."""
        out: list[tuple[Watch, Join]] = []
        now = asyncio.get_running_loop().time()
        for w in list(self.watches.values()):
            j = w.join
            if w.waiting and j.re != REJOIN:
                w.pending.pop(j.re, None)
                out.append((w, j))
            else:
                out.append((w, Join(j.sub, j.player, j.name, REJOIN, j.role, j.seat, j.seed, w.cursor, None)))
            w.waiting = True
            w.asked = now
        self.fail_pending()
        return out

    def _owner_changed(self) -> None:
        for _, join in self.hand_back():
            self.rejoin(self.id, join)

    def _join_again(self, w: Watch, since: int | None) -> None:
        j = w.join
        again = Join(j.sub, j.player, j.name, REJOIN, j.role, j.seat, j.seed, since, None)
        w.waiting = True
        w.asked = asyncio.get_running_loop().time()
        self.rejoin(self.id, again)


def _answers_rejoin(blob: bytes) -> bool:
    """Is ``blob`` (a msgpack frame) a reply to the server's own join?"""
    return REJOIN.encode() in blob and msgpack.unpackb(blob, raw=False, strict_map_key=False).get("re") == REJOIN
