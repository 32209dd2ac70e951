"""A table's event records and the one gate that decides who sees legal actions.

An :class:`EventRecord` is an engine :class:`~cardhall.engine.base.Event`
(redacted only by ``Event.view``) with the table's ``seq``, the wall time of
the input that caused it and, for the event that put a seat to act, the
public ``turn`` and the seat's ``legal`` actions. :func:`legal_for` is the
only place that decides whether a viewer gets ``legal`` (the fan-out's event
frames and the machine's snapshots both ask it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from cardhall.engine.base import Event
from cardhall.protocol.frames import LegalAction, Turn

Data = dict[str, Any]


@dataclass(slots=True)
class EventRecord:
    """Event ``seq`` of a table: ``ts`` Unix seconds of the input that caused
    it; ``turn`` (public) when it put a seat to act; ``legal_seat`` the seat
    that may see ``legal``, the legal actions of that turn (None for a past
    turn read back from a store: nobody is sent those)."""

    seq: int
    event: Event
    ts: float
    turn: Turn | None = None
    legal_seat: int | None = None
    legal: list[LegalAction] | None = None


def legal_for(viewer: int | None, seat: int | None, legal: list[LegalAction] | None) -> list[LegalAction] | None:
    """The legal actions ``viewer`` (a seat, or None for a spectator) may be
    sent: ``legal`` only when it is the seat to act (``seat``), else None.

    >>> legal_for(2, 2, [{"type": "check"}]), legal_for(1, 2, [{"type": "check"}]), legal_for(None, None, [])
    ([{'type': 'check'}], None, None)
    """
    return legal if viewer is not None and viewer == seat else None


def carries_turn(rec: EventRecord, turn_id: int | None) -> bool:
    """Whether ``rec`` carries turn ``turn_id``: the event that began it, or
    one that carries it again (``resumed``, G-8).

    >>> carries_turn(EventRecord(9, Event({"type": "resumed"}), 0.0, {"seat": 1, "id": 7}), 7)
    True
    >>> carries_turn(EventRecord(7, Event({"type": "bet"}), 0.0), 7)
    False
    """
    return turn_id is not None and rec.turn is not None and rec.turn.get("id") == turn_id


def record_from_data(seq: int, data: Data, current_turn: int | None = None, current_seat: int | None = None,
                     current_legal: list[LegalAction] | None = None) -> EventRecord:
    """An :class:`EventRecord` from its stored record (``{"data", "private"?,
    "ts", "turn"?}``, :func:`~cardhall.server.store.format.pack_record`,
    unpacked). A record carrying the turn still open (its ``turn`` has the id
    ``current_turn``, a person's turn: the event that began it, or a
    ``resumed`` that carries it again, G-8) gets that turn's legal actions
    again for ``current_seat``; a past turn's are not kept."""
    turn = cast("Turn | None", data.get("turn"))
    rec = EventRecord(seq, Event.from_data(data), data.get("ts", 0.0), turn)
    if turn is not None and not turn.get("continue"):
        rec.legal_seat = turn.get("seat")
    if current_turn is not None and carries_turn(rec, current_turn) and current_legal is not None:
        rec.legal_seat = current_seat
        rec.legal = current_legal
    return rec
