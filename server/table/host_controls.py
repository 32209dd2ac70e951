"""The host's controls and the table's ownership (SPEC "The host's controls").

The owner of a table (``TableCore.owner``: the player who created it, or
the one it passed to) acts on the table with ``act``; each control is
answered ``ok`` or an error, and makes a public event (nothing hidden in it):

* ``close``: the table closes as the operator's close does
  (:func:`.lifecycle.close`): ``closed`` with reason ``owner`` is its last event.
* ``kick {player}``: ``kicked`` (``seat``: the seat taken from the player, or
  null when it only watched). That seat follows the ``leave`` rule (G-5,
  G-7, :func:`.seating.release`): during a match it is sat out, its turns
  played with the game's timeout action, until the match ends, then freed;
  between matches it is freed at once. Every connection of the player
  watches as a spectator from this step on, so nothing private of that
  seat, or of whoever sits there next, reaches it again. The player may
  watch, but sits again only once the match it was kicked from has ended
  (kicked between matches: once the next match has ended): :mod:`.admission`.
  A request of the player's for a seat (SPEC "Private tables") ends with
  ``seat_request_lapsed`` (``left``), for a ban too.
* ``ban {player}``: ``banned``; the player's seat follows the same rule and
  its connections stop watching the table: each is sent the events of the
  step up to ``banned`` (as a spectator sees them; a join of it not answered
  yet gets the error ``banned`` instead), its last frames from the table.
  Every later ``join`` of the player is refused with ``banned``.
* ``transfer {player}``: the ownership to a person holding a seat here;
  ``owner_changed`` with reason ``transfer``, after which each connection of
  the new owner watching the table is sent a snapshot on its own (no
  ``re``: its ``info`` carries the invite and the requests for a seat,
  ``Outputs.fresh``), so the new host has them without joining again.

Ownership also passes by itself, ``owner_changed`` with reason ``absent``,
when no connection of the owner's player has watched the table for its
``close_after`` seconds (counted in the steps' wall time,
``TableCore.owner_away_since``) while another person holding a seat is
connected: to the one seated longest (:attr:`.occupant.Occupant.since`,
then the lowest seat) among those connected. The hall's sweep asks for the
check (:func:`owner_pass_due`, the :class:`~.inputs.OwnerAway` input); the
table makes it again at that step's time (:func:`owner_away`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from cardhall.engine.base import Event
from cardhall.protocol import frames
from cardhall.protocol.errors import ProtocolError
from cardhall.server.table.access import end_request
from cardhall.server.table.admission import note_owner, own_seat, upcoming_match
from cardhall.server.table.core import BROKEN, CLOSED, TableCore
from cardhall.server.table.inputs import REJOIN, Close, OwnerAway
from cardhall.server.table.lifecycle import close
from cardhall.server.table.records import EventRecord
from cardhall.server.table.seating import release, seat_unwatched, unsubscribe

#: ``act`` types only the owner may send (SPEC "The host's controls")
HOST_CONTROLS = frozenset({"close", "kick", "ban", "transfer"})
#: the longest player id a control names (``server.json#/$defs/player_id``)
MAX_PLAYER = 64


def host_control(t: TableCore, kind: str, player: str, action: Mapping[str, Any]) -> None:
    """The control ``kind`` (one of :data:`HOST_CONTROLS`) from ``player`` with
    the fields of ``action``. ProtocolError ``not_owner``, ``bad_request``
    (``player`` missing, not a player id, or the owner itself), ``bad_state``
    (the player named is not at the table, is banned already, or holds no
    seat for a ``transfer``)."""
    if player != t.owner:
        raise ProtocolError("not_owner", f"only the owner may {kind} (SPEC \"The host's controls\")")
    if kind == "close":
        close(t, Close("owner"))
        return
    target = action.get("player")
    if not isinstance(target, str) or not 1 <= len(target) <= MAX_PLAYER:
        raise ProtocolError("bad_request", f"{kind} needs player: a player id (a string of 1..{MAX_PLAYER})")
    if target == player:
        raise ProtocolError("bad_request", f"the owner cannot {kind} itself")
    if kind == "kick":
        kick(t, target)
    elif kind == "ban":
        ban(t, target)
    else:
        transfer(t, target, "transfer")


def kick(t: TableCore, player: str) -> None:
    """``player`` loses its seat by the leave rule and watches as a spectator
    (see the module docstring). ProtocolError ``bad_state`` when it neither
    holds a seat nor watches here."""
    seat = own_seat(t, player)
    if seat is None and not t.subscribers.watching(player):
        raise ProtocolError("bad_state", f"player {player} is not at this table")
    t.emit(Event({"type": "kicked", "player": player, "seat": seat}))
    t.kicked[player] = upcoming_match(t)
    t.changed()
    end_request(t, player, "left")  # a request of its for a seat ends with it (SPEC "Private tables")
    for key in t.subscribers.keys_of(player):
        if t.subscribers.viewer(key) is not None:
            t.subscribers.subscribe(key, None)
    for answer in t.pending.joins:  # a join of it not delivered yet is answered as a spectator too
        if answer.sub in t.subscribers and t.subscribers.player(answer.sub) == player:
            answer.viewer = None
    if seat is not None:
        release(t, seat)
        seat_unwatched(t, seat)


def ban(t: TableCore, player: str) -> None:
    """``player`` is banned: its seat goes by the leave rule, its connections
    stop watching after their last frames (see the module docstring).
    ProtocolError ``bad_state`` when it is banned already."""
    if player in t.banned:
        raise ProtocolError("bad_state", f"player {player} is banned from this table already")
    seat = own_seat(t, player)
    rec = t.emit(Event({"type": "banned", "player": player}))
    t.banned.add(player)
    t.kicked.pop(player, None)  # the ban bars more than a kick did
    t.changed()
    end_request(t, player, "left")  # a request of its for a seat ends with it (SPEC "Private tables")
    keys = t.subscribers.keys_of(player)
    farewell(t, keys, rec)
    for key in keys:
        unsubscribe(t, key)
        t.effects.members[key] = False
    if seat is not None:
        release(t, seat)


def farewell(t: TableCore, keys: list[Hashable], last: EventRecord) -> None:
    """The last frames of the table for subscribers ``keys``, which stop
    watching in this step: every event of the pending outputs up to ``last``
    as a spectator sees it (so their ``seq`` has no gap), or, for one whose
    join is not answered yet, the error ``banned`` for that join (the
    server's own join of a relayed connection is not answered: it gets the
    events, which end its relaying node's watch, :mod:`cardhall.server.cluster.relay`)."""
    joining = {answer.sub: answer.re for answer in t.pending.joins if answer.re != REJOIN}
    error = ProtocolError("banned", f"the owner of table {t.id} has banned you from it")
    events = [frames.event(t.id, rec.seq, rec.event.view(None), rec.ts, rec.turn)
              for rec in t.pending.records if rec.seq <= last.seq]
    for key in keys:
        if key in joining:
            t.reply(key, error.frame(joining[key]))
            continue
        for frame in events:
            t.reply(key, frame)


def transfer(t: TableCore, player: str, reason: str) -> None:
    """The ownership to ``player``, a person holding a seat here;
    ``owner_changed`` with ``reason`` (``transfer`` or ``absent``).
    ProtocolError ``bad_state`` when it holds no seat of its own here."""
    if own_seat(t, player) is None:
        raise ProtocolError("bad_state", f"player {player} holds no seat at this table: ownership goes to a seated person")
    t.owner = player
    t.owner_away_since = None
    note_owner(t)
    t.changed()
    t.emit(Event({"type": "owner_changed", "owner": player, "reason": reason}))
    t.pending.fresh.append(player)  # its connections: a snapshot with the invite and the requests


# -- the absent owner ----------------------------------------------------------------------
def heir(t: TableCore) -> str | None:
    """Who the ownership passes to when the owner is away: the person seated
    longest (then the lowest seat) among those holding a seat of their own
    (not left, not kicked from) with a connection here, the owner's player
    excepted; None: nobody."""
    seated = [(occ.since, seat, occ.player) for seat, occ in t.seats.items()
              if occ.player is not None and occ.player != t.owner and not occ.left
              and own_seat(t, occ.player) == seat and t.presence(seat) > 0]
    return min(seated)[2] if seated else None


def owner_pass_due(t: TableCore, wall: float) -> bool:
    """At Unix time ``wall``: the owner's player has watched the table on no
    connection for its ``close_after`` while another person holding a seat
    is connected. A question for the hall's sweep; the table checks it again
    in the step (:func:`owner_away`). (A restored table has no watchers: its
    owner's absence, when the state had none, starts with the first join
    after the restore, :func:`.admission.note_owner`, and nobody is
    connected before it.)"""
    if t.owner is None or t.status in (CLOSED, BROKEN) or t.stalled or t.subscribers.watching(t.owner):
        return False
    since = t.owner_away_since
    return since is not None and wall - since >= t.seconds("close_after") and heir(t) is not None


def owner_away(t: TableCore, _: OwnerAway) -> None:
    """The hall's sweep found the owner away (:func:`owner_pass_due`): the
    ownership passes to :func:`heir` when it is so at this step's time."""
    if owner_pass_due(t, t.now.wall):
        successor = heir(t)
        assert successor is not None
        transfer(t, successor, "absent")
