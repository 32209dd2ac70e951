"""The owner's side of a subscriber connected to another node.

A table owned here may have subscribers whose connections are on other nodes
(key ``"<node>/<connection id>"``). Their events do not go through this
node's fan-out: the commit script publishes, on the table's own channel,
each committed event once per distinct view those subscribers have, and
before them every change the table made to their views (:func:`publication`,
:meth:`Owned.dress`); their nodes deliver them. What is for one connection
alone (replies, join answers, snapshots, replays) follows on the same
channel as an ``out`` message (:class:`RemotePeer`), marked with the ``seq``
it follows, published before the table's next commit (the outbox is flushed
before each commit): one channel, one order, for each table.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import orjson

from cardhall.protocol.codec import CODECS, MSGPACK
from cardhall.server.cluster import wire
from cardhall.server.cluster.outbox import Outbox
from cardhall.server.fanout import Fanout, view_key
from cardhall.server.store.base import Checkpoint
from cardhall.server.store.keys import Keys
from cardhall.server.table.records import EventRecord
from cardhall.server.table.subscribers import Subscribers

if TYPE_CHECKING:
    from cardhall.server.table.actor import TableActor

Data = dict[str, Any]

MSGPACK_CODEC = CODECS[MSGPACK]

#: the table's events after which its public info (seats and their names, presence, status,
#: match, commitment, result, owner) may differ (SPEC "Events and seq"); otherwise
#: only the spectators' count can change it
INFO_EVENTS = frozenset({"seated", "left", "presence", "match_started", "match_ended", "rematch", "sat_out",
                         "sat_in", "paused", "resumed", "closed", "broken", "renamed", "owner_changed"})


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

    Frames sent to it are msgpack-encoded and, on :meth:`flush`, published in
    one ``out`` message carrying ``after`` (set by the actor with
    :meth:`follows`: the table's ``seq`` the frames follow) and, for a join
    answer (:meth:`answers_join`), the viewer it watches as. A message for a
    subscriber (``subscribed()``), or one that makes or ends a subscription,
    goes on the table's channel, where its events go: its node gets them in
    the order the table produced them. Any other (an error to a connection
    that never joined) goes to its node's inbox.
    """

    relayed = True
    codec = MSGPACK_CODEC
    #: frames cross to its node as one ``out`` message, one v1 frame each: its node
    #: regroups them for a connection that asked for ``events`` frames, and writes them as
    #: compact arrays for one that asked for those (:mod:`.relay`)
    batch = False
    group = False
    compact = None

    def __init__(self, outbox: Outbox, keys: Keys, table: str, node: str, conn: int,
                 subscribed: Callable[[], bool] = lambda: False) -> None:
        self.outbox = outbox
        self.inbox = keys.inbox(node)
        self.channel = keys.channel(table)
        self.subscribed = subscribed
        self.node = node
        self.table = table
        self.conn = conn
        self.tables = Membership()
        self._frames: list[bytes] = []
        self._after = 0
        self._join: tuple[int | None, str | None] | None = None

    def follows(self, seq: int) -> None:
        """The frames sent next follow the table's ``seq``."""
        self._after = seq

    def answers_join(self, viewer: int | None, game: str | None = None) -> None:
        """The frames sent next answer a join as ``viewer`` at a table of
        ``game``: the connection's events start after the ``seq`` set by
        :meth:`follows`."""
        self._join = (viewer, game)

    @property
    def idle(self) -> bool:
        """Nothing queued for it (no frames, no membership change to send)."""
        return not self._frames and self.tables.member is None

    def push(self, payload: Any) -> None:
        """Not used: events reach other nodes with the commit (:func:`publication`)."""

    def deliver(self, payloads: list[Any], message: Any = None) -> None:
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
        message = ["out", self.table, self.node, self.conn, self._after, self._frames, member,
                   None if join is None else [join[0]] if join[1] is None else list(join)]
        ordered = member is not None or join is not None or self.subscribed()
        self.outbox.send(self.channel if ordered else self.inbox, wire.pack(message))
        self._frames = []
        self._join = None
        self.tables.member = None


#: a membership change's viewer for a subscriber the table no longer has
GONE = -1


def publication(fanout: Fanout, records: Sequence[EventRecord], viewers: Iterable[int | None],
                seq: int, changes: Sequence[Any] = ()) -> bytes | None:
    """The ``e`` message of one commit of a table: ``["e", table, seq,
    changes, [seq, view, frame, ...], ...]``. ``seq``: the table's ``seq``
    after the step(s) committed; ``changes``: flat ``[node, connection,
    viewer, ...]`` of every subscriber on another node whose viewer the
    table changed in them (a seat, None for a spectator, :data:`GONE` when it
    no longer watches); then each of ``records`` with its frame once per
    distinct view of ``viewers`` (the viewers of the table's subscribers on
    other nodes), msgpack (the same bytes are left in ``fanout.primed`` for
    this node's own subscribers). None when there is nothing to say."""
    wanted = set(viewers)
    if not changes and (not wanted or not records):
        return None
    encode = MSGPACK_CODEC.encode
    primed = fanout.primed
    out: list[Any] = ["e", fanout.table_id, seq, list(changes)]
    if wanted:
        for rec in records:
            item: list[Any] = [rec.seq]
            views: set[int | None] = {view_key(rec, v) for v in wanted}
            for key in views:
                blob = primed[(rec.seq, key)] = cast(bytes, encode(cast(Data, fanout.frame(rec, key, True))))
                item += (key, blob)
            out.append(item)
    return wire.pack(out)


