"""The table machine: one table's rules as a state machine without I/O.

``TableMachine.step(inputs, now)`` applies inputs in order and returns the
step's :class:`~cardhall.server.table.outputs.Effects` (a timer, immediate
replies, notices); what must be written before it leaves accumulates in
:attr:`TableMachine.pending` (:class:`~cardhall.server.table.outputs.Outputs`)
until the owner has committed it and calls :meth:`TableMachine.take`. So no
event, snapshot or ``ok`` leaves before the checkpoint holding it (the
owner's side of the guarantee: ``server/STORAGE.md``).

Faults: an exception while applying an input drops that input's partial
events and replies and marks the table broken (a ``broken`` event); nothing
else is touched. A fault of the owner's outside a step (delivering,
encoding) is contained the same way through :meth:`TableMachine.fail`, and
a checkpoint the store refuses
(:class:`~cardhall.server.table.inputs.StoreRejected`) breaks the table with
a ``broken`` event too. A broken table answers every request with
``table_broken`` and takes a :class:`~cardhall.server.table.inputs.Close`
(its ``closed`` event is its last). Stalls: when the store cannot be written
(:class:`~cardhall.server.table.inputs.StoreFailed`) the table keeps what it
applied unpublished, stops its clock and timer, refuses requests with
``unavailable`` (an immediate reply) and holds closes; disconnects, renames
and the service's stop are still taken. When a checkpoint is written again
(:class:`~cardhall.server.table.inputs.StoreWritten`) it re-arms its turn and
takes the closes it held.

Rules: G-2 (:mod:`.match`), G-3/G-4 (:mod:`.turns`), G-5 (:mod:`.seating`),
G-7/G-8/G-9 (:mod:`.lifecycle`), requests (:mod:`.requests`), names (:mod:`.naming`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from cardhall.engine.base import Event
from cardhall.engine.bots.registry import DEFAULT
from cardhall.engine.rng import new_server_seed
from cardhall.protocol.errors import ProtocolError
from cardhall.protocol.frames import Info, Snapshot, Turn
from cardhall.server.table import access, chat, host_controls, lifecycle, naming, requests, seating, state, turns, views
from cardhall.server.table.bots import Thought
from cardhall.server.table.clock import TurnClock
from cardhall.server.table.core import (
    BROKEN,
    CLOSED,
    FINISHED,
    HUMAN,
    WAITING,
    Entropy,
    TableCore,
)
from cardhall.server.table.inputs import (
    REJOIN,
    REQUESTS,
    STORE_OUTCOMES,
    Act,
    AutoDue,
    BotDue,
    Chat,
    ClockDue,
    Close,
    Disconnect,
    Input,
    Join,
    Now,
    OwnerAway,
    Rearm,
    RematchDue,
    Rename,
    Request,
    SeatRequestDue,
    ServiceStopping,
    Start,
    StepDue,
    StoreBack,
    StoreFailed,
    StoreRejected,
    StoreWritten,
)
from cardhall.server.table.log import Recorder
from cardhall.server.table.occupant import Occupant
from cardhall.server.table.outputs import BROKEN as NOTICE_BROKEN
from cardhall.server.table.outputs import STALLED, UNSTALLED, Effects, LoggedStep, Outputs, Reply
from cardhall.server.table.privacy import Privacy
from cardhall.server.table.records import EventRecord, record_from_data

log = logging.getLogger("cardhall.table")

Data = dict[str, Any]

#: the rule each input that is not a request or a store outcome goes to
_RULES: Mapping[type, Callable[[TableCore, Any], None]] = {
    Disconnect: seating.disconnect,
    Rename: naming.rename,
    ClockDue: turns.clock_expired,
    BotDue: turns.bot_turn,
    AutoDue: turns.auto_turn,
    StepDue: turns.paced_step,
    RematchDue: lifecycle.rematch_due,
    SeatRequestDue: access.lapse_due,
    Close: lifecycle.close,
    Start: lifecycle.start_when_full,
    Rearm: lifecycle.rearm_input,
    OwnerAway: host_controls.owner_away,
    ServiceStopping: lifecycle.service_stopping,
}


class TableMachine(TableCore):
    """One table (see the module docstring). Build with :meth:`create` or
    :meth:`from_data`; feed with :meth:`step`; deliver :meth:`take`'s outputs
    after writing them."""

    @classmethod
    def create(cls, table_id: str, game: str, n_seats: int, table_options: Data, game_options: Data,
               owner: str | None, bots: list[str | None], now: Now,
               entropy: Entropy = new_server_seed, privacy: Privacy | None = None) -> TableMachine:
        """A new table with ``bots`` (bot names, None for the game's default)
        in the last seats (NL-5); its first server seed is drawn from
        ``entropy`` now, before anyone sits down (G-2); ``privacy``: its
        invite and password record (:func:`cardhall.server.creation.seal`).
        Its whole state is to be written (``pending.full``)."""
        machine = cls(table_id, game, n_seats, table_options, game_options, owner,
                      server_seed=entropy(), entropy=entropy, now=now)
        if privacy is not None:
            machine.privacy = privacy
        first = n_seats - len(bots) + 1
        for i, bot in enumerate(bots):
            seat = first + i
            machine.seats[seat] = Occupant(seat, None, f"bot {seat}", bot=bot or DEFAULT[game])
        machine.changed()
        machine.pending.full = True
        return machine

    @classmethod
    def from_data(cls, data: Data, now: Now, entropy: Entropy = new_server_seed) -> TableMachine:
        """A table from :meth:`to_data` (the current format); its clock stays paused with
        the time that was left until a :class:`~cardhall.server.table.inputs.Rearm`;
        its next checkpoint writes its whole state.
        ValueError on another version, KeyError/ValueError on malformed data
        (the caller checks the stored options first:
        :func:`cardhall.server.stored.check_stored_options`)."""
        state.check_version(data)
        machine = cls(data["id"], data["game"], data["seats"], data["table_options"], data["game_options"],
                      data["owner"], server_seed=bytes.fromhex(data["server_seed"]), entropy=entropy, now=now)
        state.load(machine, data)
        machine.pending.full = True  # a full state first: the log after it is this process's
        return machine

    # -- feeding ----------------------------------------------------------------
    def step(self, inputs: Iterable[Input], now: Now, recorder: Recorder | None = None) -> Effects:
        """Apply ``inputs`` in order at time ``now``; returns what to do at once.
        What must be written first is in :attr:`pending`, the step itself
        among it as the input log's next entry (:mod:`.log`). ``recorder``:
        a replay's, giving back the entry's draws (default: draw and record)."""
        effects = self.effects = Effects()
        inputs = tuple(inputs)
        rec = self.recorder = recorder if recorder is not None else Recorder()
        before = self._footprint()
        for inp in inputs:
            self._handle(inp, now)
        if self._footprint() != before or rec.seeds or rec.moves or recorder is not None:
            self.logged += 1
            digest = state.digest(self, now.mono) if self.verify_log else None
            self.pending.log.append(LoggedStep(self.logged, now, inputs, rec, digest))
        return effects

    def _footprint(self) -> tuple[Any, ...]:
        """What a step that changes the table changes: events, the state's
        dirty flag, hands, who watches, and the service's flags. A step that
        leaves all of it as it was (an error reply, a stale timer) changed
        nothing a replay needs, and is not logged (every rule that changes
        the state emits an event or calls :meth:`changed`)."""
        out = self.pending
        return (self.seq, out.dirty, len(out.hands), self.subscribers.changes, len(self.deferred),
                self.service_stopping, self.stalled, self.status, out.full)

    def handle(self, inp: Input, now: Now) -> Effects:
        """:meth:`step` with one input."""
        return self.step((inp,), now)

    def unanswered(self, queued: Iterable[Input] = ()) -> list[tuple[Hashable, Any]]:
        """``(subscriber, re)`` of every request this table took and has not
        answered yet (its answers wait for a commit), then of the requests in
        ``queued`` (inputs not taken): what a dropped table owes ``unavailable``
        (SPEC "Resuming and reconnecting"). The server's own joins are not counted."""
        out = self.pending
        owed = [(j.sub, j.re) for j in out.joins] + [(r.sub, r.frame.get("re")) for r in out.replies]
        owed += [(i.sub, i.re) for i in queued if isinstance(i, REQUESTS)]
        return [(sub, re) for sub, re in owed if re is not None and re != REJOIN]

    def take(self) -> Outputs:
        """The pending outputs (written by the owner: now to deliver); the next
        steps accumulate new ones."""
        out, self.pending = self.pending, Outputs()
        return out

    def _handle(self, inp: Input, now: Now) -> None:
        self.now = now
        if isinstance(inp, STORE_OUTCOMES):
            self._store(inp)
        elif self.stalled and not isinstance(inp, (Disconnect, Rename, ServiceStopping)):
            self._held(inp)
        elif isinstance(inp, REQUESTS):
            self._request(inp)
            self.effects.members[inp.sub] = inp.sub in self.subscribers
        elif self.status == BROKEN and isinstance(inp, Close):
            self._close_broken(inp)
        elif self.status in (CLOSED, BROKEN):
            if isinstance(inp, Disconnect):  # forgotten without events: nothing is published any more
                self.subscribers.unsubscribe(inp.sub)
                self.effects.members[inp.sub] = False
            elif isinstance(inp, ServiceStopping):
                self.service_stopping = True
        else:
            mark = self._mark()
            try:
                _RULES[type(inp)](self, inp)
            except Exception:
                self._fault(mark, type(inp).__name__)
            if isinstance(inp, Disconnect):
                self.effects.members[inp.sub] = inp.sub in self.subscribers

    def _request(self, inp: Request) -> None:
        mark = self._mark()
        try:
            if access.hides(self, inp):  # an unlisted table, to a stranger: as if there were none
                raise ProtocolError("unknown_table", f"no open table {self.id!r}")
            if self.status in (CLOSED, BROKEN):
                raise ProtocolError("table_closed" if self.status == CLOSED else "table_broken",
                                    f"table {self.id} is {self.status}")
            if isinstance(inp, Join):
                seating.join(self, inp)
            elif isinstance(inp, Act):
                requests.act(self, inp)
            elif isinstance(inp, Chat):
                chat.chat(self, inp)
            else:
                seating.leave(self, inp)
        except ProtocolError as exc:
            self.reply(inp.sub, exc.frame(inp.re))
            self.effects.errors.append(exc.code)
        except Exception:
            self._fault(mark, f"request {type(inp).__name__.lower()!r}")
            self.reply(inp.sub, ProtocolError("table_broken", "the table failed").frame(inp.re))

    # -- faults -------------------------------------------------------------------
    def _mark(self) -> tuple[int, int, int, int]:
        out = self.pending
        return len(out.records), self.seq, len(out.replies), len(out.hands)

    def _fault(self, mark: tuple[int, int, int, int], what: str) -> None:
        """Contain a fault: drop the failed input's partial events, replies and
        hands, mark the table broken with a ``broken`` event."""
        log.exception("table %s (%s) broke while handling %s", self.id, self.game, what)
        records, seq, replies, hands = mark
        out = self.pending
        del out.records[records:], out.replies[replies:], out.hands[hands:]
        self.seq = seq
        self._broken()

    def fail(self, what: str, now: Now, unanswered: Iterable[tuple[Any, Any]] = ()) -> Effects:
        """Contain a fault of the owner's outside a step (``what``: where, for
        the log): drop everything pending and not yet written (events, hands,
        replies; the ``seq`` goes back to the last event kept), answer each
        request left without its answer with ``table_broken`` (the pending
        ones, and ``unanswered``: ``(subscriber, re)`` pairs the owner had
        taken but not delivered), and, unless it already is, mark the table
        broken with a ``broken`` event. Returns the step's effects."""
        effects = self.effects = Effects()
        self.now = now
        out = self.pending
        waiting = [(r.sub, r.frame.get("re")) for r in out.replies] + [(j.sub, j.re) for j in out.joins]
        if out.records:
            self.seq = out.records[0].seq - 1
        self.pending = Outputs(dirty=out.dirty, full=True)
        error = ProtocolError("table_broken", "the table failed")
        for sub, re in [*waiting, *unanswered]:
            self.reply(sub, error.frame(re))
            effects.errors.append(error.code)
        if self.status not in (BROKEN, CLOSED):
            log.error("table %s (%s) broke: %s", self.id, self.game, what)
            self._broken()
        return effects

    def _broken(self) -> None:
        """Mark the table broken: no timer, a ``broken`` event, the host told."""
        self.cancel_timer()
        self.status = BROKEN
        self.pending.full = True  # a fault is not replayed: the broken state is written whole
        self.emit(Event({"type": "broken"}))
        self.effects.notices.append(NOTICE_BROKEN)

    def _close_broken(self, inp: Close) -> None:
        """A broken table closes (an operator, or G-9's sweeping of a table
        nobody watches): ``closed`` is its last event; nothing else of it runs."""
        self.cancel_timer()
        self.status = CLOSED
        self.changed()
        self.emit(Event({"type": "closed", "reason": inp.reason}))

    # -- the store ---------------------------------------------------------------
    def _store(self, inp: StoreFailed | StoreWritten | StoreBack | StoreRejected) -> None:
        if isinstance(inp, StoreFailed):
            self.changed()  # everything pending is tried again with the next checkpoint
            if not self.stalled:
                self.stalled = True
                if isinstance(self.clock, TurnClock):
                    self.clock = self.clock.pause(self.now.mono)
                self.cancel_timer()
                self.effects.notices.append(STALLED)
        elif isinstance(inp, StoreWritten):
            if self.stalled:
                self.stalled = False
                self.effects.notices.append(UNSTALLED)
                deferred, self.deferred = self.deferred, []
                for held in (Rearm(), *deferred):
                    self._handle(held, self.now)
        elif isinstance(inp, StoreBack):
            if self.stalled:
                self.changed()
        else:  # the checkpoint cannot be written at all: out of service, and its viewers told
            out = self.pending
            if out.records:
                self.seq = out.records[0].seq - 1
            error = ProtocolError("table_broken", "the table's state cannot be saved")
            waiting = [(r.sub, r.frame.get("re")) for r in out.replies] + [(j.sub, j.re) for j in out.joins]
            self.pending = Outputs()
            for sub, re in waiting:
                self.reply(sub, error.frame(re))
                self.effects.errors.append(error.code)
            if self.status == CLOSED:
                self.emit(Event({"type": "closed", "reason": "the table's state cannot be saved"}))
            elif self.status != BROKEN:
                log.error("table %s (%s) broke: its state cannot be saved (%s)", self.id, self.game, inp.reason)
                self._broken()
            else:
                self.emit(Event({"type": "broken"}))

    def _held(self, inp: Input) -> None:
        """An input while stalled: a request is refused at once (``unavailable``:
        the client retries), a close waits for the store, the table's own
        timers are dropped (re-armed when the store answers)."""
        if isinstance(inp, REQUESTS):
            error = ProtocolError("unavailable", "the table cannot save its state right now; retry shortly")
            self.effects.immediate.append(Reply(inp.sub, error.frame(inp.re)))
            self.effects.errors.append(error.code)
        elif isinstance(inp, Close):
            self.deferred.append(inp)

    # -- questions -------------------------------------------------------------------
    def bot_thought(self, due: BotDue) -> Thought | None:
        """What a costly bot needs to think the move ``due`` asks for away from
        the table (:func:`.turns.bot_thought`); its move comes back as
        ``BotDue.move``. None: think it in the step (or ``due`` is stale)."""
        return turns.bot_thought(self, due)

    def snapshot(self, viewer: int | None, re: Any, mono: float, reply: bool = True,
                 player: str | None = None) -> Snapshot:
        """The ``snapshot`` frame for ``viewer`` at monotonic time ``mono``
        (``reply``: the answer to a join, with ``re``; else sent on its own;
        ``player``: whose join it answers, :func:`.views.snapshot`)."""
        return views.snapshot(self, viewer, re, mono, reply, player)

    def info(self, invite: bool = False) -> Info:
        """Public metadata (``GET /api/tables/{id}``, ``snapshot.info``);
        ``invite``: as the owner sees it, with the invite."""
        return views.info(self, invite)

    def lobby_record(self) -> Data:
        """What a cluster's lobby keeps (:func:`.views.lobby_record`: never served as it is)."""
        return views.lobby_record(self)

    def lobby_entry(self) -> Data:
        """The ``GET /api/tables`` entry."""
        return views.lobby_entry(self)

    def turn_public(self, mono: float) -> Turn | None:
        """The open turn as everyone may see it at monotonic time ``mono``."""
        return views.turn_public(self, mono)

    def to_data(self, mono: float, shared: bool = False) -> Data:
        """The stored state (:func:`.state.to_data`), clocks as seconds left at ``mono``."""
        return state.to_data(self, mono, shared)

    def record_from_data(self, seq: int, data: Data) -> EventRecord:
        """An event record from its stored form; the open turn's gets its legal actions again."""
        legal = self.turn_legal if self.turn_kind == HUMAN else None
        return record_from_data(seq, data, self.turn_id, self.turn_seat, legal)

    @property
    def clock_running(self) -> bool:
        """A person's action clock or time bank is running now (G-3)."""
        return isinstance(self.clock, TurnClock)

    def sweep_due(self, mono: float, wall: float) -> list[Input]:
        """What the hall's periodic sweep posts to the table at monotonic time
        ``mono`` and Unix time ``wall``: a close when :meth:`should_close` (G-9),
        else :class:`~cardhall.server.table.inputs.OwnerAway` when the owner has
        been away for ``close_after`` while others play on
        (:func:`.host_controls.owner_pass_due`), else nothing."""
        if self.should_close(mono):
            return [Close("idle")]
        return [OwnerAway()] if host_controls.owner_pass_due(self, wall) else []

    def should_close(self, mono: float) -> bool:
        """G-9: nobody has watched for ``close_after`` seconds a table that is
        finished (or broken), or waiting with no person seated."""
        idle = self.subscribers.count == 0 and mono - self.idle_since >= self.seconds("close_after")
        abandoned = self.status == WAITING and not any(o.human for o in self.seats.values())
        return idle and (self.status in (FINISHED, BROKEN) or abandoned)
