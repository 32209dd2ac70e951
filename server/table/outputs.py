"""What a table machine asks its owner to do.

Two kinds, kept apart because the store may refuse a checkpoint:

* :class:`Outputs`, gated by the commit: the new event records, whether the
  state changed, the finished hands, the replies and join answers, the
  counts for metrics. They accumulate in ``TableMachine.pending`` until the
  owner has written them (the checkpoint) and takes them to deliver; while
  the store is down they wait there, unpublished (server/STORAGE.md).
* :class:`Effects`, returned by every step and acted on at once: the timer
  to arm or cancel, the replies that need no commit (``unavailable`` while
  stalled), error codes for metrics, status notices for the host, and the
  subscribers whose membership changed.

The timer is a single slot per table: a table waits for at most one timed
thing at a time (a clock, a bot, an automatic turn, a dealer step, a
rematch), so a new :class:`Timer` replaces the armed one.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cardhall.protocol.frames import Snapshot
from cardhall.server.store.format import pack_entry, unpack_entry
from cardhall.server.table.inputs import Due, Input, Now
from cardhall.server.table.log import Recorder, entry
from cardhall.server.table.records import EventRecord

Data = dict[str, Any]

#: status notices for the host (``Effects.notices``)
BROKEN, STALLED, UNSTALLED = "broken", "stalled", "unstalled"


@dataclass(frozen=True, slots=True)
class Timer:
    """Post ``due`` at ``at`` (monotonic seconds, the clock of ``Now.mono``;
    at once when that time has passed), replacing the table's armed timer."""

    at: float
    due: Due


@dataclass(frozen=True, slots=True)
class NoTimer:
    """Cancel the table's armed timer."""


#: the one :class:`NoTimer`
CANCEL = NoTimer()


@dataclass(frozen=True, slots=True)
class Reply:
    """A frame (built with :mod:`cardhall.protocol.frames`) for subscriber ``sub``."""

    sub: Hashable
    frame: Mapping[str, Any]


@dataclass(slots=True)
class JoinAnswer:
    """A ``join`` to answer once the step is written: ``viewer`` (a seat or
    None), ``since`` (None: a snapshot), ``re``; ``before`` is the snapshot
    taken before this join started the match (sent first, then the events
    after it); ``player``: whose join it is (its snapshot shows the owner the
    invite, and a request for a seat as ``pending``: SPEC "Private tables")."""

    sub: Hashable
    viewer: int | None
    since: int | None
    re: Any
    before: Snapshot | None = None
    player: str | None = None


#: log entries at least this long are read back before they are stored (:meth:`LoggedStep.packed`)
READ_BACK_BYTES = 512


@dataclass(frozen=True, slots=True)
class LoggedStep:
    """One applied step of the input log (:mod:`.log`), its entry built only
    when a store writes it (:meth:`entry`); ``digest``: the state's after the
    step (``Settings.verify_replay``), else None."""

    n: int
    now: Now
    inputs: tuple[Input, ...]
    recorder: Recorder
    digest: str | None = None

    def entry(self) -> Data:
        """The log entry (:func:`.log.entry`)."""
        out = entry(self.n, self.now.wall, self.now.mono, list(self.inputs), self.recorder)
        if self.digest is not None:
            out["h"] = self.digest
        return out

    def packed(self) -> bytes:
        """The entry packed (``pack_entry``); one long enough to nest deeper
        than msgpack's reader goes (about 1,000 levels, a byte each at least)
        is read back first: one that does not come back raises CheckpointError,
        and its checkpoint writes the whole state instead (``Checkpoint.full``).
        The usual entry, far shorter, is packed once."""
        blob = pack_entry(self.entry())
        if len(blob) >= READ_BACK_BYTES:
            unpack_entry(blob)
        return blob


@dataclass(slots=True)
class Outputs:
    """Everything the steps since the last delivery produced that must be
    written before it leaves (see the module docstring). ``dirty``: the state
    changed; ``hands``: finished hands (``{"game", "match", "hand", "seq"}``);
    ``actions``: actions applied; ``arrivals``: when each applied action
    arrived (monotonic seconds), for latency metrics. ``log``: the steps
    applied, as :class:`LoggedStep` (the input log, ``server/STORAGE.md``);
    ``full``: the next checkpoint must hold the whole state, not only the
    log (a table created or restored, a fault: :meth:`whole_state_due`). ``fresh``:
    players each of whose connections watching the table is sent a
    snapshot on its own (no ``re``) once the events are delivered, built
    then: a new owner, whose ``info`` now carries the invite and the
    requests for a seat (SPEC "The host's controls")."""

    records: list[EventRecord] = field(default_factory=list)
    dirty: bool = False
    log: list[LoggedStep] = field(default_factory=list)
    full: bool = False
    hands: list[Data] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)
    joins: list[JoinAnswer] = field(default_factory=list)
    fresh: list[str] = field(default_factory=list)
    actions: int = 0
    arrivals: list[float] = field(default_factory=list)

    @property
    def needs_commit(self) -> bool:
        """True when a checkpoint must be written before anything here leaves."""
        return bool(self.records or self.dirty or self.hands or self.log or self.full)

    @property
    def empty(self) -> bool:
        """Nothing to write or deliver."""
        return not (self.needs_commit or self.replies or self.joins or self.fresh)

    def whole_state_due(self, logged: int, every: int) -> bool:
        """Whether the checkpoint of these outputs writes the table's whole
        state rather than the input log's new steps (``server/STORAGE.md``,
        "The input log"): :attr:`full` asks for it, a hand finished here (so a
        match's end, its hands and its revealed seed are in a whole state, G-2,
        and a restart replays few steps: hands end often), or ``logged`` steps
        since the last whole state plus :attr:`log`'s reach ``every``
        (``--full-state-every``)."""
        return self.full or bool(self.hands) or logged + len(self.log) >= every


@dataclass(slots=True)
class Effects:
    """What one step asks for at once: ``timer`` (a :class:`Timer`,
    :data:`CANCEL`, or None for no change), ``immediate`` replies (no commit
    needed), ``errors`` (error codes sent, for metrics), ``notices``
    (:data:`BROKEN`, :data:`STALLED`, :data:`UNSTALLED`), ``members``
    (subscriber -> subscribed now, for those a request or disconnect touched)."""

    timer: Timer | NoTimer | None = None
    immediate: list[Reply] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    members: dict[Hashable, bool] = field(default_factory=dict)
