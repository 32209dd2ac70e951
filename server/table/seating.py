"""Seats and subscribers: ``join``, ``leave``, disconnects and presence (G-5, G-9).

G-5: one player holds at most one seat at a table; a disconnected player
keeps the seat (a ``presence`` event tells the table, G-4 stops waiting for
their ``continue``, and waits again once they are back); a player who leaves a running match keeps the seat
sitting out until the match ends, when it is freed unless they came back
(G-7, :mod:`.vacancy`), and leaving before it starts frees the seat. Seats are taken only between matches (G-9); the join that takes the
last seat starts the match, and its answer is the table before the match
(SPEC "Resuming": the snapshot first, the match's events after it).
"""

from __future__ import annotations

from collections.abc import Hashable

from cardhall.engine.base import Event
from cardhall.protocol import frames
from cardhall.protocol.errors import ProtocolError
from cardhall.server.table.access import asks_for_seat, check_access, end_request, remember
from cardhall.server.table.admission import barred, check_join, note_owner
from cardhall.server.table.core import (
    CONTINUE,
    FINISHED,
    HUMAN,
    RUNNING,
    WAITING,
    TableCore,
)
from cardhall.server.table.inputs import REJOIN, Disconnect, Join, Leave
from cardhall.server.table.lifecycle import start_match
from cardhall.server.table.naming import name_seat
from cardhall.server.table.occupant import Occupant, parse_seed
from cardhall.server.table.outputs import JoinAnswer
from cardhall.server.table.subscribers import NOT_JOINED
from cardhall.server.table.turns import end_continue, schedule_auto, stop_waiting_for, wait_again
from cardhall.server.table.vacancy import free_seat
from cardhall.server.table.views import snapshot


