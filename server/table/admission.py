"""Who the host keeps out, and whether the owner is here (SPEC "The host's controls").

The owner's ``ban`` and ``kick`` (:mod:`.host_controls`) leave marks that
``join`` consults (:mod:`.seating`):

* a banned player (``TableCore.banned``, by player id: a rename or another
  connection does not help) is refused every ``join``, in any role,
  ``banned``, for the table's life;
* a kicked player (``TableCore.kicked``: player id -> the last match it may
  not sit in) may watch, but takes no seat until that match has ended:
  ``join`` as a player is refused with ``kicked`` (the seat it held is sat
  out with the timeout action until the match ends, then freed: G-5, G-7);
  and no resume of a connection of its gives it that seat's view again.

The owner's presence: ``TableCore.owner_away_since`` is the Unix time
(the step's ``Now.wall``: it survives a restart and a move to another node)
since which no connection of the owner's player watches the table, None
while one does; :func:`note_owner` keeps it after every change of who
watches.

>>> from cardhall.server.table.core import TableCore
>>> from cardhall.server.table.inputs import Now
>>> t = TableCore("t_1", "loco_poker", 2, {}, {}, "p_own", server_seed=b"", entropy=bytes, now=Now(100.0, 5.0))
>>> t.kicked["p_k"] = upcoming_match(t)
>>> barred(t, "p_k"), barred(t, "p_x"), t.owner_away_since
(True, False, 100.0)
>>> t.status = "finished"  # match 1 is over: the next is 2, which the kick does not bar
>>> barred(t, "p_k")
False
"""

from __future__ import annotations

from cardhall.protocol.errors import ProtocolError
from cardhall.server.table.core import FINISHED, TableCore


def upcoming_match(t: TableCore) -> int:
    """The match a seat taken now plays in: the running or waiting match, or,
    when the table is finished, the next one (G-7)."""
    return t.match + 1 if t.status == FINISHED else t.match


def barred(t: TableCore, player: str) -> bool:
    """``player`` was kicked and may not sit in the match a seat taken now plays in."""
    return t.kicked.get(player, 0) >= upcoming_match(t)


def own_seat(t: TableCore, player: str) -> int | None:
    """The seat ``player`` holds as its own: held, and not one it was kicked
    from (that one is only sat out until the match ends)."""
    seat = t.seat_of(player)
    return None if seat is None or barred(t, player) else seat


def check_join(t: TableCore, player: str, role: str, resume: bool) -> None:
    """Refuse a ``join`` of ``player`` in ``role`` (``resume``: the server's
    own join of a relayed connection, which never takes a seat): ProtocolError
    ``banned`` (any role), ``kicked`` (as a player while barred)."""
    if player in t.banned:
        raise ProtocolError("banned", f"the owner of table {t.id} has banned you from it")
    if role == "player" and not resume and barred(t, player):
        raise ProtocolError("kicked", f"the owner of table {t.id} removed you from your seat: you may watch, "
                                      f"and sit again once match {t.kicked[player]} has ended")


def forget_bars(t: TableCore) -> None:
    """Drop the kicks that bar no match any more (a match ended): the state keeps only live ones."""
    upcoming = upcoming_match(t)
    for player in [p for p, last in t.kicked.items() if last < upcoming]:
        del t.kicked[player]


def note_owner(t: TableCore) -> None:
    """After a change of who watches (or of the owner): the owner's absence
    starts now when no connection of its player watches any more, and ends
    when one does."""
    if t.owner is None:
        t.owner_away_since = None
    elif t.subscribers.watching(t.owner):
        t.owner_away_since = None
    elif t.owner_away_since is None:
        t.owner_away_since = t.now.wall
