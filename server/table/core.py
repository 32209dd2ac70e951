"""A table's state and the bookkeeping every rule uses (``emit``, timers, replies).

:class:`TableCore` holds everything a table is: seats, lifecycle, the open
turn and its clock, the engine of the current match, its subscribers, and
the outputs of the steps not yet delivered. The rules (:mod:`.match`,
:mod:`.turns`, :mod:`.lifecycle`, :mod:`.seating`, :mod:`.requests`) are
functions over it; :class:`~cardhall.server.table.machine.TableMachine` adds
the dispatch. Nothing here awaits or reads a clock: the time of the current
input is :attr:`TableCore.now`, set by the machine.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from cardhall.engine.base import Engine, Event
from cardhall.engine.registry import engine_class
from cardhall.protocol.frames import LegalAction
from cardhall.server.table.clock import PausedClock, TurnClock
from cardhall.server.table.inputs import Due, Input, Now
from cardhall.server.table.log import Recorder
from cardhall.server.table.occupant import Occupant
from cardhall.server.table.outputs import CANCEL, Effects, Outputs, Reply, Timer
from cardhall.server.table.privacy import Privacy
from cardhall.server.table.records import EventRecord
from cardhall.server.table.subscribers import Subscribers

Data = dict[str, Any]

#: table statuses (``info.status`` adds "paused" for a paused running table)
WAITING, RUNNING, FINISHED, CLOSED, BROKEN = "waiting", "running", "finished", "closed", "broken"
#: kinds of turn: a person's (clock and bank, G-3), a bot's (NL-5), a sitting-out
#: seat's (played at once, G-3), the solo player's ``continue`` (G-4)
HUMAN, BOT, AUTO, CONTINUE = "human", "bot", "auto", "continue"

#: where the server seed of each match comes from (G-2): 32 bytes from the OS by default
Entropy = Callable[[], bytes]


class TableCore:
    """One table's state (see the module docstring).

    ``server_seed``: the next (or current) match's seed, secret until that
    match ends (G-2); ``entropy`` draws the following ones. ``created`` is
    Unix seconds, ``idle_since`` monotonic seconds (G-9). Raises KeyError for
    an unknown ``game``.
    """

    def __init__(self, table_id: str, game: str, n_seats: int, table_options: Data, game_options: Data,
                 owner: str | None, *, server_seed: bytes, entropy: Entropy, now: Now) -> None:
        self.id = table_id
        self.game = game
        self.cls: type[Engine] = engine_class(game)
        self.n_seats = n_seats
        self.topts = table_options
        self.gopts = game_options
        self.owner = owner
        self.entropy = entropy
        self.status = WAITING
        self.paused = False
        self.spectator_chat = True  # spectators may chat (SPEC "Chat"; the owner's control)
        #: the invite, the password's record, who was let in, seat requests (SPEC "Private tables")
        self.privacy = Privacy()
        # the host's controls (SPEC "The host's controls", :mod:`.host_controls`): players banned from the
        # table, players kicked -> the last match they may not sit in, and since when (Unix seconds) the
        # owner's player has not watched the table (None: it watches now)
        self.banned: set[str] = set()
        self.kicked: dict[str, int] = {}
        self.owner_away_since: float | None = now.wall if owner is not None else None
        self.match = 1
        self.server_seed = server_seed
        self.seats: dict[int, Occupant] = {}
        self.engine: Engine | None = None
        self.seq = 0
        self.last_result: Data | None = None
        self.first_dealer: int | None = None  # of the current or last match (G-7)
        self.created = now.wall
        self.idle_since = now.mono
        #: the least bot think time, seconds, while no person at the table is in play (set by the host
        #: from its settings; 0: none): :meth:`bot_think`
        self.unattended_think = 0.0
        self.last_hand_digest: str | None = None  # of the last hand recorded
        #: steps applied so far (the number of the last entry of the input log: :mod:`.log`)
        self.logged = 0
        #: log a digest of the state after each step (``Settings.verify_replay``: tests)
        self.verify_log = False
        #: what the current step draws from outside (server seeds, bot moves), recorded or played back
        self.recorder = Recorder()
        # the open turn: id (the seq of the event that began it), seat, kind, legal actions, clock
        self.turn_id: int | None = None
        self.turn_seat: int | None = None
        self.turn_kind: str | None = None
        self.turn_legal: list[LegalAction] | None = None
        self.clock: TurnClock | PausedClock | None = None
        self.step_id: int | None = None  # a dealer step waiting for its pause (G-4)
        # the service around it
        self.stalled = False  # the store cannot be written: see TableMachine
        self.deferred: list[Input] = []  # inputs held while stalled
        self.service_stopping = False
        self.subscribers = Subscribers()
        # the current step
        self.now = now
        self.pending = Outputs()
        self.effects = Effects()

    # -- questions -------------------------------------------------------------
    def seat_of(self, player_id: str) -> int | None:
        """The seat ``player_id`` holds here, or None (G-5: at most one)."""
        for seat, occ in self.seats.items():
            if occ.player == player_id:
                return seat
        return None

    def presence(self, seat: int) -> int:
        """How many subscribers watch as ``seat`` (G-4, G-5)."""
        return self.subscribers.presence(seat)

    def seconds(self, option: str) -> float:
        """A table option in seconds (``action_clock``, ``pause``, ...)."""
        return float(self.topts[option])

    def attended(self) -> bool:
        """A person holding a seat is in play: connected, not sitting out, not left."""
        for seat, occ in self.seats.items():
            if occ.human and not occ.sitting_out and not occ.left and self.presence(seat) > 0:
                return True
        return False

    def paced(self, delay: float) -> float:
        """``delay`` (seconds) before the table's own next move (a bot's think,
        a sitting-out seat's timeout action, a dealer step, an automatic
        rematch), raised to :attr:`unattended_think` while no person holding a
        seat is in play (:meth:`attended`): a table its people walked away
        from, or one of bots only, never plays at full speed (SPEC "Clocks and
        pacing", deploy/README.md ``--bot-think-floor``)."""
        if delay >= self.unattended_think or self.attended():
            return delay
        return self.unattended_think

    def bot_think(self) -> float:
        """The bots' mean think time, seconds: the ``bot_think`` option,
        :meth:`paced`."""
        return self.paced(self.seconds("bot_think"))

    def draw_seed(self) -> bytes:
        """A new server seed (G-2) from :attr:`entropy`, recorded in the step's
        log entry (a replay takes the logged one)."""
        return self.recorder.seed(self.entropy)

    # -- the step's outputs ------------------------------------------------------
    def emit(self, event: Event) -> EventRecord:
        """Give ``event`` the next ``seq`` and keep it for the checkpoint."""
        self.seq += 1
        rec = EventRecord(self.seq, event, self.now.wall)
        self.pending.records.append(rec)
        return rec

    def emit_all(self, events: Iterable[Event]) -> None:
        """:meth:`emit` each of ``events`` in order."""
        for event in events:
            self.emit(event)

    def changed(self) -> None:
        """The state changed without an event: the next checkpoint writes it."""
        self.pending.dirty = True

    def reply(self, sub: Hashable, frame: Mapping[str, Any]) -> None:
        """Answer ``sub`` once the step is written."""
        self.pending.replies.append(Reply(sub, frame))

    def after(self, delay: float) -> float:
        """The monotonic time ``delay`` seconds from now (0 or less: now)."""
        return self.now.mono + max(0.0, delay)

    def arm(self, due: Due) -> None:
        """Post ``due`` at its time ``due.at`` (at once, still as its own
        input, when that has passed), replacing the armed timer."""
        self.effects.timer = Timer(due.at, due)

    def cancel_timer(self) -> None:
        """Cancel the armed timer."""
        self.effects.timer = CANCEL
