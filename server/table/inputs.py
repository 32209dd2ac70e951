"""The inputs of a table machine, and ``Now``, the time a step happens at.

Every input is a frozen dataclass. Requests (:class:`Join`, :class:`Act`,
:class:`Leave`, :class:`Chat`) carry the request's raw fields as the client sent them: the
machine checks them in its step, so an error reply keeps its place after the
replies of earlier requests (SPEC: a step's replies follow its events).
Timer inputs (``...Due``) are the ones the machine itself asked for in a
:class:`~cardhall.server.table.outputs.Timer`: they carry what makes them
stale-proof (the turn, step or match they were armed for) and ``at``, the
time they were due (monotonic seconds, for latency metrics only).

Subscribers are opaque hashable keys chosen by the owner (the actor uses a
connection's id); the machine never sees a connection.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

#: a request's ``id``, echoed as ``re`` (an int, a short string, or None)
RequestId = Any

#: the ``re`` of a join the server sends for a connection itself, when the
#: table moved to another node: its answer's ``ok`` and errors are not passed
#: on, its snapshot carries no ``re`` (the client asked for nothing)
REJOIN = "\x00rejoin"


@dataclass(frozen=True, slots=True)
class Now:
    """The time of a step: ``wall`` Unix seconds (event ``ts``, ``created``),
    ``mono`` monotonic seconds (clocks, timers, idleness; the clock every
    :class:`~cardhall.server.table.outputs.Timer` is on)."""

    wall: float
    mono: float


# -- requests -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Join:
    """``join`` (SPEC "Client messages"): ``role``, ``seat``, ``seed``, ``since``,
    ``ask`` as sent (None when absent; checked by the machine). ``received``: monotonic
    seconds when the frame was read (metrics only). ``invited`` and
    ``password_ok``: the join carried the table's invite, its password (checked
    by the node it arrived on before posting it, :mod:`cardhall.server.private_access`:
    neither secret ever reaches the machine or its log; SPEC "Private tables")."""

    sub: Hashable
    player: str
    name: str
    re: RequestId = None
    role: Any = None
    seat: Any = None
    seed: Any = None
    since: Any = None
    received: float | None = None
    ask: Any = None
    invited: bool = False
    password_ok: bool = False


@dataclass(frozen=True, slots=True)
class Act:
    """``act``: ``action`` (a map with a ``type``) and ``turn`` as sent.
    ``received``: monotonic seconds when the frame was read (its latency is
    measured from then)."""

    sub: Hashable
    player: str
    re: RequestId = None
    action: Any = None
    turn: Any = None
    received: float | None = None


@dataclass(frozen=True, slots=True)
class Chat:
    """``chat`` (SPEC "Chat"): ``text`` already checked and normalised by the
    connection's node (:mod:`cardhall.server.chat`), ``name`` the sender's
    name (a seat's occupant name takes its place)."""

    sub: Hashable
    player: str
    name: str
    re: RequestId = None
    text: str = ""
    received: float | None = None


@dataclass(frozen=True, slots=True)
class Leave:
    """``leave``: the subscriber stops watching; a seated player leaves (G-5)."""

    sub: Hashable
    player: str
    re: RequestId = None
    received: float | None = None


# -- the service and the connections ------------------------------------------
@dataclass(frozen=True, slots=True)
class Disconnect:
    """The subscriber's connection went away (G-5: the seat is kept)."""

    sub: Hashable


@dataclass(frozen=True, slots=True)
class Rename:
    """Player ``player`` is named ``name`` now (SPEC "Names", ``rename``: checked
    and saved by the node its connection is on, then posted to every table
    where it sits or watches): a seat it holds takes the name, and a
    ``renamed`` event tells the table."""

    player: str
    name: str


@dataclass(frozen=True, slots=True)
class Close:
    """Close the table (an operator, or G-9's sweeping of idle tables)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Start:
    """Start the match if every seat is taken (G-9: at creation or a restore)."""


@dataclass(frozen=True, slots=True)
class Rearm:
    """Ask again for the timer of the open turn, dealer step or automatic
    rematch (after a restore)."""


@dataclass(frozen=True, slots=True)
class OwnerAway:
    """The hall's sweep found the owner's player away from the table for its
    ``close_after`` while others play on (SPEC "The host's controls"): the
    table checks it again at this step's time and passes the ownership."""


@dataclass(frozen=True, slots=True)
class ServiceStopping:
    """The service is shutting down: the disconnects that follow are its own,
    so a solo table keeps waiting for its player's ``continue`` (G-4)."""


# -- the store's outcome -------------------------------------------------------
@dataclass(frozen=True, slots=True)
class StoreFailed:
    """The last checkpoint could not be written (the store is unavailable):
    the table stalls, keeping everything unpublished."""

    reason: str


@dataclass(frozen=True, slots=True)
class StoreWritten:
    """A stalled table's checkpoint was written: it unstalls, re-arms its turn
    and takes the inputs it deferred."""


@dataclass(frozen=True, slots=True)
class StoreBack:
    """The store answers again: a stalled table tries its checkpoint again."""


@dataclass(frozen=True, slots=True)
class StoreRejected:
    """The store refused the checkpoint for another reason than being down (a
    state it cannot encode): the table is broken."""

    reason: str


# -- timers the machine asked for ----------------------------------------------
@dataclass(frozen=True, slots=True)
class ClockDue:
    """The action clock and time bank of turn ``turn_id`` ran out (G-3); ``at``
    is the deadline the clock had (a clock paused and resumed since has
    another one, which makes this input stale)."""

    turn_id: int
    at: float


@dataclass(frozen=True, slots=True)
class BotDue:
    """A bot's think time for turn ``turn_id`` is over (NL-5). ``move``: the
    bot's move when it was thought away from the table
    (:class:`~cardhall.server.table.bots.Move`, :mod:`cardhall.server.thinker`);
    None: the table thinks it. Never logged: the log keeps the move itself."""

    turn_id: int
    at: float
    move: Any = None


@dataclass(frozen=True, slots=True)
class AutoDue:
    """A sitting-out player's turn ``turn_id`` is played at once (G-3)."""

    turn_id: int
    at: float


@dataclass(frozen=True, slots=True)
class StepDue:
    """The pause before dealer step ``step_id`` is over (G-4)."""

    step_id: int
    at: float


@dataclass(frozen=True, slots=True)
class RematchDue:
    """A bots-only table's pause after match ``match`` is over (G-7 ``auto_rematch``)."""

    match: int
    at: float


@dataclass(frozen=True, slots=True)
class SeatRequestDue:
    """The oldest request for a seat may have lapsed (SPEC "Private tables",
    ``approve_within``); the step's wall time decides which have."""

    at: float


Request = Join | Act | Leave | Chat
Due = ClockDue | BotDue | AutoDue | StepDue | RematchDue | SeatRequestDue
StoreOutcome = StoreFailed | StoreWritten | StoreBack | StoreRejected
Input = Request | Disconnect | Rename | Close | Start | Rearm | OwnerAway | ServiceStopping | StoreOutcome | Due

#: the input types that are requests (answered with a reply)
REQUESTS = (Join, Act, Leave, Chat)
#: the store's outcomes (taken whatever the table's status)
STORE_OUTCOMES = (StoreFailed, StoreWritten, StoreBack, StoreRejected)
