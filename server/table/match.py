"""A match's beginning and end at a table (G-2, G-7, NL-5).

:func:`deal` builds the match's generator from the server seed and the
client seeds in seat order (G-2), places the button or dealer (G-7: a
rematch's is the seat after the previous match's first), seats the bots and
deals; :func:`end_match` reveals the server seed, draws and publishes the
next commitment (G-2), frees the seats of players who left during the match
(G-7, :func:`.vacancy.free_left_seats`) and offers the rematch (G-7). Neither takes turns:
the caller settles the table afterwards (:func:`.turns.settle`).
"""

from __future__ import annotations

from typing import Any

from cardhall.engine.base import Event
from cardhall.engine.rng import FairRandom, commitment
from cardhall.engine.seats import next_seat
from cardhall.server.store.format import hand_digest
from cardhall.server.table.access import lock
from cardhall.server.table.core import FINISHED, RUNNING, TableCore
from cardhall.server.table.inputs import RematchDue
from cardhall.server.table.vacancy import free_left_seats

Data = dict[str, Any]


def match_options(t: TableCore, seats: list[int]) -> Data:
    """The game options for the next match: the table's, with the button or
    dealer moved on from the previous match's first one (G-7, FL-1: the next
    seated seat clockwise after it, also when that seat has been freed since,
    whatever the table's option says; the first match's is the option's, or
    drawn when it is not set)."""
    options = dict(t.gopts)
    for key in ("button", "dealer"):
        if key in t.cls.default_options and t.match > 1 and t.first_dealer is not None:
            options[key] = next_seat(seats, after=t.first_dealer)  # a rematch: never the option's seat again
    for key in ("button", "dealer"):
        if key in options and options[key] is None:
            del options[key]
    return options


def deal(t: TableCore) -> None:
    """Begin match ``t.match`` with the seated players (G-9 has been checked):
    ``match_started`` carries the commitment, the seats, their names
    (:func:`seat_names`), the client seeds and the options the match is
    played with (``Engine.match_options`` with the first button or dealer
    filled in: public data, nothing about the deck or seed), then the
    engine's first events."""
    seats = sorted(t.seats)
    seeds = [t.seats[s].seed.encode() for s in seats if t.seats[s].seed]
    rng = FairRandom(t.server_seed, seeds)
    engine = t.engine = t.cls.new(seats, match_options(t, seats), rng)
    for occ in t.seats.values():
        occ.bank = t.seconds("time_bank")
        occ.timeouts = 0
        occ.sitting_out = False
        occ.left = False
        if occ.bot is not None:
            occ.start_bot(t.game, t.server_seed)
    t.status = RUNNING
    t.paused = False
    t.changed()
    events = engine.start()  # draws the first button or dealer (G-2): announced below
    view = engine.view(None)
    first = view.get("button", view.get("dealer"))
    t.first_dealer = first if isinstance(first, int) else None
    played = engine.match_options()
    for key in ("button", "dealer"):
        if key in played:
            played[key] = t.first_dealer
    t.emit(Event({
        "type": "match_started", "match": t.match, "commitment": commitment(t.server_seed),
        "seats": [t.seats[s].public() for s in seats], "names": seat_names(t),
        "client_seeds": {str(s): t.seats[s].seed for s in seats if t.seats[s].seed},
        "options": played,
    }))
    t.emit_all(events)


def seat_names(t: TableCore) -> dict[str, str]:
    """Seat (as a string key) -> the name its occupant shows now, bots
    included (``Occupant.name``): who played the match, kept in
    ``match_started`` and ``match_ended`` so a finished match names its
    players after their seats change hands (SPEC "Events and seq"). Computed
    from the seats when the event is built; nothing is stored for it."""
    return {str(s): o.name for s, o in sorted(t.seats.items())}


def record_hand(t: TableCore) -> None:
    """Keep the engine's last finished hand for the history, once (by its digest)."""
    assert t.engine is not None
    record = t.engine.hand_record()
    if record is None:
        return
    digest = hand_digest(record)
    if digest == t.last_hand_digest:
        return
    t.last_hand_digest = digest
    kept: dict[str, object] = {"game": t.game, "match": t.match, "hand": record, "seq": t.seq}
    held = lock(t)
    if held is not None:  # a private table's hands stay private after it closes (SPEC "HTTP")
        kept["lock"] = held
    t.pending.hands.append(kept)


def end_match(t: TableCore) -> None:
    """The match is over: its result, the names of the seats that played it
    (:func:`seat_names`, before any leaver's seat is freed), the server seed
    revealed with the client seeds (G-2), the next match's commitment (a new seed from ``t.entropy``),
    then a ``left`` event for each seat freed because its player left during
    the match (G-7), and the rematch offered (G-7)."""
    assert t.engine is not None
    t.cancel_timer()
    t.turn_id = t.turn_seat = t.turn_kind = None
    t.turn_legal = None
    t.clock = None
    result = t.engine.result()
    revealed = t.server_seed
    t.server_seed = t.draw_seed()
    t.status = FINISHED
    t.last_result = result
    t.idle_since = t.now.mono
    t.changed()
    t.emit(Event({
        "type": "match_ended", "match": t.match, "result": result, "names": seat_names(t),
        "server_seed": revealed.hex(), "commitment": commitment(revealed),
        "client_seeds": {str(s): o.seed for s, o in sorted(t.seats.items()) if o.seed},
        "next_commitment": commitment(t.server_seed),
    }))
    free_left_seats(t)
    schedule_rematch(t)


def schedule_rematch(t: TableCore) -> None:
    """A finished bots-only table with ``auto_rematch`` starts the next match
    after its ``pause`` (G-7)."""
    if t.status == FINISHED and t.topts["auto_rematch"] and all(not o.human for o in t.seats.values()):
        t.arm(RematchDue(t.match, t.after(t.paced(t.seconds("pause")))))