def membership_changes(before: Mapping[Hashable, int | None], now: Mapping[Hashable, int | None]) -> list[Any]:
    """What changed between two maps of remote subscriber key -> viewer:
    flat ``[node, connection, viewer, ...]`` (:data:`GONE` for a key no
    longer there).

    >>> a, b, c = wire.remote_key("n1", 1), wire.remote_key("n1", 2), wire.remote_key("n2", 5)
    >>> membership_changes({a: 2, b: None, 7: None}, {a: None, c: 3, 7: 1})
    ['n1', 1, None, 'n2', 5, 3, 'n1', 2, -1]
    """
    flat: list[Any] = []
    for key, viewer in now.items():
        if key not in before or before[key] != viewer:
            parsed = wire.parse_key(key)
            if parsed is not None:
                flat += (parsed[0], parsed[1], viewer)
    for key in before:
        if key not in now:
            parsed = wire.parse_key(key)
            if parsed is not None:
                flat += (parsed[0], parsed[1], GONE)
    return flat


class Owned:
    """What this node keeps about its tables' subscribers on other nodes:
    a :class:`RemotePeer` per (table, key), and each table's public info as
    last written (the lobby entry is written only when it changed)."""

    def __init__(self, outbox: Outbox, keys: Keys, tables: Mapping[str, TableActor]) -> None:
        self.outbox = outbox
        self.keys = keys
        self.tables = tables  # the tables served here (TableActors by id)
        self.peers: dict[tuple[str, Hashable], RemotePeer] = {}
        self._infos: dict[str, tuple[int, bytes]] = {}  # table -> (spectators, info) as last written
        #: table -> (the subscribers' change count, remote key -> viewer) as last published
        self._members: dict[str, tuple[int, dict[Hashable, int | None]]] = {}
        #: the same, dressed into a checkpoint not yet written
        self._pending: dict[str, tuple[int, dict[Hashable, int | None]]] = {}
        #: table -> (its subscribers, their change count, remote key -> viewer, their viewers) now:
        #: found again only when the subscribers change (or are another table machine's), not at every checkpoint
        self._remote: dict[str, tuple[Subscribers, int, dict[Hashable, int | None], set[int | None]]] = {}

    def peer(self, table: str, key: Hashable) -> RemotePeer | None:
        """The handle on remote subscriber ``key`` of ``table`` (None: ``key`` is a local one)."""
        parsed = wire.parse_key(key)
        if parsed is None:
            return None
        peer = self.peers.get((table, key))
        if peer is None:
            def subscribed() -> bool:
                held = self.tables.get(table)
                return held is not None and key in held.machine.subscribers
            peer = self.peers[(table, key)] = RemotePeer(self.outbox, self.keys, table, *parsed, subscribed)
        return peer

    def dress(self, table: TableActor, cp: Checkpoint, records: Sequence[EventRecord]) -> None:
        """Give ``table``'s checkpoint ``cp`` its fencing token,
        the publication of ``records`` and of the changes of its remote
        subscribers' viewers since the last written checkpoint (their nodes
        apply them before the events: the table alone decides every view),
        and its public info (JSON) when it changed. The changes count as
        published once the checkpoint is written (:meth:`written`)."""
        cp.token = table.token
        machine = table.machine
        subscribers = machine.subscribers
        remote = self._remote.get(table.id)
        if remote is None or remote[0] is not subscribers or remote[1] != subscribers.changes:
            members = {k: v for k, v in subscribers.viewers.items() if wire.parse_key(k) is not None}
            remote = self._remote[table.id] = (subscribers, subscribers.changes, members, set(members.values()))
        now, viewers = remote[2], remote[3]  # never changed: a change of subscribers makes new ones
        changes: list[Any] = []
        known = self._members.get(table.id)
        if known is None or known[0] != subscribers.changes:
            changes = membership_changes(known[1] if known is not None else {}, now)
            self._pending[table.id] = (subscribers.changes, now)
        message = publication(table.fanout, records, viewers, machine.seq, changes)
        if message is not None:
            cp.publish = (self.keys.channel(table.id), message)
        spectators = subscribers.spectators
        info_known = self._infos.get(table.id)
        if (info_known is not None and info_known[0] == spectators
                and not any(rec.event.data["type"] in INFO_EVENTS for rec in records)):
            return  # nothing the public info shows changed
        info = orjson.dumps(machine.lobby_record(), option=orjson.OPT_NON_STR_KEYS)  # with a private table's lock
        if info_known is None or info_known[1] != info:
            cp.info = info
        self._infos[table.id] = (spectators, info)

    def written(self, table: str) -> None:
        """``table``'s last dressed checkpoint is written: the membership it
        published is what its remote subscribers' nodes know now."""
        pending = self._pending.pop(table, None)
        if pending is not None:
            self._members[table] = pending

    def forget_info(self, table: str) -> None:
        """Write ``table``'s info with its next checkpoint (Redis lost it)."""
        self._infos.pop(table, None)

    def forget(self, table: str) -> None:
        """``table`` is not this node's any more."""
        for pair in [p for p in self.peers if p[0] == table]:
            del self.peers[pair]
        self._infos.pop(table, None)
        self._members.pop(table, None)
        self._pending.pop(table, None)
        self._remote.pop(table, None)

    def prune(self, tables: Mapping[str, TableActor]) -> None:
        """Drop the idle handles of subscribers no longer at their table (``tables``: id -> TableActor)."""
        for table_id, key in list(self.peers):
            held = tables.get(table_id)
            if (held is None or key not in held.machine.subscribers) and self.peers[(table_id, key)].idle:
                del self.peers[(table_id, key)]
