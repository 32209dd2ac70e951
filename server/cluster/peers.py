"""The owner's side of a subscriber connected to another node.

A table owned here may have subscribers whose connections are on other nodes
(key ``"<node>/<connection id>"``). Their events do not go through this
node's fan-out: the commit script publishes each committed event once per
distinct view to their node's inbox (:func:`publication`), and their node
delivers it. What is for one connection alone (replies, join answers,
snapshots, replays) goes to its node's inbox as an ``out`` message
(:class:`RemotePeer`), marked with the ``seq`` it follows.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, cast

import orjson

from cardhall.protocol.codec import CODECS, MSGPACK
from cardhall.server.cluster import wire
from cardhall.server.cluster.outbox import Outbox
from cardhall.server.fanout import Fanout, view_key
from cardhall.server.store.keys import Keys
from cardhall.server.table.records import EventRecord

Data = dict[str, Any]

MSGPACK_CODEC = CODECS[MSGPACK]

#: the table's events after which its public info (seats, presence, status,
#: match, commitment, result) may differ (SPEC "Events and seq"); otherwise
#: only the spectators' count can change it
INFO_EVENTS = frozenset({"seated", "left", "presence", "match_started", "match_ended", "rematch", "sat_out",
                         "sat_in", "paused", "resumed", "closed", "broken"})


class Membership:
    """What a :class:`RemotePeer` has for ``tables``: it records whether the
    connection joined (True) or left (False) the table with this message."""

    __slots__ = ("member",)

    def __init__(self) -> None:
        self.member: bool | None = None

    def add(self, table: str) -> None:
        self.member = True

    def discard(self, table: str) -> None:
        self.member = False


class RemotePeer:
    """Connection ``conn`` of node ``node`` watching table ``table`` owned here.

    Frames sent to it are msgpack-encoded and, on :meth:`flush`, published to
    its node's inbox in one ``out`` message carrying ``after`` (set by the
    actor with :meth:`follows`: the table's ``seq`` the frames follow) and,
    for a join answer (:meth:`answers_join`), the viewer it watches as.
    """

    relayed = True
    codec = MSGPACK_CODEC

    def __init__(self, outbox: Outbox, keys: Keys, table: str, node: str, conn: int) -> None:
        self.outbox = outbox
        self.inbox = keys.inbox(node)
        self.table = table
        self.conn = conn
        self.tables = Membership()
        self._frames: list[bytes] = []
        self._after = 0
        self._join: tuple[int | None] | None = None

    def follows(self, seq: int) -> None:
        """The frames sent next follow the table's ``seq``."""
        self._after = seq

    def answers_join(self, viewer: int | None) -> None:
        """The frames sent next answer a join as ``viewer``: the connection's
        events start after the ``seq`` set by :meth:`follows`."""
        self._join = (viewer,)

    @property
    def idle(self) -> bool:
        """Nothing queued for it (no frames, no membership change to send)."""
        return not self._frames and self.tables.member is None

    def push(self, payload: Any) -> None:
        """Not used: events reach other nodes with the commit (:func:`publication`)."""

    def deliver(self, payloads: list[Any]) -> None:
        """Not used either (events go with the commit); publishes what :meth:`send` queued."""
        self.flush()

    def send(self, message: Mapping[str, Any]) -> None:
        """Encode a frame (msgpack) and queue it."""
        self._frames.append(cast(bytes, MSGPACK_CODEC.encode(cast(Data, message))))

    def flush(self) -> None:
        """Publish what is queued (and a membership change) as one ``out`` message."""
        member = self.tables.member
        if not self._frames and member is None:
            self._join = None
            return
        join = self._join
        message = ["out", self.table, self.conn, self._after, self._frames, member,
                   None if join is None else [join[0]]]
        self.outbox.send(self.inbox, wire.pack(message))
        self._frames = []
        self._join = None
        self.tables.member = None


