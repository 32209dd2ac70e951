"""The table actor: the one place a table awaits, arms its timer, commits and publishes.

One asyncio task per table takes everything queued in its mailbox, feeds it
to the :class:`~cardhall.server.table.machine.TableMachine` at one time
(:class:`~cardhall.server.table.inputs.Now`), arms or cancels the table's
timer and sends the immediate replies the step asks for, then

1. hands one :class:`~cardhall.server.store.base.Checkpoint` (state, new
   events packed once with ``pack_record``, finished hands) to the host's
   group committer and waits for it to be written,
2. only then delivers: each new event to every subscriber, encoded once per
   distinct view and codec (:class:`~cardhall.server.fanout.Fanout`), then
   the join answers (snapshot, or the missed events then ``ok``), then the
   replies; the committed bytes go to the event buffer for later joins.

So no event, snapshot or acknowledgement leaves before the checkpoint holding
it. A store that is down (:class:`~cardhall.server.store.base.StoreUnavailable`)
stalls the table (:class:`~cardhall.server.table.inputs.StoreFailed`) until a
checkpoint is written again; any other commit error (the checkpoint cannot
be built or encoded) breaks it and makes it *unwritable*: the host sets the
store's older copy aside (:meth:`TableHost.table_unwritable`), and what the
table still publishes (``broken``, the ``table_broken`` answers, ``closed``)
is delivered without a checkpoint. The actor reaches the service only
through :class:`TableHost`.

No table dies silently: whatever escapes a step outside the machine's rules
(delivering, encoding, the cluster's part of a checkpoint) is contained by
the loop itself (:meth:`TableMachine.fail`): the table becomes broken, its
viewers get the ``broken`` event, each request taken but not answered and
everything still in the mailbox is answered with ``table_broken``, the host
is told, and a ``Close`` still closes it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Protocol, cast

from cardhall.protocol.frames import Turn
from cardhall.server.buffer import EventBuffer
from cardhall.server.fanout import Fanout, Peer
from cardhall.server.mailbox import Mailbox
from cardhall.server.store.base import Checkpoint, LeaseLost, StoreUnavailable
from cardhall.server.store.format import pack_record
from cardhall.server.table.alarm import Alarm
from cardhall.server.table.answers import answer_join, read_older_events, reply_tails, send_fresh
from cardhall.server.table.bots import Thought
from cardhall.server.table.core import CLOSED
from cardhall.server.table.host import RelayedPeer, TableMetrics
from cardhall.server.table.inputs import (
    REJOIN,
    BotDue,
    Input,
    Now,
    Rearm,
    Start,
    StoreFailed,
    StoreRejected,
    StoreWritten,
)
from cardhall.server.table.machine import TableMachine
from cardhall.server.table.outputs import (
    BROKEN,
    STALLED,
    UNSTALLED,
    Effects,
    Outputs,
    Timer,
)
from cardhall.server.table.records import EventRecord
from cardhall.server.table.subscribers import NOT_JOINED

log = logging.getLogger("cardhall.table")

Data = dict[str, Any]


class TableHost(Protocol):
    """What a table actor needs from the service around it (the hall)."""

    @property
    def metrics(self) -> TableMetrics: ...

    def commit(self, checkpoint: Checkpoint) -> Awaitable[None]:
        """Write ``checkpoint`` (grouped with other tables'); raises StoreUnavailable or the store's error."""

    def events_since(self, table: str, seq: int, upto: int) -> Awaitable[list[tuple[int, Data]] | None]:
        """The stored event records ``seq < s <= upto``, or None when not all are kept."""

    def peer(self, key: Hashable) -> Peer | None:
        """The connection of subscriber ``key`` on this node, or None when it is gone."""

    def remote_peer(self, table: str, key: Hashable) -> RelayedPeer | None:
        """The handle on subscriber ``key`` of ``table`` connected to another
        node (None: ``key`` is not such a subscriber)."""

    def dress(self, table: TableActor, checkpoint: Checkpoint, records: list[EventRecord]) -> None:
        """Add what the topology writes with ``table``'s checkpoint (a cluster's fencing token, events
        and view changes for other nodes, lobby entry); :meth:`written` once it is written."""

    def written(self, table: TableActor) -> None: ...

    def lease_lost(self, table: TableActor) -> Awaitable[bool]:
        """``table``'s checkpoint was refused (its token is not the lease): True
        when the lease was free and is ``table``'s again (a new ``token``:
        write again), False when another node owns it (the table is dropped)."""

    def table_closed(self, table: TableActor) -> None:
        """``table``'s ``closed`` event is out; its actor has ended."""

    def table_broken(self, table: TableActor) -> None:
        """``table`` broke (a fault, or a checkpoint the store refused)."""

    def table_unwritable(self, table: TableActor, reason: str) -> None:
        """``table``'s checkpoints cannot be written at all (``reason``: why):
        the copy in the store is older than the table and must never be
        restored (set it aside); the table writes nothing more."""

    def table_stalled(self, table: TableActor, exc: StoreUnavailable) -> None:
        """``table``'s checkpoint could not be written: the store is unavailable."""

    def table_unstalled(self, table: TableActor) -> None:
        """``table`` wrote what it held and takes inputs again."""

    def think(self, table: TableActor, due: BotDue) -> None:
        """A bot's think time at ``table`` is over: queue its turn with the
        node's others (:class:`~cardhall.server.thinker.Thinker`), which posts
        ``due`` back with :meth:`TableActor.post` (and its move, when thought away)."""


