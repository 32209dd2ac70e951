"""What a table shows: its lobby entry, its public info, the open turn, snapshots.

Every frame is built with :mod:`cardhall.protocol.frames`; the state is
redacted only by ``Engine.view`` and legal actions pass the one gate
(:func:`~cardhall.server.table.records.legal_for`).
"""

from __future__ import annotations

from typing import Any

from cardhall.engine.rng import commitment
from cardhall.protocol import frames
from cardhall.protocol.frames import Info, Snapshot, Turn
from cardhall.server.table.clock import TurnClock
from cardhall.server.table.core import CONTINUE, HUMAN, RUNNING, TableCore
from cardhall.server.table.records import legal_for

Data = dict[str, Any]


def turn_public(t: TableCore, mono: float) -> Turn | None:
    """The open turn as everyone may see it at monotonic time ``mono``: seat,
    id, and for a person the clock and bank left (seconds, G-3), or
    ``continue`` when the table waits for the solo player (G-4)."""
    if t.turn_id is None or t.turn_seat is None:
        return None
    turn: Turn = {"seat": t.turn_seat, "id": t.turn_id}
    if t.turn_kind == CONTINUE:
        turn["continue"] = True
    elif t.turn_kind == HUMAN and t.clock is not None:
        clock = t.clock.pause(mono) if isinstance(t.clock, TurnClock) else t.clock
        turn["clock"] = round(clock.clock, 3)
        turn["bank"] = round(clock.bank, 3)
    return turn


def lobby_entry(t: TableCore) -> Data:
    """``GET /api/tables`` entry: id, game, seats and seats taken, spectators,
    status ("paused" for a paused running match, G-8), owner, options."""
    status = "paused" if t.paused and t.status == RUNNING else t.status
    return {
        "id": t.id, "game": t.game, "seats": t.n_seats, "taken": len(t.seats),
        "spectators": t.subscribers.spectators, "status": status, "owner": t.owner,
        "options": {**t.topts, **t.gopts},
    }


def occupants(t: TableCore) -> list[frames.Occupant]:
    """Each taken seat, public fields and whether someone holds it now (a bot
    always does; a person while connected, G-5)."""
    out: list[frames.Occupant] = []
    for seat in sorted(t.seats):
        occ = t.seats[seat]
        entry: frames.Occupant = {"seat": seat, "name": occ.name, "sitting_out": occ.sitting_out,
                                  "connected": (not occ.human) or t.presence(seat) > 0}
        if occ.player is not None:
            entry["player"] = occ.player
        if occ.bot is not None:
            entry["bot"] = occ.bot
        out.append(entry)
    return out


def info(t: TableCore) -> Info:
    """Public metadata: the lobby entry, the seats, the match's commitment (G-2),
    the match number, whether paused, the last result, whether spectators may chat."""
    entry = lobby_entry(t)
    return {
        "id": t.id, "game": t.game, "seats": t.n_seats, "taken": entry["taken"], "spectators": entry["spectators"],
        "status": entry["status"], "owner": t.owner, "options": entry["options"],
        "occupants": occupants(t), "commitment": commitment(t.server_seed), "match": t.match,
        "paused": t.paused, "result": t.last_result, "spectator_chat": t.spectator_chat,
    }


def snapshot(t: TableCore, viewer: int | None, re: Any, mono: float, reply: bool = True) -> Snapshot:
    """The ``snapshot`` frame for ``viewer`` (a seat or None) at monotonic time
    ``mono``: the state through ``Engine.view``, the open turn, and the legal
    actions for the seat to act only; ``reply``: it answers a join (``re``
    present, null without an id), else it is sent on its own (no ``re``)."""
    turn = turn_public(t, mono)
    state = t.engine.view(viewer) if t.engine is not None else None
    legal = legal_for(viewer, t.turn_seat if t.turn_kind == HUMAN else None, t.turn_legal)
    return frames.snapshot(t.id, t.seq, viewer, info(t), state, re, turn, legal, reply=reply)