def publication(fanout: Fanout, records: Sequence[EventRecord], viewers: Iterable[int | None]) -> bytes | None:
    """The ``e`` message of ``records`` (``["e", table, [seq, view, frame,
    ...], ...]``) for the distinct views of ``viewers``
    (the viewers of the table's subscribers on other nodes), or None when
    there are none: each event's frame once per distinct view, msgpack (the
    same bytes are left in ``fanout.primed`` for this node's own subscribers)."""
    wanted = set(viewers)
    if not wanted or not records:
        return None
    encode = MSGPACK_CODEC.encode
    primed = fanout.primed
    out: list[Any] = ["e", fanout.table_id]
    for rec in records:
        item: list[Any] = [rec.seq]
        views: set[int | None] = {view_key(rec, v) for v in wanted}
        for key in views:
            blob = primed[(rec.seq, key)] = cast(bytes, encode(cast(Data, fanout.frame(rec, key, True))))
            item += (key, blob)
        out.append(item)
    return wire.pack(out)


def remote_viewers(viewers: Mapping[Hashable, int | None]) -> tuple[set[int | None], set[str]]:
    """The viewers of the subscribers that are on other nodes (string keys),
    and those nodes."""
    seen: set[int | None] = set()
    nodes: set[str] = set()
    for key, viewer in viewers.items():
        if isinstance(key, str):
            seen.add(viewer)
            parsed = wire.parse_key(key)
            if parsed is not None:
                nodes.add(parsed[0])
    return seen, nodes


class Owned:
    """What this node keeps about its tables' subscribers on other nodes:
    a :class:`RemotePeer` per (table, key), and each table's public info as
    last written (the lobby entry is written only when it changed)."""

    def __init__(self, outbox: Outbox, keys: Keys) -> None:
        self.outbox = outbox
        self.keys = keys
        self.peers: dict[tuple[str, Hashable], RemotePeer] = {}
        self._infos: dict[str, tuple[int, bytes]] = {}  # table -> (spectators, info) as last written

    def peer(self, table: str, key: Hashable) -> RemotePeer | None:
        """The handle on remote subscriber ``key`` of ``table`` (None: ``key`` is a local one)."""
        parsed = wire.parse_key(key)
        if parsed is None:
            return None
        peer = self.peers.get((table, key))
        if peer is None:
            peer = self.peers[(table, key)] = RemotePeer(self.outbox, self.keys, table, *parsed)
        return peer

    def dress(self, table: Any, cp: Any, records: Sequence[EventRecord]) -> None:
        """Give ``table``'s (a TableActor's) checkpoint ``cp`` its fencing token,
        the publication of ``records`` to the viewers on other nodes and its
        public info (JSON) when it changed."""
        cp.token = table.token
        machine = table.machine
        viewers, nodes = remote_viewers(machine.subscribers.viewers)
        if viewers:
            message = publication(table.fanout, records, viewers)
            if message is not None:
                cp.publish = (",".join(sorted(nodes)), message)
        spectators = machine.subscribers.spectators
        known = self._infos.get(table.id)
        if (known is not None and known[0] == spectators
                and not any(rec.event.data["type"] in INFO_EVENTS for rec in records)):
            return  # nothing the public info shows changed
        info = orjson.dumps(machine.info(), option=orjson.OPT_NON_STR_KEYS)
        if known is None or known[1] != info:
            cp.info = info
        self._infos[table.id] = (spectators, info)

    def forget_info(self, table: str) -> None:
        """Write ``table``'s info with its next checkpoint (Redis lost it)."""
        self._infos.pop(table, None)

    def forget(self, table: str) -> None:
        """``table`` is not this node's any more."""
        for pair in [p for p in self.peers if p[0] == table]:
            del self.peers[pair]
        self._infos.pop(table, None)

    def prune(self, tables: Mapping[str, Any]) -> None:
        """Drop the idle handles of subscribers no longer at their table (``tables``: id -> TableActor)."""
        for table_id, key in list(self.peers):
            held = tables.get(table_id)
            if (held is None or key not in held.machine.subscribers) and self.peers[(table_id, key)].idle:
                del self.peers[(table_id, key)]
