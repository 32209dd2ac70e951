"""Answering a ``join`` once its step is written (SPEC "Resuming and reconnecting").

A join with ``since`` within what the table still holds (its event buffer,
or the store's stream for older events) gets the missed events, then ``ok``;
any other gets a ``snapshot``. The server's own join of a relayed
connection (:data:`~cardhall.server.table.inputs.REJOIN`) gets the same
without the ``ok``, and a snapshot only when the events are no longer held.
A new owner's connections get a snapshot sent on their own after the step's
events (:func:`send_fresh`, SPEC "The host's controls").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Collection, Hashable, Iterable, Mapping
from typing import Any

from cardhall.protocol import frames
from cardhall.server.buffer import EventBuffer
from cardhall.server.fanout import Fanout, Peer
from cardhall.server.table.inputs import REJOIN
from cardhall.server.table.machine import TableMachine
from cardhall.server.table.outputs import JoinAnswer, Reply
from cardhall.server.table.records import EventRecord
from cardhall.server.table.subscribers import NOT_JOINED, Subscribers

log = logging.getLogger("cardhall.table")

Data = dict[str, Any]
#: the store's events of a table ``seq < s <= upto`` (None: not all of them are kept)
EventsSince = Callable[[str, int, int], Awaitable[list[tuple[int, Data]] | None]]


def answer_join(machine: TableMachine, buffer: EventBuffer[EventRecord], fanout: Fanout, peer: Peer,
                join: JoinAnswer, published: Iterable[EventRecord], older: list[EventRecord] | None) -> None:
    """Send ``peer`` the answer to ``join``: with ``since`` within ``buffer``
    (or ``older``: the store's events before it), the missed events then
    ``ok``; else a snapshot. A join that started the match gets the snapshot
    taken before it, then the events after that snapshot's ``seq`` (all among
    ``published``, written with this join). Nothing for a subscriber that is
    gone by now."""
    if machine.subscribers.viewer(join.sub) is NOT_JOINED:
        return
    if join.before is not None:
        peer.send(join.before)
        after = [rec for rec in published if rec.seq > join.before["seq"]]
        fanout.replay(peer, join.viewer, after, machine.turn_id)
        return
    since, seq = join.since, machine.seq
    if since is not None and since <= seq:
        first = buffer.first_seq
        if since == seq or (first is not None and first <= since + 1) or older is not None:
            missed = buffer.since(since)
            if older:
                missed = older + missed
            fanout.replay(peer, join.viewer, missed, machine.turn_id)
            if join.re != REJOIN:
                peer.send(frames.ok(join.re, seq))
            return
    own = join.re == REJOIN  # the server's own join: a snapshot sent on its own, without re
    peer.send(machine.snapshot(join.viewer, None if own else join.re, time.monotonic(), reply=not own,
                               player=join.player))


def send_fresh(machine: TableMachine, peer_of: Callable[[Hashable], Peer | None], players: Iterable[str],
               answered: Collection[Hashable]) -> None:
    """Send each connection of each of ``players`` watching the table a
    snapshot on its own (no ``re``), built now, after the step's events
    (``Outputs.fresh``): the table as that connection's viewer sees it, with
    the owner's ``info`` (the invite and the requests for a seat) for the
    owner only (:func:`.views.snapshot`). A player that no longer owns the
    table by now gets none (nothing it may not see), nor does a connection
    whose join this delivery answers (``answered``: its answer is as fresh)."""
    subscribers = machine.subscribers
    for player in dict.fromkeys(players):
        if player != machine.owner:
            continue
        for key in subscribers.keys_of(player):
            viewer = subscribers.viewer(key)
            if key in answered or viewer is NOT_JOINED:
                continue
            peer = peer_of(key)
            if peer is not None:
                peer.send(machine.snapshot(viewer, None, time.monotonic(), reply=False, player=player))
                peer.flush()


def reply_tails(subscribers: Subscribers, peer_of: Callable[[Hashable], Peer | None],
                replies: list[Reply]) -> tuple[dict[Hashable, list[Mapping[str, Any]]], list[Reply]]:
    """Split a step's ``replies`` in two: those to subscribers of the table
    connected to this node, to leave with the step's events in the same
    message (``subscriber -> frames``, in order: :meth:`Fanout.publish`'s
    ``tails``), and the others (in order), sent after the events."""
    tails: dict[Hashable, list[Mapping[str, Any]]] = {}
    rest: list[Reply] = []
    for reply in replies:
        if reply.sub in subscribers and reply.frame.get("re") != REJOIN and peer_of(reply.sub) is not None:
            tails.setdefault(reply.sub, []).append(reply.frame)
        else:
            rest.append(reply)
    return tails, rest


async def read_older_events(machine: TableMachine, buffer: EventBuffer[EventRecord], events_since: EventsSince,
                            joins: list[JoinAnswer]) -> dict[int, list[EventRecord]]:
    """Joins with a ``since`` older than ``buffer`` (a restart empties it; it
    is bounded) get the missing events from the store's stream when it still
    holds them all (keyed by ``id`` of the join); otherwise they get a
    snapshot (an empty answer here)."""
    first = buffer.first_seq
    if first is None:
        first = machine.seq + 1
    wanting = [j for j in joins if j.since is not None and j.since + 1 < first and j.since < machine.seq]
    if not wanting:
        return {}
    since = min(j.since for j in wanting if j.since is not None)
    try:
        stored = await events_since(machine.id, since, first - 1)
    except Exception as exc:
        log.warning("table %s: stored events after seq %s unreadable (%s); sending snapshots", machine.id, since, exc)
        return {}
    if stored is None:
        return {}
    records = [machine.record_from_data(seq, data) for seq, data in stored]
    return {id(j): [rec for rec in records if j.since is not None and rec.seq > j.since] for j in wanting}