def _int_field(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def join(t: TableCore, inp: Join) -> None:
    """``join`` as a spectator, or as a player (sitting down if the player holds
    no seat here; a seat it holds takes the join's name, :func:`.naming.name_seat`). Raises ProtocolError ``bad_request`` (a field),
    ``banned``, ``kicked`` (:mod:`.admission`), ``already_seated``, ``match_running``, ``seat_taken``, ``table_full``;
    at a private table (:mod:`.access`) ``unknown_table``, ``bad_password``, ``approval_required``, ``seat_denied``."""
    role = "spectator" if inp.role is None else inp.role
    if role not in ("player", "spectator"):
        raise ProtocolError("bad_request", "role must be 'player' or 'spectator'")
    since = inp.since
    if since is not None and (not _int_field(since) or since < 0):
        raise ProtocolError("bad_request", "since must be a seq (integer >= 0)")
    wanted = inp.seat  # checked for spectators too: a bad field is refused, never ignored
    if wanted is not None and (not _int_field(wanted) or not 1 <= wanted <= t.n_seats):
        raise ProtocolError("bad_request", f"seat must be 1..{t.n_seats}")
    try:
        seed = parse_seed(inp.seed)
    except ValueError as exc:
        raise ProtocolError("bad_request", str(exc)) from None
    check_join(t, inp.player, role, inp.re == REJOIN)
    if inp.re != REJOIN:  # a private table's invite and password (SPEC "Private tables")
        check_access(t, inp, role)
    viewer: int | None = None
    sat = False
    if inp.re == REJOIN:
        viewer = resumed_viewer(t, inp)
    elif role == "player" and not asks_for_seat(t, inp, wanted, seed):  # asking: watches until answered
        seat = t.seat_of(inp.player)
        if seat is None:
            seat = sit(t, inp.player, inp.name, wanted, seed)
            sat = True
        elif wanted is not None and wanted != seat:
            raise ProtocolError("already_seated", f"you hold seat {seat} at this table (G-5)")
        elif seed and t.status in (WAITING, FINISHED):
            t.seats[seat].seed = seed
            t.changed()
        if not sat:  # the name its node holds: this table may have missed a rename
            name_seat(t, seat, inp.name)
        if t.seats[seat].left:  # back at the match they left: the seat stays theirs when it ends (G-7)
            t.seats[seat].left = False
            t.changed()
        viewer = seat
    remember(t, inp)
    previous = t.subscribers.subscribe(inp.sub, viewer, inp.player)
    note_owner(t)
    if previous != viewer:
        if previous is not NOT_JOINED and previous is not None:
            # this connection watched as a seat and now watches as a spectator: that seat may be left with none
            seat_unwatched(t, previous)
        if viewer is not None and t.presence(viewer) == 1:
            t.emit(Event({"type": "presence", "seat": viewer, "connected": True}))
            wait_again(t, viewer)
    answer = JoinAnswer(inp.sub, viewer, since, inp.re, player=inp.player)
    t.pending.joins.append(answer)
    t.idle_since = t.now.mono
    if sat and t.status == WAITING and len(t.seats) == t.n_seats:
        # G-9: this join took the last seat; its answer is the table before the match
        if since is None:
            answer.before = snapshot(t, viewer, inp.re, t.now.mono, player=inp.player)
        start_match(t)


def resumed_viewer(t: TableCore, inp: Join) -> int | None:
    """The viewer of the server's own join (:data:`REJOIN`: a connection
    relayed by another node resumes after a fault or an owner change): the
    one the table holds for it when it is still subscribed, else its
    player's seat if the player holds one, else a spectator. It never takes a
    seat: the table alone decides every view, and a seat freed meanwhile
    (G-5, G-7) is not given back by a resume, nor one its player was kicked from."""
    current = t.subscribers.viewer(inp.sub)
    if current is not NOT_JOINED:
        return current
    return None if barred(t, inp.player) else t.seat_of(inp.player)


def sit(t: TableCore, player: str, name: str, wanted: int | None, seed: str) -> int:
    """Seat ``player`` in ``wanted`` or the lowest free seat (G-1) with client
    seed ``seed`` (G-2); a ``seated`` event. ProtocolError ``match_running``,
    ``seat_taken``, ``table_full``."""
    if t.status not in (WAITING, FINISHED):
        raise ProtocolError("match_running", "seats are taken between matches (G-9)")
    if wanted is not None:
        if wanted in t.seats:
            raise ProtocolError("seat_taken", f"seat {wanted} is taken")
        seat = wanted
    else:
        free = [s for s in range(1, t.n_seats + 1) if s not in t.seats]
        if not free:
            raise ProtocolError("table_full", "no free seat")
        seat = free[0]
    occ = Occupant(seat, player, name, seed=seed)
    t.seats[seat] = occ
    occ.since = t.emit(Event({"type": "seated", **occ.public()})).seq
    return seat


def leave(t: TableCore, inp: Leave) -> None:
    """``leave``: stop watching; a seated player leaves the seat (G-5). Answered
    with ``ok``; ProtocolError ``not_joined``."""
    if inp.sub not in t.subscribers:
        raise ProtocolError("not_joined", f"not joined to table {t.id}")
    unsubscribe(t, inp.sub)
    end_request(t, inp.player, "left")  # a request for a seat is withdrawn (SPEC "Private tables")
    seat = t.seat_of(inp.player)
    if seat is not None:
        release(t, seat)
    t.reply(inp.sub, frames.ok(inp.re))


def release(t: TableCore, seat: int) -> None:
    """A player leaves: sit out for the rest of a running match, the seat
    marked to be freed when it ends (G-5, G-7); else free the seat now."""
    if t.status == RUNNING:
        occ = t.seats[seat]
        if not occ.left:
            occ.left = True
            t.changed()
        if not occ.sitting_out:
            occ.sitting_out = True
            t.emit(Event({"type": "sat_out", "seat": seat, "reason": "left"}))
            t.changed()
            if t.turn_seat == seat and t.turn_kind == HUMAN and not t.paused:
                schedule_auto(t)
            stop_waiting_for(t, seat)
    else:
        free_seat(t, seat)
        if t.turn_kind == CONTINUE and t.turn_seat == seat:
            end_continue(t)


def disconnect(t: TableCore, inp: Disconnect) -> None:
    """The subscriber's connection is gone; the seat is kept (G-5)."""
    if inp.sub in t.subscribers:
        unsubscribe(t, inp.sub)


def unsubscribe(t: TableCore, sub: Hashable) -> None:
    """Forget ``sub`` (and its unanswered join); the last connection of a
    seated player makes a ``presence`` event and ends a wait for their
    ``continue`` (G-4, G-5)."""
    viewer = t.subscribers.unsubscribe(sub)
    note_owner(t)
    joins = t.pending.joins
    if any(j.sub == sub for j in joins):
        t.pending.joins = [j for j in joins if j.sub != sub]
    if viewer is not NOT_JOINED and viewer is not None:
        seat_unwatched(t, viewer)
    if t.subscribers.count == 0:
        t.idle_since = t.now.mono


def seat_unwatched(t: TableCore, seat: int) -> None:
    """A subscriber stopped watching as ``seat`` (gone, or watching as a
    spectator now): when it was the seated player's last connection, a
    ``presence`` event, and a wait for their ``continue`` ends (G-4, G-5)."""
    if seat in t.seats and t.presence(seat) == 0:
        t.emit(Event({"type": "presence", "seat": seat, "connected": False}))
        stop_waiting_for(t, seat)
