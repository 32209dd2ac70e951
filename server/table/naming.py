"""A player's name at a table: the ``renamed`` event (SPEC "Names", ``rename``).

A name is not an identity: a seat belongs to its player id (G-5), and its
occupant's name is only what the table shows (``info.occupants``, ``seated``,
``chat``). When a player is renamed, its node posts a
:class:`~cardhall.server.table.inputs.Rename` to every table where the player
sits or watches; the table gives the seat it holds the new name and tells
every viewer with a ``renamed`` event, whose fields are exactly ``player``
(the public id), ``seat`` (the player's seat here, or None when it only
watches) and ``name``. A table where the player neither sits nor watches
(any more) takes the input without an event.

A table that missed a rename (its node did not answer, or the table was
moving) learns it when the seated player joins as a player with another
name than the seat's (:func:`name_seat`, from ``join``).
"""

from __future__ import annotations

from cardhall.engine.base import Event
from cardhall.server.table.core import TableCore
from cardhall.server.table.inputs import Rename

#: the event's type
RENAMED = "renamed"


def rename(t: TableCore, inp: Rename) -> None:
    """``inp.player`` is named ``inp.name`` now: its seat takes the name, or,
    when it only watches, the table hears of it; a ``renamed`` event unless
    nothing changes here."""
    seat = t.seat_of(inp.player)
    if seat is not None:
        name_seat(t, seat, inp.name)
    elif t.subscribers.watching(inp.player):
        t.emit(Event({"type": RENAMED, "player": inp.player, "seat": None, "name": inp.name}))


def name_seat(t: TableCore, seat: int, name: str) -> None:
    """Seat ``seat`` (a person's) shows ``name`` from now on: a ``renamed``
    event when that is another name than it had."""
    occ = t.seats[seat]
    if occ.name == name or occ.player is None:
        return
    occ.name = name
    t.changed()
    t.emit(Event({"type": RENAMED, "player": occ.player, "seat": seat, "name": name}))
