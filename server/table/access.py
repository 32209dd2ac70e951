"""Private tables in the machine: who may join, and requests for a seat (SPEC "Private tables").

A table's privacy is its table options ``visibility``, ``password_spectators``,
``approve_seats`` and ``approve_within`` (in ``topts``; a table stored before
1.5 has none: public, no approval) and :class:`Privacy`, kept with its state:
the secret of its invite link, its password's scrypt record
(:mod:`cardhall.server.passwords`; never the password), the players it let
in, the requests for a seat waiting for the owner and the players the owner
denied one.

**Who may join.** The node a ``join`` arrives on checks the invite and the
password it carries against the table's (:mod:`cardhall.server.private_access`)
and posts only the outcome (``Join.invited``, ``Join.password_ok``), so no
secret reaches a step or the input log. :func:`check_access` then decides:
the owner, a player holding a seat here and a player the table let in before
for as much (:attr:`Privacy.invited`, :attr:`Privacy.unlocked`) pass;
otherwise an unlisted table needs the invite (else ``unknown_table``, word
for word as for a table that does not exist: its existence is not told), and
a table with a password needs it for a player, and for a spectator too with
``password_spectators`` (else ``bad_password``). To a player it has not
let in, an unlisted table answers every request as if it did not exist
(:func:`hides`).

**Requests for a seat** (``approve_seats``): a ``join`` as player of
someone who holds no seat here and is not the owner must carry ``ask: true``
(else ``approval_required``: a client that does not know the option is told,
never left waiting); it is answered at once with a snapshot as a spectator
marked ``pending`` and the table emits ``seat_requested`` with the player and
name. Requests are taken between matches only (``match_running`` during one,
as any seat); the owner's ``approve`` seats the player
(:mod:`.approval`), ``deny`` refuses it (``seat_denied`` to its further joins
as player until the next ``rematch``); a request not answered within
``approve_within`` seconds (default 120), withdrawn by the player's
``leave``, or overtaken by the match starting lapses with
``seat_request_lapsed`` and its ``reason`` (``timeout``, ``left``,
``match_started``).
"""

from __future__ import annotations

from typing import Any

from cardhall.engine.base import Event
from cardhall.protocol.errors import ProtocolError
from cardhall.server.table.core import FINISHED, RUNNING, WAITING, TableCore
from cardhall.server.table.inputs import REJOIN, Join, Request, SeatRequestDue
from cardhall.server.table.privacy import SeatRequest, invite_digest

Data = dict[str, Any]

#: the events of requests for a seat
SEAT_REQUESTED, SEAT_APPROVED, SEAT_DENIED, SEAT_REQUEST_LAPSED = (
    "seat_requested", "seat_approved", "seat_denied", "seat_request_lapsed")
#: the most players a table remembers as let in (each kind; the oldest is forgotten first: it
#: then needs the invite or the password again)
REMEMBERED = 1000


def unlisted(t: TableCore) -> bool:
    """The table is in no lobby (``visibility`` ``unlisted``)."""
    return bool(t.topts.get("visibility") == "unlisted")


def lock(t: TableCore) -> Data | None:
    """What a node needs to check a join or an HTTP request for this table
    before it reaches the table (:mod:`cardhall.server.private_access`): ``invite``
    (its digest, :func:`invite_digest`), ``unlisted``, ``password`` (the scrypt
    record or None), ``spectators`` (watching needs the password too). None
    for a public table without a password (nothing to check)."""
    pv = t.privacy
    if pv.invite is None or (pv.password is None and not unlisted(t)):
        return None
    return {"invite": invite_digest(pv.invite), "unlisted": unlisted(t), "password": pv.password,
            "spectators": bool(t.topts.get("password_spectators"))}


def hides(t: TableCore, inp: Request) -> bool:
    """Does the table answer ``inp`` as if it did not exist (``unknown_table``,
    whatever else it would say: ``not_joined``, ``table_closed``)? For an
    unlisted table and a player who is not its owner, holds no seat, was not
    let in with the invite, and sends a join without it (the server's own
    resuming join aside) or another request from a connection not watching."""
    if not unlisted(t):
        return False
    player = inp.player
    if player == t.owner or t.seat_of(player) is not None or player in t.privacy.invited:
        return False
    if isinstance(inp, Join):
        return not inp.invited and inp.re != REJOIN
    return inp.sub not in t.subscribers


def check_access(t: TableCore, inp: Join, role: str) -> None:
    """May ``inp``'s player join as ``role``? Raises ProtocolError
    ``unknown_table`` (an unlisted table without its invite) or
    ``bad_password`` (see the module docstring); changes nothing."""
    player, pv = inp.player, t.privacy
    if player == t.owner or t.seat_of(player) is not None:
        return
    if unlisted(t) and not inp.invited and player not in pv.invited:
        raise ProtocolError("unknown_table", f"no open table {t.id!r}")
    needs = pv.password is not None and (role == "player" or bool(t.topts.get("password_spectators")))
    if needs and not inp.password_ok and player not in pv.unlocked:
        raise ProtocolError("bad_password", f"this table needs its password to join as {role} (table option "
                            "password, protocol 1.5): join with password, the right one")


