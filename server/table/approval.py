"""The owner's answers to requests for a seat: ``approve`` and ``deny`` (SPEC "Private tables").

``{"type": "approve", "player": P}`` seats player ``P``, whose request waits
(:mod:`.access`): in the seat its join asked for when that is still free,
else the lowest free one (G-1), with its join's name and client seed; the
events are ``seat_approved`` (``player``, ``seat``) then the usual
``seated``, and every connection of ``P`` watching the table as a
spectator watches as that seat from then on (a ``join`` as player answers
the seat's snapshot). Taking the last seat of a waiting table starts the
match (G-9), as a join does. ``{"type": "deny", "player": P}`` ends the
request with ``seat_denied`` (``player``); ``P``'s further joins as player
get ``seat_denied`` until the table's next ``rematch``. Both are the
owner's only (``not_owner``) and answered ``ok``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardhall.engine.base import Event
from cardhall.protocol.errors import ProtocolError
from cardhall.server.table.access import SEAT_APPROVED, SEAT_DENIED, arm
from cardhall.server.table.core import WAITING, TableCore
from cardhall.server.table.lifecycle import start_match
from cardhall.server.table.privacy import SeatRequest
from cardhall.server.table.seating import sit
from cardhall.server.table.turns import wait_again

#: the owner's answers to a request for a seat
APPROVE, DENY = "approve", "deny"
CONTROLS = frozenset({APPROVE, DENY})


def answer(t: TableCore, kind: str, player: str, action: Mapping[str, Any]) -> None:
    """The owner ``player``'s ``approve`` or ``deny`` (``kind``) of the request
    of ``action["player"]``. ProtocolError ``not_owner``, ``bad_request`` (no
    such request, or ``player`` missing), ``table_full``."""
    if player != t.owner:
        raise ProtocolError("not_owner", f"only the owner may {kind} a seat")
    target = action.get("player")
    if not isinstance(target, str):
        raise ProtocolError("bad_request", f"{kind} needs player: the public id of a player asking for a seat")
    request = t.privacy.requests.get(target)
    if request is None:
        raise ProtocolError("bad_request", f"no request for a seat from {target[:40]!r} is waiting")
    if kind == APPROVE:
        approve(t, target, request)
    else:
        del t.privacy.requests[target]
        t.privacy.denied[target] = t.match
        t.changed()
        t.emit(Event({"type": SEAT_DENIED, "player": target}))
    arm(t)


def approve(t: TableCore, target: str, request: SeatRequest) -> None:
    """Seat ``target`` for its ``request`` (see the module docstring)."""
    free = [s for s in range(1, t.n_seats + 1) if s not in t.seats]
    if not free:
        raise ProtocolError("table_full", "no free seat: the request stays until it lapses or is denied")
    seat = request.seat if request.seat in free else free[0]
    del t.privacy.requests[target]
    t.changed()
    t.emit(Event({"type": SEAT_APPROVED, "player": target, "seat": seat}))
    sit(t, target, request.name, seat, request.seed)
    subs = t.subscribers
    for key, viewer in subs.items():
        if viewer is None and subs.player(key) == target:
            subs.subscribe(key, seat, target)
    if t.presence(seat) > 0:
        t.emit(Event({"type": "presence", "seat": seat, "connected": True}))
        wait_again(t, seat)
    if t.status == WAITING and len(t.seats) == t.n_seats:
        start_match(t)
