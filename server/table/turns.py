"""Turns: who acts next, their clock and time bank, bots, automatic play,
pacing between streets and hands, and the solo player's ``continue``.

* G-3: a person's turn runs ``action_clock`` seconds, then their time bank
  (used only past the clock); when both run out the engine's timeout action
  is played, and a second timeout in a row sits the player out; a voluntary
  action resets the count. A sitting-out player's turn is played at once.
* G-4: a dealer step (next street, next hand) waits ``pause`` seconds; a table
  whose only human is one player still in the match (not busted, knocked out
  or eliminated; connected, not sitting out) waits for that player's
  ``continue`` instead. Once that player is out, the bots play on at
  ``pause``. A ``continue`` turn is open only while its player can press it:
  it ends when they disconnect, leave or sit out (:func:`stop_waiting_for`),
  and a turn that is asked for again (:func:`rearm`: a restored table, a
  resume, the end of a stall) ends when they are not there; once back (or
  sat in) they are waited for again from the next step, a step still waiting
  for its pause included (:func:`wait_again`). The one exception: while the
  service stops, its disconnects are its own and the wait stays open.
* NL-5: a bot's turn waits its think time (:func:`.bots.think_time`).
* A table where no person holding a seat is in play (SPEC "Clocks and
  pacing") waits at least its unattended floor before each move it makes by
  itself: bots' thinks, sitting-out seats' turns, dealer steps
  (:meth:`TableCore.paced`).

The turn's id is the ``seq`` of the event that began it; inputs naming an
older turn (or a clock since paused) are stale and change nothing.
"""

from __future__ import annotations

import logging
from typing import Any, cast

from cardhall.engine.base import Event, IllegalAction
from cardhall.protocol.errors import ProtocolError
from cardhall.protocol.frames import LegalAction, Turn
from cardhall.server.table.bots import Thought, choose, think_time, thought
from cardhall.server.table.clock import PausedClock, TurnClock
from cardhall.server.table.core import AUTO, BOT, CONTINUE, HUMAN, RUNNING, TableCore
from cardhall.server.table.inputs import AutoDue, BotDue, ClockDue, StepDue
from cardhall.server.table.match import end_match, record_hand
from cardhall.server.table.records import EventRecord

log = logging.getLogger("cardhall.table")

Data = dict[str, Any]

#: dealer steps taken in one go before a table is declared broken
MAX_SETTLE = 10_000


def legal_now(t: TableCore) -> list[LegalAction]:
    """The engine's legal actions for the seat to act, as data."""
    assert t.engine is not None
    return cast(list[LegalAction], [a.to_data() for a in t.engine.legal_actions()])


# -- settling after a change ---------------------------------------------------------
def settle(t: TableCore) -> None:
    """After the engine changed: record a finished hand, end the match, begin
    the next turn, or take or schedule the next dealer step (G-4). Raises
    RuntimeError when the engine takes :data:`MAX_SETTLE` steps without a decision."""
    for _ in range(MAX_SETTLE):
        engine = t.engine
        assert engine is not None
        pending = engine.pending
        if pending == "hand" or engine.finished:
            record_hand(t)
        if engine.finished:
            end_match(t)
            return
        seat = engine.to_act
        if seat is not None:
            begin_turn(t, seat)
            return
        if pending is None or t.paused:
            return
        solo = solo_human(t)
        if solo is not None:
            begin_continue(t, solo)
            return
        pause = t.paced(t.seconds("pause"))
        if pause > 0:
            t.step_id = t.seq
            t.arm(StepDue(t.seq, t.after(pause)))
            return
        t.emit_all(engine.advance())
    raise RuntimeError(f"no decision after {MAX_SETTLE} dealer steps")


def advance(t: TableCore) -> None:
    """Take the pending dealer step now, then settle."""
    assert t.engine is not None
    t.step_id = None
    t.emit_all(t.engine.advance())
    settle(t)


