"""``act``: its fields checked, then a table control or a game action.

Table controls: the seat's own (``continue`` G-4, ``sit_out``/``sit_in`` G-3,
``show``/``muck`` FL-9) and the owner's (``start`` G-9, ``pause``/``resume``
G-8, ``rematch`` G-7, which a seated player may ask for too;
``spectator_chat``, :mod:`.chat`; ``close``, ``kick``, ``ban``, ``transfer``,
:mod:`.host_controls`; ``approve``, ``deny``, :mod:`.approval`). Everything else
is a game action for the engine, taken only from the seat to act (spectators
cannot act). A ``turn`` naming a turn that has passed is ``stale_turn``.
Every refusal is a :class:`~cardhall.protocol.errors.ProtocolError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardhall.engine.base import Engine, Event, IllegalAction
from cardhall.protocol import frames
from cardhall.protocol.errors import ProtocolError
from cardhall.server.table.approval import CONTROLS as SEAT_ANSWERS
from cardhall.server.table.approval import answer as answer_request
from cardhall.server.table.chat import SPECTATOR_CHAT, spectator_chat
from cardhall.server.table.core import (
    CONTINUE,
    FINISHED,
    HUMAN,
    RUNNING,
    WAITING,
    TableCore,
)
from cardhall.server.table.host_controls import HOST_CONTROLS, host_control
from cardhall.server.table.inputs import Act
from cardhall.server.table.lifecycle import pause, rematch, resume, start_match
from cardhall.server.table.subscribers import NOT_JOINED
from cardhall.server.table.turns import (
    apply_action,
    press_continue,
    schedule_auto,
    settle,
    stop_waiting_for,
    wait_again,
)

#: ``act`` types a seat's player sends to the table itself
SEAT_CONTROLS = frozenset({"continue", "sit_out", "sit_in", "show", "muck"})
#: ``act`` types for the owner (``rematch``: a seated player too)
OWNER_CONTROLS = frozenset({"start", "pause", "resume", "rematch"})
CONTROLS = SEAT_CONTROLS | OWNER_CONTROLS | HOST_CONTROLS


def check_action_shape(action: Mapping[Any, Any]) -> None:
    """Amounts are integers and card lists are lists of strings in every game;
    anything else is refused (``bad_request``) before it reaches an engine."""
    for key, value in action.items():
        if not isinstance(key, str):
            raise ProtocolError("bad_request", "action fields are named by strings")
        if key in ("amount", "count") and (isinstance(value, bool) or not isinstance(value, int)):
            raise ProtocolError("bad_request", f"{key} must be an integer")
        if key == "cards" and (not isinstance(value, list) or not all(isinstance(c, str) for c in value)):
            raise ProtocolError("bad_request", "cards must be a list of card strings")
        if key == "rank" and not isinstance(value, (str, int)):
            raise ProtocolError("bad_request", "rank must be a string")


def act(t: TableCore, inp: Act) -> None:
    """``act`` from subscriber ``inp.sub`` (player ``inp.player``), answered with
    ``ok`` once applied. ProtocolError ``not_joined``, ``bad_request``,
    ``not_a_player``, ``stale_turn``, ``not_your_turn``, ``illegal_action``,
    ``bad_state``, ``paused``, ``not_owner``."""
    viewer = t.subscribers.viewer(inp.sub)
    if viewer is NOT_JOINED:
        raise ProtocolError("not_joined", f"join table {t.id} first")
    action = inp.action
    if not isinstance(action, Mapping) or not isinstance(action.get("type"), str) or len(action["type"]) > 32:
        raise ProtocolError("bad_request", "action must be a map with a string type")
    kind = action["type"]
    check_action_shape(action)  # controls too: an ill-typed field is refused, never ignored
    turn = inp.turn
    if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
        raise ProtocolError("bad_request", "turn must be the id of a turn (an integer)")
    if kind == SPECTATOR_CHAT:
        spectator_chat(t, inp.player, action)
    elif kind in HOST_CONTROLS:
        host_control(t, kind, inp.player, action)
    elif kind in SEAT_ANSWERS:
        answer_request(t, kind, inp.player, action)
    elif kind in OWNER_CONTROLS:
        owner_control(t, kind, inp.player, viewer)
    else:
        if viewer is None:
            raise ProtocolError("not_a_player", "spectators cannot act")
        if turn is not None and turn != t.turn_id:
            raise ProtocolError("stale_turn", f"turn {turn} is not the open turn ({t.turn_id}): it has passed, or has not come")
        if kind in SEAT_CONTROLS:
            seat_control(t, kind, viewer)
        else:
            game_action(t, viewer, action, inp.received)
    t.reply(inp.sub, frames.ok(inp.re))


def require_running(t: TableCore) -> Engine:
    """The running match's engine; ProtocolError ``bad_state`` (no match) or ``paused`` (G-8)."""
    if t.status != RUNNING or t.engine is None:
        raise ProtocolError("bad_state", f"no match is running (status {t.status})")
    if t.paused:
        raise ProtocolError("paused", "the owner paused the table (G-8)")
    return t.engine


