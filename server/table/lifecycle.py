"""A table's lifecycle: starting a match, the rematch, pause and resume, closing.

* G-9: a match starts when every seat is taken (bots included) or when the
  owner starts it with at least two players seated.
* G-7: when a match ends the table offers a rematch: same seats, the next
  button or dealer (:func:`.match.match_options`), fresh stacks; a bots-only
  table with ``auto_rematch`` takes it by itself after its ``pause``.
* G-8: the owner may pause and resume an unfinished match; a paused table
  keeps its state, its clock stops with the time left, and it accepts no
  actions until resumed; ``resumed`` carries the open turn again.
"""

from __future__ import annotations

from cardhall.engine.base import Event
from cardhall.engine.rng import commitment
from cardhall.server.table.access import arm, match_started
from cardhall.server.table.clock import TurnClock
from cardhall.server.table.core import (
    CLOSED,
    FINISHED,
    HUMAN,
    RUNNING,
    WAITING,
    TableCore,
)
from cardhall.server.table.inputs import (
    Close,
    Rearm,
    RematchDue,
    ServiceStopping,
    Start,
)
from cardhall.server.table.match import deal, schedule_rematch
from cardhall.server.table.turns import rearm, settle, unwaited
from cardhall.server.table.views import turn_public


def start_match(t: TableCore) -> None:
    """Deal match ``t.match`` (G-2) and settle on its first turn or step;
    requests for a seat still waiting lapse first (SPEC "Private tables")."""
    match_started(t)
    deal(t)
    settle(t)


def start_when_full(t: TableCore, _: Start) -> None:
    """G-9: a waiting table with every seat taken starts its match."""
    if t.status == WAITING and len(t.seats) == t.n_seats:
        start_match(t)


def rematch(t: TableCore) -> None:
    """G-7: the next match with the same seats; it starts at once when every
    seat is taken, else (a seat freed at the previous match's end, G-7) it
    waits for a player or the owner's ``start`` (G-9). The ``rematch`` event
    carries the commitment published at the previous match's end (G-2)."""
    t.match += 1
    t.engine = None
    t.status = WAITING
    t.changed()
    t.emit(Event({"type": "rematch", "match": t.match, "commitment": commitment(t.server_seed)}))
    if len(t.seats) == t.n_seats:
        start_match(t)


def rematch_due(t: TableCore, due: RematchDue) -> None:
    """The pause after match ``due.match`` is over (G-7 ``auto_rematch``)."""
    if t.status == FINISHED and due.match == t.match:
        rematch(t)


def pause(t: TableCore) -> None:
    """G-8 pause: the clock stops with the time it has left, no timer runs."""
    t.paused = True
    if isinstance(t.clock, TurnClock):
        t.clock = t.clock.pause(t.now.mono)
    t.cancel_timer()
    t.changed()
    t.emit(Event({"type": "paused"}))


def resume(t: TableCore) -> None:
    """G-8 resume; the ``resumed`` event carries the open turn again (its
    clock restarted with the time that was left, and the legal actions for
    the seat to act), so clients need nothing else."""
    t.paused = False
    t.changed()
    rec = t.emit(Event({"type": "resumed"}))
    rearm(t)
    if t.turn_id is not None and rec.turn is None:
        rec.turn = turn_public(t, t.now.mono)
        if t.turn_kind == HUMAN:
            rec.legal_seat = t.turn_seat
            rec.legal = t.turn_legal


def close(t: TableCore, inp: Close) -> None:
    """Close the table (an operator, G-9's sweeping, or its owner's ``close``,
    :mod:`.host_controls`): the ``closed`` event, with ``inp.reason``, is its last."""
    t.cancel_timer()
    t.status = CLOSED
    t.changed()
    t.emit(Event({"type": "closed", "reason": inp.reason}))


def rearm_input(t: TableCore, _: Rearm) -> None:
    """Ask again for the timer the table waits on: the automatic rematch of a
    finished table, the first request for a seat to lapse between matches,
    or the open turn or dealer step of a running one. A
    paused one (G-8) arms nothing, but a ``continue`` turn its player cannot
    press (a restored table's player is not back yet) ends now, as it would
    for a disconnect while paused (G-4); the resume settles the table."""
    if t.status in (WAITING, FINISHED):
        schedule_rematch(t)
        arm(t)  # the first request for a seat to lapse, if any (SPEC "Private tables")
    elif t.status == RUNNING and not t.paused:
        rearm(t)
    elif t.status == RUNNING:
        unwaited(t)


def service_stopping(t: TableCore, _: ServiceStopping) -> None:
    """The service stops: from now on, disconnects do not end a wait for the
    solo player's ``continue`` (G-4)."""
    t.service_stopping = True