def paced_step(t: TableCore, due: StepDue) -> None:
    """A dealer step's pause is over (G-4); stale when another step was scheduled since."""
    if t.status != RUNNING or t.paused or due.step_id != t.step_id:
        return
    advance(t)


# -- beginning and ending turns --------------------------------------------------------
def turn_event(t: TableCore) -> EventRecord:
    """The record that puts a seat to act: the last event not yet delivered,
    or an ``awaiting`` event when there is none (or it already began a turn)."""
    records = t.pending.records
    if not records or records[-1].turn is not None or records[-1].seq == t.turn_id:
        t.emit(Event({"type": "awaiting"}))
    return t.pending.records[-1]


def begin_turn(t: TableCore, seat: int) -> None:
    """``seat`` is to act: a bot thinks (NL-5), a sitting-out seat is played at
    once (G-3), a person gets the action clock then their bank (G-3)."""
    occ = t.seats[seat]
    rec = turn_event(t)
    t.turn_id = rec.seq
    t.turn_seat = seat
    turn: Turn = {"seat": seat, "id": rec.seq}
    if occ.bot is not None:
        t.turn_kind = BOT
        t.arm(BotDue(rec.seq, t.after(think_time(occ, t.bot_think()))))
    elif occ.sitting_out:
        t.turn_kind = AUTO
        schedule_auto(t)
    else:
        t.turn_kind = HUMAN
        clock = t.seconds("action_clock")
        t.clock = TurnClock.begin(t.now.mono, clock, occ.bank)
        turn["clock"] = clock
        turn["bank"] = round(occ.bank, 3)
        t.arm(ClockDue(rec.seq, t.clock.deadline))
    rec.turn = turn
    rec.legal_seat = seat
    rec.legal = t.turn_legal = legal_now(t)


def begin_continue(t: TableCore, seat: int) -> None:
    """The table waits for the solo player's ``continue`` (G-4)."""
    rec = turn_event(t)
    t.turn_id = rec.seq
    t.turn_seat = seat
    t.turn_kind = CONTINUE
    rec.turn = {"seat": seat, "id": rec.seq, "continue": True}


def end_turn(t: TableCore, voluntary: bool) -> None:
    """The open turn ends: the bank left is kept (G-3), a voluntary act resets
    the timeout count, the timer is cancelled."""
    t.cancel_timer()
    if t.turn_kind == HUMAN and isinstance(t.clock, TurnClock) and t.turn_seat is not None:
        occ = t.seats[t.turn_seat]
        occ.bank = t.clock.bank_after(t.now.mono)
        if voluntary:
            occ.timeouts = 0
    t.clock = None
    t.turn_id = t.turn_seat = t.turn_kind = None


def end_continue(t: TableCore) -> None:
    """The wait for ``continue`` is over (pressed, or the player is gone)."""
    t.turn_id = t.turn_seat = t.turn_kind = None


def schedule_auto(t: TableCore) -> None:
    """Play the open turn with the timeout action at once, as its own input
    (G-3); after the unattended floor when no person is in play (SPEC "Clocks and pacing", :meth:`TableCore.paced`)."""
    assert t.turn_id is not None
    t.arm(AutoDue(t.turn_id, t.after(t.paced(0.0))))


# -- actions ---------------------------------------------------------------------------
def apply_action(t: TableCore, seat: int, action: Data, arrived: float | None, voluntary: bool) -> None:
    """Apply ``seat``'s ``action``; the turn ends only if the engine accepts it
    (an illegal action leaves the turn and its clock running: ProtocolError
    ``illegal_action`` with the engine's reason and rule). ``arrived``:
    monotonic seconds the action arrived (latency metrics), or None."""
    assert t.engine is not None
    try:
        events = t.engine.apply(seat, action)
    except IllegalAction as exc:
        extra: Data = {"reason": exc.code}
        if exc.rule:
            extra["rule"] = exc.rule
        raise ProtocolError("illegal_action", str(exc), **extra) from None
    end_turn(t, voluntary)
    t.pending.actions += 1
    if arrived is not None:
        t.pending.arrivals.append(arrived)
    t.emit_all(events)
    settle(t)