def now() -> Now:
    """The time of a step: wall and monotonic seconds."""
    return Now(time.time(), time.monotonic())


def pack(rec: EventRecord) -> bytes:
    """``rec``'s stored record, packed (``pack_record``: the same bytes go to
    the store and, once written, to the event buffer)."""
    return pack_record(rec.event, rec.ts, cast("Data | None", rec.turn))


class TableActor:
    """The asyncio owner of one :class:`TableMachine` (see the module docstring).

    ``buffer_size``: events kept for ``join`` with ``since``. ``creator``: the
    client address that created the table here (None: an operator's, or a
    table restored; not part of the table's state: the hall's limits keep
    their own counts, :mod:`cardhall.server.limits`). Other code talks to it through
    :meth:`post` and reads the machine.
    """

    #: steps of the input log between two full states at most (``Settings.full_state_every``)
    full_every = 8

    def __init__(self, host: TableHost, machine: TableMachine, buffer_size: int, creator: str | None = None,
                 full_every: int | None = None) -> None:
        self.host = host
        if full_every is not None:
            self.full_every = full_every
        #: input log steps stored since the last full state
        self._since_full = 0
        self.machine = machine
        self.id = machine.id
        self.creator = creator
        self.mailbox: Mailbox[Input] = Mailbox()
        self.buffer: EventBuffer[EventRecord] = EventBuffer(buffer_size, machine.record_from_data)
        self.fanout = Fanout(self.id, host.peer, machine.game)
        #: the fencing token of this node's lease on the table (None: no cluster)
        self.token: str | None = None
        #: the ``seq`` of the last event delivered to this node's subscribers
        self.delivered = machine.seq
        self.lost = False
        #: the store refused a checkpoint of this table (not for being down): nothing more is written
        self.unwritable = False
        #: ``(subscriber, re)`` of the requests being answered by the delivery under way, in its order
        self._answering: list[tuple[Hashable, Any]] = []
        self._answered = 0
        self._alarm: Alarm[Input] = Alarm(self._fire)
        #: what to call once the inputs posted with them are applied, written and delivered
        self._done: list[Callable[[], None]] = []
        self._ended_at_once = False
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- life ---------------------------------------------------------------------
    def start(self, restored: bool = False) -> None:
        """Run the actor: a full waiting table starts its match (G-9); a
        restored one re-arms its clock, bot, dealer step or rematch."""
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._run(), name=f"table {self.id}")
        self._task.add_done_callback(self._ended)
        self.post(Start())
        if restored:
            self.post(Rearm())

    def stop(self) -> asyncio.Task[None]:
        """End the actor (the service stops): no input is taken after the one
        being applied; returns its task, to wait for."""
        self._cancel_timer()
        assert self._task is not None, "the actor was not started"
        self._task.cancel()
        return self._task

    def drop(self) -> list[tuple[Hashable, Any]]:
        """End the actor at once without delivering anything it holds (its lease is another node's:
        nothing it did since its last checkpoint was written or seen); returns ``(subscriber, re)``
        of the requests it took or held unanswered (:meth:`TableMachine.unanswered`)."""
        self.lost = True
        self._cancel_timer()
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
        self.host.table_unstalled(self)  # it holds nothing to write any more: no longer counted stalled
        self._finished()
        return self.machine.unanswered(self.mailbox.drain())

    def post(self, inp: Input, done: Callable[[], None] | None = None) -> None:
        """Put an input in the mailbox (never blocks). ``done``: called once
        the step that takes it has been written and delivered (at once when
        the actor has ended: nothing will take it)."""
        self.mailbox.post(inp)
        if done is not None:
            if self._ended_at_once:
                done()
            else:
                self._done.append(done)

    def _finished(self) -> None:
        """The actor takes no more inputs: whoever waits for one posted is told now."""
        self._ended_at_once = True
        done, self._done = self._done, []
        for call in done:
            call()

    def attended(self) -> bool:
        """A person holding a seat at the table is in play (:meth:`TableCore.attended`)."""
        return self.machine.attended()

    def bot_thought(self, due: BotDue) -> Thought | None:
        """What a costly bot needs to think ``due``'s move away from the table (:meth:`TableMachine.bot_thought`)."""
        return self.machine.bot_thought(due)

    @property
    def logged_since_whole(self) -> int:
        """Input log steps stored since the table's last whole state."""
        return self._since_full

    @property
    def timer_armed(self) -> bool:
        """The table's timer (its clock, a bot's think, a dealer step) is armed."""
        return self._alarm.armed

    @property
    def quiet(self) -> bool:
        """Nothing waits in the mailbox or for a commit."""
        return self.mailbox.empty() and not self.machine.pending.needs_commit

    # -- questions that need the time -------------------------------------------------
    def to_data(self) -> Data:
        """The table's state now (clocks as seconds left now)."""
        return self.machine.to_data(time.monotonic())

    def turn_public(self) -> Turn | None:
        """The open turn as everyone sees it now (clock and bank left now), or None."""
        return self.machine.turn_public(time.monotonic())

    def whole_checkpoint(self) -> Checkpoint:
        """The table's whole state now, to write at once (a graceful stop, a handover)."""
        cp = Checkpoint(self.id, self.to_data())
        cp.token = self.token
        return cp

    def full_checkpoint(self) -> Checkpoint:
        """Everything this table holds: its state, every buffered event and the
        events and hands not yet written (to fill a store that lost its data)."""
        pending = self.machine.pending
        events = self.buffer.packed() + [(rec.seq, pack(rec)) for rec in pending.records]
        cp = Checkpoint(self.id, self.to_data(), events, list(pending.hands), logged=self.machine.logged)
        cp.token = self.token
        return cp

    # -- the loop -----------------------------------------------------------------------
    async def _run(self) -> None:
        machine, mailbox = self.machine, self.mailbox
        try:
            while not self.lost:
                inputs = await mailbox.take()
                done, self._done = self._done, []
                try:
                    self._effects(machine.step(inputs, now()))
                    await self._flush()
                except Exception as exc:  # not CancelledError: stopping is not a fault
                    await self._contain(exc)
                finally:
                    for call in done:
                        call()
                if self.lost:
                    return
                if machine.status == CLOSED:
                    self.host.table_closed(self)
                    return
        finally:
            self._finished()

    async def _contain(self, exc: Exception) -> None:
        """``exc`` escaped a step outside the machine's rules: break the table
        through the machine (:meth:`TableMachine.fail`: ``broken`` event,
        ``table_broken`` for every request left unanswered) and deliver that.
        A second fault while doing so is logged and what is pending dropped:
        the loop goes on, so later requests are still answered."""
        log.error("table %s: %s escaped the table's step", self.id, type(exc).__name__, exc_info=exc)
        what = f"{type(exc).__name__}: {exc}"[:300]
        for _ in range(2):
            unanswered, self._answering = self._answering[self._answered:], []
            try:
                self._effects(self.machine.fail(what, now(), unanswered))
                await self._flush()
                return
            except Exception as again:
                log.error("table %s: containing the fault failed too (%s)", self.id, type(again).__name__, exc_info=again)
                what = f"{type(again).__name__}: {again}"[:300]
        self._answering = []
        self.machine.take()

    def _ended(self, task: asyncio.Task[None]) -> None:
        """The actor's task ended: an exception here is a fault of the loop
        itself (:meth:`_run` contains every other one); say so loudly."""
        self._finished()
        if not task.cancelled() and task.exception() is not None:
            log.critical("table %s: its actor ended with an exception; the table is out of service",
                         self.id, exc_info=task.exception())
            self.host.table_broken(self)

    async def _flush(self) -> None:
        """Write what the machine holds, then deliver it; again while that
        produced more (a table that unstalls re-arms its turn)."""
        machine = self.machine
        while not (pending := machine.pending).empty:
            checkpoint = None
            if pending.needs_commit and not self.unwritable:
                try:
                    checkpoint = self._checkpoint(pending)
                    await self.host.commit(checkpoint)
                except LeaseLost:
                    try:
                        if await self.host.lease_lost(self):
                            continue  # the lease expired unowned and is this table's again: write again
                    except StoreUnavailable as exc:
                        self._stall(exc)
                        return
                    log.warning("table %s: checkpoint refused, another node owns the table; dropped", self.id)
                    return
                except StoreUnavailable as exc:
                    self._stall(exc)
                    return
                except Exception as exc:
                    log.exception("table %s: checkpoint failed; table out of service", self.id)
                    self.unwritable = True
                    reason = f"its state cannot be written: {exc!r}"[:300]
                    self.host.table_unwritable(self, reason)
                    self._effects(machine.handle(StoreRejected(reason), now()))
                    continue
            out = machine.take()
            self._answering = [(j.sub, j.re) for j in out.joins] + [(r.sub, r.frame.get("re")) for r in out.replies]
            self._answered = 0
            if checkpoint is not None:
                self._written(checkpoint)
                append = self.buffer.append
                for seq, blob in checkpoint.events:  # committed: kept for joins with since
                    append(seq, blob)
            older = await read_older_events(self.machine, self.buffer, self.host.events_since, out.joins)
            self._deliver(out, older)
            self._answering = []
            if checkpoint is not None and machine.stalled:  # written: the stall is over
                self._effects(machine.handle(StoreWritten(), now()))

    def _stall(self, exc: StoreUnavailable) -> None:
        log.debug("table %s stalled: %s", self.id, exc)
        self._effects(self.machine.handle(StoreFailed(str(exc) or type(exc).__name__), now()), exc)

    def _checkpoint(self, out: Outputs) -> Checkpoint:
        """The checkpoint of what ``out`` holds: the whole state when it is due
        (:meth:`Outputs.whole_state_due`, every :attr:`full_every` steps at most), else
        the input log's new steps (``server/STORAGE.md``, "The input log")."""
        machine = self.machine
        mono = machine.now.mono
        records = list(out.records)
        steps = list(out.log)
        full = out.whole_state_due(self._since_full, self.full_every)
        cp = Checkpoint(self.id, lambda: machine.to_data(mono, shared=True),
                        lambda: [(rec.seq, pack(rec)) for rec in records],
                        list(out.hands),
                        log=None if full else (lambda: [(step.n, step.packed()) for step in steps]),
                        logged=machine.logged, steps=len(steps))
        if self.token is not None:
            self.host.dress(self, cp, records)
        return cp

    def _written(self, checkpoint: Checkpoint) -> None:
        """``checkpoint`` is stored: count the steps logged since the last full state."""
        self._since_full = 0 if checkpoint.whole else self._since_full + checkpoint.steps
        if checkpoint.token is not None:
            self.host.written(self)

    # -- acting on a step ---------------------------------------------------------------
    def _effects(self, effects: Effects, exc: StoreUnavailable | None = None) -> None:
        host = self.host
        timer = effects.timer
        if timer is not None:
            self._set_timer(timer if isinstance(timer, Timer) else None)
        for reply in effects.immediate:
            if reply.frame.get("re") == REJOIN:  # the server's own join: it asks again by itself
                continue
            peer = self._peer(reply.sub)
            if peer is not None:
                peer.send(reply.frame)
                peer.flush()
        for code in effects.errors:
            host.metrics.error(code)
        if not (effects.members or effects.notices):
            return
        for key, member in effects.members.items():
            peer = self._peer(key)  # a remote one sends the change with its next frames
            if peer is not None:
                if member:
                    peer.tables.add(self.id)
                else:
                    peer.tables.discard(self.id)
        for notice in effects.notices:
            if notice == BROKEN:
                host.table_broken(self)
            elif notice == STALLED and exc is not None:
                host.table_stalled(self, exc)
            elif notice == UNSTALLED:
                host.table_unstalled(self)

    def _set_timer(self, timer: Timer | None) -> None:
        """Arm ``timer`` in the table's one timer slot (None: empty it)."""
        if timer is None:
            self._alarm.clear()
        else:
            self._alarm.set(timer.at, timer.due)

    def _fire(self, due: Input) -> None:
        if isinstance(due, BotDue):
            self.host.think(self, due)  # queued with the node's other bot turns
        else:
            self.mailbox.post(due)

    def _cancel_timer(self) -> None:
        self._alarm.close()

    # -- delivering ------------------------------------------------------------------------
    def _peer(self, key: Hashable) -> Peer | None:
        """Subscriber ``key``'s connection here or handle on another node, following ``seq`` now."""
        peer = self.host.peer(key) or self.host.remote_peer(self.id, key)
        if peer is not None:
            peer.follows(self.machine.seq)
        return peer

    def _deliver(self, out: Outputs, older: dict[int, list[EventRecord]]) -> None:
        machine, host = self.machine, self.host
        records = out.records
        replies = out.replies
        if records:
            self.delivered = records[-1].seq
            tails = None
            if replies and not out.joins and not out.fresh:  # the replies to its subscribers go with the events
                tails, replies = reply_tails(machine.subscribers, host.peer, replies)
            self.fanout.publish(records, machine.subscribers.by_viewer(), skip={j.sub for j in out.joins},
                                tails=tails)
            if tails:
                self._answering = [(r.sub, r.frame.get("re")) for r in replies]
        if out.actions or records:
            done = time.monotonic()
            host.metrics.published(out.actions, len(records), [done - at for at in out.arrivals])
        for join in out.joins:
            peer = self._peer(join.sub)
            if (now_as := machine.subscribers.viewer(join.sub)) is not NOT_JOINED and join.before is None:
                join.viewer = now_as  # a later input of the same step may have changed it
            if peer is not None:
                peer.answers_join(join.viewer, machine.game)
                answer_join(self.machine, self.buffer, self.fanout, peer, join, records, older.get(id(join)))
                peer.flush()
            self._answered += 1  # counted once sent: a fault before leaves it to :meth:`_contain`
        send_fresh(machine, self._peer, out.fresh, {j.sub for j in out.joins})
        if replies:
            peers: list[Peer] = []
            for reply in replies:
                if reply.frame.get("re") != REJOIN:  # REJOIN: the server's own join (the table moved): nobody to answer
                    peer = self._peer(reply.sub)
                    if peer is not None:
                        peer.send(reply.frame)
                        peers.append(peer)
                self._answered += 1
            for peer in peers:
                peer.flush()
