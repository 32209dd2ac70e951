"""What a table shows: its lobby entry, its public info, the open turn, snapshots.

Every frame is built with :mod:`cardhall.protocol.frames`; the state is
redacted only by ``Engine.view`` and legal actions pass the one gate
(:func:`~cardhall.server.table.records.legal_for`). A private table's secrets
show here only: the invite in its owner's ``info`` (:func:`info`), its lock
in the cluster's lobby record (:func:`lobby_record`); never its password,
which no table holds.
"""

from __future__ import annotations

from typing import Any

from cardhall.engine.rng import commitment
from cardhall.protocol import frames
from cardhall.protocol.frames import Info, Snapshot, Turn
from cardhall.server.table.access import lock, pending
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
    status ("paused" for a paused running match, G-8), owner, options (never
    the password), whether it has a password, and the seats bots hold (1.5)."""
    status = "paused" if t.paused and t.status == RUNNING else t.status
    return {
        "id": t.id, "game": t.game, "seats": t.n_seats, "taken": len(t.seats),
        "spectators": t.subscribers.spectators, "status": status, "owner": t.owner,
        "options": {**{k: v for k, v in t.topts.items() if k != "password"}, **t.gopts},  # never a password
        "password": t.privacy.password is not None,
        "bots": sum(1 for o in t.seats.values() if not o.human),
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


def info(t: TableCore, invite: bool = False) -> Info:
    """Public metadata: the lobby entry but its bot count, the seats, the match's commitment (G-2),
    the match number, whether paused, the last result, whether spectators may chat;
    ``invite``: for the owner, with the table's invite and the waiting requests
    for a seat (:func:`requests`; SPEC "Private tables")."""
    entry = lobby_entry(t)
    out: Info = {
        "id": t.id, "game": t.game, "seats": t.n_seats, "taken": entry["taken"], "spectators": entry["spectators"],
        "status": entry["status"], "owner": t.owner, "options": entry["options"],
        "occupants": occupants(t), "commitment": commitment(t.server_seed), "match": t.match,
        "paused": t.paused, "result": t.last_result, "spectator_chat": t.spectator_chat,
        "password": entry["password"],
    }
    if invite:
        if t.privacy.invite is not None:
            out["invite"] = t.privacy.invite
        out["requests"] = requests(t)
    return out


def requests(t: TableCore) -> list[frames.SeatRequestEntry]:
    """The requests for a seat waiting for the owner's answer, oldest first:
    each ``player``, ``name`` and ``seat`` (the seat its join asked for, or
    None). For the owner's ``info`` only (SPEC "Private tables")."""
    return [{"player": player, "name": r.name, "seat": r.seat} for player, r in t.privacy.requests.items()]


def lobby_record(t: TableCore) -> Data:
    """What a cluster's lobby keeps of the table (``server/STORAGE.md``): its
    public :func:`info`, and ``lock`` when it is private
    (:func:`.access.lock`: the digest of its invite, its password's scrypt
    record), so any node checks a join or an HTTP request for it before it
    reaches the table. Never served as it is: the HTTP API shows the public
    fields only (:mod:`cardhall.server.http_api`)."""
    out: Data = dict(info(t))
    held = lock(t)
    if held is not None:
        out["lock"] = held
    return out


def snapshot(t: TableCore, viewer: int | None, re: Any, mono: float, reply: bool = True,
             player: str | None = None) -> Snapshot:
    """The ``snapshot`` frame for ``viewer`` (a seat or None) at monotonic time
    ``mono``: the state through ``Engine.view``, the open turn, and the legal
    actions for the seat to act only; ``reply``: it answers a join (``re``
    present, null without an id), else it is sent on its own (no ``re``).
    ``player``: whose join it answers (or, sent on its own, whose connection
    it goes to): the owner's ``info`` carries the invite and the requests
    for a seat, and a player whose request for a seat waits gets ``pending``
    (SPEC "Private tables")."""
    turn = turn_public(t, mono)
    state = t.engine.view(viewer) if t.engine is not None else None
    legal = legal_for(viewer, t.turn_seat if t.turn_kind == HUMAN else None, t.turn_legal)
    shown = info(t, invite=player is not None and player == t.owner)
    return frames.snapshot(t.id, t.seq, viewer, shown, state, re, turn, legal, reply=reply,
                           pending=pending(t, player))