def clock_expired(t: TableCore, due: ClockDue) -> None:
    """G-3: the clock and bank ran out: the timeout action; a second timeout in
    a row sits the player out."""
    if t.status != RUNNING or t.paused or due.turn_id != t.turn_id or t.turn_kind != HUMAN:
        return
    if not isinstance(t.clock, TurnClock) or t.clock.deadline != due.at:
        return  # the clock was paused and runs to another deadline now
    seat = t.turn_seat
    assert t.engine is not None and seat is not None
    occ = t.seats[seat]
    end_turn(t, voluntary=False)
    occ.bank = 0.0
    occ.timeouts += 1
    action = t.engine.timeout_action(seat)
    t.emit(Event({"type": "timeout", "seat": seat, "action": action}))
    if occ.timeouts >= 2 and not occ.sitting_out:
        occ.sitting_out = True
        t.emit(Event({"type": "sat_out", "seat": seat, "reason": "timeouts"}))
    apply_action(t, seat, action, None, voluntary=False)


def bot_turn(t: TableCore, due: BotDue) -> None:
    """A bot's think time is over: its move (a refused move is replaced by the
    timeout action, and logged)."""
    if t.status != RUNNING or t.paused or due.turn_id != t.turn_id or t.turn_kind != BOT:
        return
    engine = t.engine
    seat = t.turn_seat
    assert engine is not None and seat is not None
    legal = t.turn_legal or legal_now(t)  # the state has not changed since the turn began
    occ = t.seats[seat]
    move = due.move
    if move is not None and occ.brain is not None and move[1] == occ.bot_position():
        # thought away from the table from this generator state: the same move, and the generator
        # where thinking left it
        action, position = t.recorder.bot_move(lambda: move[0], lambda: move[2])
        position = move[2] if position is None else position
    else:
        action, position = t.recorder.bot_move(lambda: choose(occ, engine, seat, legal), occ.bot_position)
    if position is not None:  # the logged or supplied move: the bot's generator where it was after it
        occ.seek_bot(t.game, position)
    try:
        apply_action(t, seat, action, due.at, voluntary=True)
    except ProtocolError as exc:
        log.warning("table %s: bot at seat %s chose %r: %s", t.id, seat, action, exc.message)
        apply_action(t, seat, engine.timeout_action(seat), due.at, voluntary=True)


def bot_thought(t: TableCore, due: BotDue) -> Thought | None:
    """What the bot whose turn ``due`` ends needs to think its move away from
    the table (:func:`.bots.thought`), or None: a stale ``due``, a table not
    running or paused, or a cheap strategy (the table thinks it in place)."""
    if t.status != RUNNING or t.paused or t.stalled or due.turn_id != t.turn_id or t.turn_kind != BOT:
        return None
    seat = t.turn_seat
    assert t.engine is not None and seat is not None
    return thought(t.seats[seat], t.engine, seat, t.turn_legal or legal_now(t))


def auto_turn(t: TableCore, due: AutoDue) -> None:
    """A sitting-out player's turn, played at once with the timeout action (G-3)."""
    if t.status != RUNNING or t.paused or due.turn_id != t.turn_id:
        return
    seat = t.turn_seat
    assert t.engine is not None and seat is not None
    end_turn(t, voluntary=False)
    apply_action(t, seat, t.engine.timeout_action(seat), due.at, voluntary=False)


# -- G-4: who is waited for ---------------------------------------------------------------
def solo_human(t: TableCore) -> int | None:
    """The seat of the table's only human, if exactly one human plays and is
    there to press ``continue`` (G-4): still in the match (not busted, knocked
    out or eliminated), connected and not sitting out. A solo player who is
    out of the match watches the bots play on at the table's ``pause``; one
    who left or lost the connection is not waited for either: the table goes
    on at its own pace and their turns run on the clock (G-3, G-5)."""
    humans = [s for s, o in t.seats.items() if o.human]
    if len(humans) != 1:
        return None
    seat = humans[0]
    occ = t.seats[seat]
    if occ.sitting_out or t.presence(seat) == 0:
        return None
    return seat if t.engine is None or t.engine.in_match(seat) else None