def game_action(t: TableCore, seat: int, action: Mapping[str, Any], received: float | None) -> None:
    """A game action from ``seat``, which must be the seat to act (``not_your_turn``)."""
    engine = require_running(t)
    if t.turn_kind == CONTINUE or engine.to_act != seat:
        raise ProtocolError("not_your_turn", f"seat {engine.to_act} is to act" if engine.to_act else "nobody is to act")
    apply_action(t, seat, dict(action), received, voluntary=True)


def seat_control(t: TableCore, kind: str, seat: int) -> None:
    """``continue`` (G-4), ``sit_out``/``sit_in`` (G-3), ``show``/``muck`` (FL-9) for ``seat``."""
    occ = t.seats.get(seat)
    if occ is None:  # another connection of this player left the seat
        raise ProtocolError("not_a_player", "you hold no seat at this table")
    if kind == "continue":
        require_running(t)
        press_continue(t, seat)
    elif kind == "sit_out":
        if occ.sitting_out:
            raise ProtocolError("bad_state", "already sitting out")
        occ.sitting_out = True
        t.emit(Event({"type": "sat_out", "seat": seat, "reason": "player"}))
        if t.turn_seat == seat and t.turn_kind == HUMAN and not t.paused:
            schedule_auto(t)
        stop_waiting_for(t, seat)
    elif kind == "sit_in":
        if not occ.sitting_out:
            raise ProtocolError("bad_state", "not sitting out")
        occ.sitting_out = False
        occ.timeouts = 0
        t.emit(Event({"type": "sat_in", "seat": seat}))
        wait_again(t, seat)
    else:  # show, muck (FL-9)
        engine = require_running(t)
        try:
            events = engine.control(seat, {"type": kind})
        except IllegalAction as exc:
            raise ProtocolError("illegal_action", str(exc), reason=exc.code,
                                **({"rule": exc.rule} if exc.rule else {})) from None
        t.emit_all(events)
        settle(t)
    t.changed()


def owner_control(t: TableCore, kind: str, player: str, viewer: int | None) -> None:
    """``start`` (G-9: at least two seated), ``pause``/``resume`` (G-8) for the
    owner; ``rematch`` (G-7) for the owner or a seated player."""
    is_owner = player == t.owner
    if kind == "rematch":
        seated = viewer is not None and t.seats.get(viewer) is not None
        if not (is_owner or seated):
            raise ProtocolError("not_owner", "the owner or a seated player may ask for the rematch")
        if t.status != FINISHED:
            raise ProtocolError("bad_state", "a rematch follows a finished match (G-7)")
        rematch(t)
        return
    if not is_owner:
        raise ProtocolError("not_owner", f"only the owner may {kind} (G-8, G-9)")
    if kind == "start":
        if t.status != WAITING:
            raise ProtocolError("bad_state", f"the table is {t.status}")
        least = max(2, t.cls.min_seats)
        if len(t.seats) < least:
            raise ProtocolError("bad_state", f"{t.game} needs at least {least} players seated (G-9)")
        start_match(t)
    elif kind == "pause":
        require_running(t)
        pause(t)
    elif kind == "resume":
        if t.status != RUNNING or not t.paused:
            raise ProtocolError("bad_state", "the table is not paused")
        resume(t)