def remember(t: TableCore, inp: Join) -> None:
    """The table lets ``inp``'s player in from now on for what its join
    carried (the invite, the password), at most :data:`REMEMBERED` each."""
    pv = t.privacy
    for carried, kept in ((inp.invited and unlisted(t), pv.invited), (inp.password_ok and pv.password, pv.unlocked)):
        if carried and inp.player not in kept:
            kept[inp.player] = None
            if len(kept) > REMEMBERED:
                del kept[next(iter(kept))]
            t.changed()


def approves(t: TableCore) -> bool:
    """The owner approves each seat (``approve_seats``)."""
    return bool(t.topts.get("approve_seats")) and t.owner is not None


def asks_for_seat(t: TableCore, inp: Join, wanted: int | None, seed: str) -> bool:
    """True when ``inp`` (a join as player of a player holding no seat here)
    is a request for a seat the owner must answer (see the module
    docstring): it is kept (a ``seat_requested`` event for a new one) and the
    player watches as a spectator meanwhile. False when the player sits down
    at once. Raises ProtocolError ``bad_request`` (``ask`` not a bool),
    ``approval_required``, ``seat_denied``, ``match_running``,
    ``seat_taken``, ``table_full``."""
    ask = inp.ask
    if ask is not None and not isinstance(ask, bool):
        raise ProtocolError("bad_request", "ask must be true or false")
    if not approves(t) or inp.player == t.owner or t.seat_of(inp.player) is not None:
        return False
    pv = t.privacy
    if not ask:
        raise ProtocolError("approval_required", "the owner approves each seat at this table (table option "
                            "approve_seats, protocol 1.5): join as player with ask: true to ask for one")
    if pv.denied.get(inp.player) == t.match:
        raise ProtocolError("seat_denied", "the owner denied you a seat at this table until its next rematch")
    if t.status not in (WAITING, FINISHED):
        raise ProtocolError("match_running", "seats are taken between matches (G-9)")
    if wanted is not None and wanted in t.seats:
        raise ProtocolError("seat_taken", f"seat {wanted} is taken")
    if len(t.seats) >= t.n_seats:
        raise ProtocolError("table_full", "no free seat")
    old = pv.requests.get(inp.player)
    lapses = old.lapses if old is not None else t.now.wall + t.seconds("approve_within")
    pv.requests[inp.player] = SeatRequest(inp.name, wanted, seed, lapses)
    t.changed()
    if old is None:
        t.emit(Event({"type": SEAT_REQUESTED, "player": inp.player, "name": inp.name}))
        arm(t)
    return True


def pending(t: TableCore, player: str | None) -> bool:
    """``player`` waits for the owner's answer to its request for a seat."""
    return player is not None and player in t.privacy.requests


def end_request(t: TableCore, player: str, reason: str) -> None:
    """``player``'s request lapses (``reason``: ``timeout``, ``left``,
    ``match_started``): a ``seat_request_lapsed`` event; nothing when it has none."""
    if t.privacy.requests.pop(player, None) is not None:
        t.changed()
        t.emit(Event({"type": SEAT_REQUEST_LAPSED, "player": player, "reason": reason}))


def match_started(t: TableCore) -> None:
    """A match starts: every waiting request lapses (seats are taken between
    matches), and denials of earlier matches are forgotten."""
    for player in list(t.privacy.requests):
        end_request(t, player, "match_started")
    denied = t.privacy.denied
    for player in [p for p, match in denied.items() if match < t.match]:
        del denied[player]
        t.changed()


def arm(t: TableCore) -> None:
    """Arm the timer for the first request to lapse, when the table waits on
    no other timer: between matches, unless a finished bots-only table's
    automatic rematch is due (:func:`.match.schedule_rematch`), whose start
    ends every request anyway."""
    requests = t.privacy.requests
    if not requests or t.status not in (WAITING, FINISHED):
        return
    if t.status == FINISHED and t.topts["auto_rematch"] and all(not o.human for o in t.seats.values()):
        return
    first = min(r.lapses for r in requests.values())
    t.arm(SeatRequestDue(t.after(first - t.now.wall)))


def lapse_due(t: TableCore, _: SeatRequestDue) -> None:
    """The timer of :func:`arm`: each request whose time has come (the step's
    wall time) lapses with ``timeout``; the timer is armed for the next one."""
    if t.status == RUNNING:
        return
    for player, request in list(t.privacy.requests.items()):
        if request.lapses <= t.now.wall:
            end_request(t, player, "timeout")
    arm(t)