def stop_waiting_for(t: TableCore, seat: int) -> None:
    """``seat`` can no longer press ``continue`` (left, sat out, disconnected):
    a table waiting for it goes on at its own pace (G-4, G-5). A stalled table
    ends the wait now and takes the step once it writes again (its
    :class:`~cardhall.server.table.inputs.Rearm` settles it: no timer, clock
    or dealer step while stalled). Not while the service stops: those
    disconnects are its own (the wait is kept in its last checkpoint; the
    table that is restored from it waits only if the player is back,
    :func:`rearm`)."""
    if t.service_stopping:
        return
    if t.status == RUNNING and t.turn_kind == CONTINUE and t.turn_seat == seat:
        end_continue(t)
        t.changed()
        if not t.stalled:
            settle(t)


def wait_again(t: TableCore, seat: int) -> None:
    """``seat`` can press ``continue`` again (its first connection is back, or
    it sat in): a dealer step still waiting for its pause waits for the solo
    player instead (G-4: "connected"), with an ``awaiting`` event carrying the
    ``continue`` turn; otherwise the next step will (:func:`settle`)."""
    if t.status != RUNNING or t.paused or t.stalled or t.service_stopping:
        return
    if t.step_id is None or t.turn_id is not None or solo_human(t) != seat:
        return
    t.step_id = None
    t.cancel_timer()
    t.emit(Event({"type": "awaiting"}))
    begin_continue(t, seat)


def press_continue(t: TableCore, seat: int) -> None:
    """The solo player's ``continue`` (G-4): the dealer step is taken now.
    ProtocolError ``bad_state`` when the table does not wait for ``seat``."""
    if t.turn_kind != CONTINUE or t.turn_seat != seat:
        raise ProtocolError("bad_state", "the table is not waiting for continue")
    end_continue(t)
    advance(t)


def rearm(t: TableCore) -> None:
    """Ask again for what the open turn or dealer step waits for (after a
    resume, a restore or a stall): a person's clock resumes with the time it
    had left (G-8), a bot thinks again, a sitting-out seat is played, and a
    ``continue`` turn whose player is not there to press it (a restored
    table's subscribers are gone: presence is 0 until they join again) ends,
    the table going on at its pace (G-4)."""
    if t.status != RUNNING or t.engine is None:
        return
    if t.turn_id is None or t.turn_kind is None:  # no turn open (an id without a kind awaits nothing)
        end_continue(t)
        settle(t)
        return
    seat = t.turn_seat
    assert seat is not None
    occ = t.seats[seat]
    if t.turn_kind == HUMAN:
        if occ.sitting_out:
            schedule_auto(t)
            return
        if isinstance(t.clock, TurnClock):
            paused = t.clock.pause(t.now.mono)
        elif isinstance(t.clock, PausedClock):
            paused = t.clock
        else:
            paused = PausedClock(t.seconds("action_clock"), occ.bank)
        clock = t.clock = paused.resume(t.now.mono)
        t.arm(ClockDue(t.turn_id, clock.deadline))
    elif t.turn_kind == BOT:
        t.arm(BotDue(t.turn_id, t.after(think_time(occ, t.bot_think()))))
    elif t.turn_kind == AUTO:
        schedule_auto(t)
    elif t.turn_kind == CONTINUE and unwaited(t):
        settle(t)


def unwaited(t: TableCore) -> bool:
    """End an open ``continue`` turn whose player is not there to press it
    (G-4: disconnected, as a restored table's player is until they join
    again; sitting out; out of the match); True when it ended. Not while the
    service stops (:func:`stop_waiting_for`). The caller settles the table."""
    if t.turn_kind != CONTINUE or t.status != RUNNING or t.service_stopping or solo_human(t) == t.turn_seat:
        return False
    end_continue(t)
    t.changed()
    return True
