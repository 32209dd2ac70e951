"""Freeing a seat (G-5, G-7): the one place a taken seat becomes free.

A seat is freed when its player leaves between matches (G-5), and when a
match ends for the seats whose players left during it and did not come back
(G-7, :func:`free_left_seats`), the seats of kicked players among them
(SPEC "The host's controls"). Freeing emits ``left`` and turns every
subscriber still watching as that seat (another connection of the same
player) into a spectator, so whoever sits there next is never seen through a
view that is no longer theirs.
"""

from __future__ import annotations

from cardhall.engine.base import Event
from cardhall.server.table.admission import forget_bars
from cardhall.server.table.core import TableCore


def free_seat(t: TableCore, seat: int) -> None:
    """Free the taken ``seat`` (KeyError if it is free): its occupant goes, its
    remaining subscribers watch as spectators from now on, and a ``left`` event
    tells the table."""
    del t.seats[seat]
    for sub in list(t.subscribers.by_viewer().get(seat, ())):
        t.subscribers.subscribe(sub, None)
    t.changed()
    t.emit(Event({"type": "left", "seat": seat}))


def free_left_seats(t: TableCore) -> list[int]:
    """G-7 at a match's end: free each seat whose player left during the match
    (``Occupant.left``, set by ``leave`` while it ran, G-5) and still sits out
    now, in seat order; the others' ``left`` marks are cleared (they came back
    with ``join`` or ``sit_in``); the kicks that barred only this match are
    forgotten (:func:`.admission.forget_bars`). Returns the seats freed."""
    forget_bars(t)
    freed = [s for s, o in sorted(t.seats.items()) if o.left and o.sitting_out]
    for occ in t.seats.values():
        occ.left = False
    for seat in freed:
        free_seat(t, seat)
    return freed
