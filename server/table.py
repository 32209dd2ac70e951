"""The table actor: one asyncio task per table owns its engine and metadata.

Every input (a client's ``join``/``act``/``leave``, a disconnect, a clock
expiry, a bot's move, a paced dealer step, an operator's close) is a mailbox
item. The actor takes everything queued, applies it in order, then

1. hands one :class:`~cardhall.server.store.base.Checkpoint` (state + new events + finished
   hands) to the group committer and waits for it to be written,
2. only then publishes: each new event to every subscriber, encoded once per
   distinct view and codec (:mod:`cardhall.server.fanout`), then snapshots for new
   subscribers, then replies (``ok``/``error``).

So no event, snapshot or acknowledgement leaves the server before the
checkpoint holding it (issue 5's guarantee). A fault while applying an input
marks this table broken (logged, an ``broken`` event); nothing else is touched.

When the store cannot be written (:class:`~cardhall.server.store.base.StoreUnavailable`),
the table *stalls*: what it applied stays in memory, unpublished and
unacknowledged; clocks stop; requests are refused with ``unavailable``; bots,
clocks and paced steps wait. When the hall sees the store answer again it
posts ``retry``: the table commits what it held, publishes it, and its clocks,
bots and steps resume (``rearm``). So nothing acknowledged is ever lost, and
nothing is published that a restart could contradict.

Rules implemented here, not in the engines: G-2 (seed commitment, client seeds,
reveal), G-3 (action clock, time bank, timeout action, sit-out after two
timeouts), G-4 (pauses, the solo player's ``continue``), G-5 (seats and
reconnects), G-7 (rematch), G-8 (owner's pause/resume), G-9 (match start,
closing), NL-5 (bots fill seats).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cardhall.engine.base import Engine, Event, IllegalAction
from cardhall.engine.registry import engine_class
from cardhall.engine.rng import FairRandom, commitment, new_server_seed
from cardhall.engine.seats import next_seat
from cardhall.protocol.errors import ProtocolError
from cardhall.server.buffer import EventBuffer
from cardhall.server.clock import PausedClock, TurnClock
from cardhall.server.fanout import Fanout
from cardhall.server.mailbox import Mailbox
from cardhall.server.seating import Occupant, parse_seed
from cardhall.server.store.base import Checkpoint, StoreUnavailable
from cardhall.server.store.format import FORMAT_VERSION, hand_digest, pack_record

if TYPE_CHECKING:
    from cardhall.server.connection import Connection
    from cardhall.server.hall import Hall

log = logging.getLogger("cardhall.table")

Data = dict[str, Any]

WAITING, RUNNING, FINISHED, CLOSED, BROKEN = "waiting", "running", "finished", "closed", "broken"

#: ``act`` types the table handles itself; everything else is a game action.
SEAT_CONTROLS = {"continue", "sit_out", "sit_in", "show", "muck"}
OWNER_CONTROLS = {"start", "pause", "resume", "rematch"}
CONTROLS = SEAT_CONTROLS | OWNER_CONTROLS

_MAX_SETTLE = 10_000  # dealer steps in one go before a table is declared broken


@dataclass(slots=True)
class EventRecord:
    """An event with its ``seq``, the time of the input that caused it (wall
    clock, seconds), and, for the event that put a seat to act, the ``turn``
    (public) and the ``legal`` actions (only ``legal_seat`` sees them)."""

    seq: int
    event: Event
    ts: float
    turn: Data | None = None
    legal_seat: int | None = None
    legal: list[Data] | None = None


@dataclass(slots=True)
class _Join:
    conn: Connection
    viewer: int | None
    since: int | None
    re: Any
    older: list[EventRecord] | None = None  # missed events older than the buffer, read from the store
    before: Data | None = None  # the snapshot taken before this join started the match (sent first)


class Table:
    """One table: seats, lifecycle, clocks, the engine of the current match.

    Create with :meth:`create` (new) or :meth:`from_data` (restore), then
    :meth:`start_actor`. Other code talks to it only through :meth:`post`.
    """

    def __init__(self, hall: Hall, table_id: str, game: str, n_seats: int, table_options: Data,
                 game_options: Data, owner: str | None) -> None:
        self.hall = hall
        self.id = table_id
        self.game = game
        self.cls: type[Engine] = engine_class(game)
        self.n_seats = n_seats
        self.topts = table_options
        self.gopts = game_options
        self.owner = owner
        self.creator: str | None = None  # the address that created it without an owner (not kept in the state)
        self.status = WAITING
        self.paused = False
        self.match = 1
        self.server_seed = new_server_seed()
        self.seats: dict[int, Occupant] = {}
        self.engine: Engine | None = None
        self.seq = 0
        self.last_result: Data | None = None
        self.first_dealer: int | None = None  # of the current or last match (G-7)
        self.created = time.time()
        self.idle_since = time.monotonic()
        # turn state: id (seq of the event that began it), seat, kind
        self.turn_id: int | None = None
        self.turn_seat: int | None = None
        self.turn_kind: str | None = None  # "human", "bot", "auto", "continue"
        self.turn_legal: list[Data] | None = None  # legal actions of the current turn (as data)
        self.clock: TurnClock | PausedClock | None = None
        self.step_id: int | None = None  # a scheduled dealer step
        self._timer: asyncio.TimerHandle | None = None
        self._last_hand: str | None = None  # digest of the last hand recorded
        # actor plumbing
        self.mailbox: Mailbox[tuple[Any, ...]] = Mailbox()
        self.buffer: EventBuffer[EventRecord] = EventBuffer(hall.settings.event_buffer, self._record_from_data)
        self.fanout = Fanout(self)
        self._outbox: list[EventRecord] = []
        self._joins: list[_Join] = []
        self._replies: list[tuple[Connection, Data]] = []
        self._hands: list[Data] = []
        self._latencies: list[float] = []
        self._dirty = False
        self._ts = 0.0
        self._task: asyncio.Task[None] | None = None
        self._loop = asyncio.get_event_loop()
        self.stalled = False  # the store could not be written: see the module docstring
        self._deferred: list[tuple[Any, ...]] = []  # inputs held while stalled

    # ------------------------------------------------------------------ setup
    @classmethod
    def create(cls, hall: Hall, table_id: str, game: str, n_seats: int, table_options: Data,
               game_options: Data, owner: str | None, bots: list[str | None]) -> "Table":
        """A new table with ``bots`` (bot names, None for the game's default)
        in the last seats (NL-5). Raises ProtocolError ``bad_request``."""
        table = cls(hall, table_id, game, n_seats, table_options, game_options, owner)
        first = n_seats - len(bots) + 1
        for i, bot in enumerate(bots):
            seat = first + i
            table.seats[seat] = Occupant(seat, None, f"bot {seat}", bot=bot or _default_bot(game))
        table._dirty = True
        return table

    def start_actor(self) -> None:
        """Run the actor task; a table with every seat taken starts its match (G-9)."""
        self._task = self._loop.create_task(self._run(), name=f"table {self.id}")
        if self.status == WAITING and len(self.seats) == self.n_seats:
            self.post(("start_full",))
        elif self._dirty:
            self.post(("noop",))

    def stop(self) -> asyncio.Task[None]:
        """End the actor (the service is stopping): no input is taken after
        the one being applied; returns its task, to wait for."""
        self._cancel_timer()
        assert self._task is not None
        self._task.cancel()
        return self._task

    def post(self, item: tuple[Any, ...]) -> None:
        """Put an input in the mailbox (never blocks)."""
        self.mailbox.post(item)

    # ------------------------------------------------------------------ actor
    async def _run(self) -> None:
        mailbox = self.mailbox
        while True:
            for item in await mailbox.take():
                self._handle(item)
            if self._outbox or self._dirty or self._hands:
                checkpoint = self._checkpoint()
                try:
                    await self.hall.committer.commit(checkpoint)
                except StoreUnavailable as exc:
                    self._stall(checkpoint, exc)
                    continue
                except Exception:
                    log.exception("table %s: checkpoint failed; table out of service", self.id)
                    self._outbox.clear()
                    self._replies.clear()
                    self.status = BROKEN
                    self.hall.table_broken(self)
                    continue
                if self.stalled:
                    self._unstall()
                append = self.buffer.append
                for seq, blob in checkpoint.events:  # committed: kept for joins with since
                    append(seq, blob)
            if self._joins:
                await self._read_older_events()
            self._publish()
            if self.status == CLOSED:
                self.hall.table_closed(self)
                return

    def _handle(self, item: tuple[Any, ...]) -> None:
        kind = item[0]
        if self.stalled and kind != "disconnect":
            self._held(item)
            return
        if kind == "request":
            _, conn, msg, received = item
            mark = (len(self._outbox), self.seq, len(self._replies))
            try:
                if self.status in (CLOSED, BROKEN):
                    raise ProtocolError("table_closed" if self.status == CLOSED else "table_broken",
                                        f"table {self.id} is {self.status}")
                self._ts = time.time()
                self._request(conn, msg, received)
            except ProtocolError as exc:
                self._replies.append((conn, exc.frame(msg.get("id"))))
                self.hall.metrics.error(exc.code)
            except Exception:
                self._fault(mark, f"request {msg.get('type')!r}")
                self._replies.append((conn, ProtocolError("table_broken", "the table failed").frame(msg.get("id"))))
            return
        if self.status in (CLOSED, BROKEN):
            return
        mark = (len(self._outbox), self.seq, len(self._replies))
        self._ts = time.time()
        try:
            if kind == "disconnect":
                self._disconnect(item[1])
            elif kind == "bot":
                self._bot_turn(item[1], item[2])
            elif kind == "auto":
                self._auto_turn(item[1], item[2])
            elif kind == "clock":
                self._clock_expired(item[1], item[2])
            elif kind == "advance":
                self._paced_step(item[1])
            elif kind == "start_full":
                if self.status == WAITING and len(self.seats) == self.n_seats:
                    self._start_match()
            elif kind == "rematch":
                if self.status == FINISHED:
                    self._rematch()
            elif kind == "close":
                self._close(item[1])
            elif kind == "rearm":
                if self.status == RUNNING and not self.paused:
                    self._rearm()
                elif self.status == FINISHED:
                    self._schedule_rematch()
            elif kind in ("noop", "retry"):
                pass
        except Exception:
            self._fault(mark, kind)

    # ---------------------------------------------------------------- stalls
    def _held(self, item: tuple[Any, ...]) -> None:
        """An input while stalled: requests are refused (``unavailable``: the
        client retries), a close waits for the store, and the table's own
        timers are dropped (re-armed when the store answers)."""
        kind = item[0]
        if kind == "request":
            conn, msg = item[1], item[2]
            conn.send(ProtocolError("unavailable", "the table cannot save its state right now; retry shortly")
                      .frame(msg.get("id")))
            self.hall.metrics.error("unavailable")
        elif kind == "close":
            self._deferred.append(item)

    def _stall(self, checkpoint: Checkpoint, exc: StoreUnavailable) -> None:
        """The checkpoint was not written: keep everything it held for the
        next attempt, stop the clock and the timers."""
        self._dirty = True
        self._hands = checkpoint.hands + self._hands
        if self.stalled:
            return
        self.stalled = True
        if isinstance(self.clock, TurnClock):
            self.clock = self.clock.pause(self._loop.time())
        self._cancel_timer()
        log.debug("table %s stalled: %s", self.id, exc)
        self.hall.table_stalled(self, exc)

    def _unstall(self) -> None:
        """Everything held is written: take inputs again and re-arm the turn."""
        self.stalled = False
        self.hall.table_unstalled(self)
        self.post(("rearm",))
        for item in self._deferred:
            self.post(item)
        self._deferred.clear()

    def full_checkpoint(self) -> Checkpoint:
        """Everything this table holds: its state, every buffered event and the
        hands not yet written (to fill a store that lost its data)."""
        events = self.buffer.packed() + [(rec.seq, pack_record(rec.event, rec.ts, rec.turn)) for rec in self._outbox]
        return Checkpoint(self.id, self.to_data(), events, list(self._hands))

    def _fault(self, mark: tuple[int, int, int], what: str) -> None:
        """Contain a fault: drop the failed input's partial events, mark broken."""
        log.exception("table %s (%s) broke while handling %s", self.id, self.game, what)
        outbox_len, seq, replies = mark
        del self._outbox[outbox_len:]
        self.buffer.drop_after(seq)
        del self._replies[replies:]
        self.seq = seq
        self._cancel_timer()
        self.status = BROKEN
        self._dirty = True
        self._emit(Event({"type": "broken"}))
        self.hall.table_broken(self)

    # --------------------------------------------------------------- requests
    def _request(self, conn: Connection, msg: Data, received: float) -> None:
        kind = msg["type"]
        if kind == "join":
            self._join(conn, msg)
        elif kind == "leave":
            self._leave(conn, msg)
        elif kind == "act":
            self._act(conn, msg, received)
        else:  # the session routes only these three
            raise ProtocolError("unknown_type", f"unknown type {kind!r}")

    def seat_of(self, player_id: str) -> int | None:
        """The seat ``player_id`` holds here, or None (G-5: at most one)."""
        for seat, occ in self.seats.items():
            if occ.player == player_id:
                return seat
        return None

    def _join(self, conn: Connection, msg: Data) -> None:
        role = msg.get("role", "spectator")
        if role not in ("player", "spectator"):
            raise ProtocolError("bad_request", "role must be 'player' or 'spectator'")
        since = msg.get("since")
        if since is not None and (isinstance(since, bool) or not isinstance(since, int) or since < 0):
            raise ProtocolError("bad_request", "since must be a seq (integer >= 0)")
        player = conn.player
        assert player is not None
        viewer: int | None = None
        sat = False
        wanted = msg.get("seat")  # checked for spectators too: a bad field is refused, never ignored
        if wanted is not None and (isinstance(wanted, bool) or not isinstance(wanted, int)
                                   or not 1 <= wanted <= self.n_seats):
            raise ProtocolError("bad_request", f"seat must be 1..{self.n_seats}")
        try:
            seed = parse_seed(msg.get("seed"))
        except ValueError as exc:
            raise ProtocolError("bad_request", str(exc)) from None
        if role == "player":
            seat = self.seat_of(player.id)
            if seat is None:
                seat = self._sit(player.id, player.name, wanted, seed)
                sat = True
            elif wanted is not None and wanted != seat:
                raise ProtocolError("already_seated", f"you hold seat {seat} at this table (G-5)")
            elif seed and self.status in (WAITING, FINISHED):
                self.seats[seat].seed = seed
                self._dirty = True
            viewer = seat
        previous = self.fanout.subscribe(conn, viewer)
        conn.tables[self.id] = self
        if viewer is not None and previous != viewer and self.fanout.presence(viewer) == 1:
            self._emit(Event({"type": "presence", "seat": viewer, "connected": True}))
        join = _Join(conn, viewer, since, msg.get("id"))
        self._joins.append(join)
        self.idle_since = time.monotonic()
        if sat and self.status == WAITING and len(self.seats) == self.n_seats:
            # G-9: this join took the last seat. Its reply is the table before the
            # match (SPEC "Resuming": snapshot first), the match's events follow it.
            if since is None:
                join.before = self.snapshot(viewer, join.re)
            self._start_match()

    def _sit(self, player_id: str, name: str, wanted: int | None, seed: str) -> int:
        if self.status not in (WAITING, FINISHED):
            raise ProtocolError("match_running", "seats are taken between matches (G-9)")
        if wanted is not None:
            if wanted in self.seats:
                raise ProtocolError("seat_taken", f"seat {wanted} is taken")
            seat = wanted
        else:
            free = [s for s in range(1, self.n_seats + 1) if s not in self.seats]
            if not free:
                raise ProtocolError("table_full", "no free seat")
            seat = free[0]
        occ = Occupant(seat, player_id, name, seed=seed)
        self.seats[seat] = occ
        self._emit(Event({"type": "seated", **occ.public()}))
        return seat  # the caller starts the match when this took the last seat (G-9)

    def _leave(self, conn: Connection, msg: Data) -> None:
        if self.id not in conn.tables:
            raise ProtocolError("not_joined", f"not joined to table {self.id}")
        self._unsubscribe(conn)
        player = conn.player
        seat = self.seat_of(player.id) if player else None
        if seat is not None:
            self._release(seat)
        self._replies.append((conn, {"type": "ok", "re": msg.get("id")}))

    def _release(self, seat: int) -> None:
        """A player leaves: free the seat between matches, sit out during one (G-5)."""
        if self.status == RUNNING:
            occ = self.seats[seat]
            if not occ.sitting_out:
                occ.sitting_out = True
                self._emit(Event({"type": "sat_out", "seat": seat, "reason": "left"}))
                self._dirty = True
                if self.turn_seat == seat and self.turn_kind == "human" and not self.paused:
                    self._schedule_auto()
                self._stop_waiting_for(seat)
        else:
            del self.seats[seat]
            self._emit(Event({"type": "left", "seat": seat}))
            if self.turn_kind == "continue" and self.turn_seat == seat:
                self.turn_kind = None

    def _disconnect(self, conn: Connection) -> None:
        if self.id in conn.tables:
            self._unsubscribe(conn)

    def _unsubscribe(self, conn: Connection) -> None:
        viewer = self.fanout.unsubscribe(conn)
        conn.tables.pop(self.id, None)
        self._joins = [j for j in self._joins if j.conn is not conn]
        if viewer is not None and viewer in self.seats and self.fanout.presence(viewer) == 0:
            self._emit(Event({"type": "presence", "seat": viewer, "connected": False}))
            self._stop_waiting_for(viewer)
        if self.fanout.count == 0:
            self.idle_since = time.monotonic()

    # ------------------------------------------------------------------ acts
    def _act(self, conn: Connection, msg: Data, received: float) -> None:
        viewer = self.fanout.viewer(conn)
        if viewer is False:
            raise ProtocolError("not_joined", f"join table {self.id} first")
        action = msg.get("action")
        if not isinstance(action, Mapping) or not isinstance(action.get("type"), str) or len(action["type"]) > 32:
            raise ProtocolError("bad_request", "action must be a map with a string type")
        kind = action["type"]
        player = conn.player
        _check_action_shape(action)  # controls too: an ill-typed field is refused, never ignored
        turn = msg.get("turn")
        if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
            raise ProtocolError("bad_request", "turn must be the id of a turn (an integer)")
        if kind in OWNER_CONTROLS:
            self._owner_control(kind, conn, action, viewer)
        else:
            if viewer is None:
                raise ProtocolError("not_a_player", "spectators cannot act")
            self._check_turn_field(msg)
            if kind in SEAT_CONTROLS:
                self._seat_control(kind, viewer, action)
            else:
                self._game_action(viewer, action, received)
        assert player is not None
        self._replies.append((conn, {"type": "ok", "re": msg.get("id")}))

    def _check_turn_field(self, msg: Data) -> None:
        turn = msg.get("turn")
        if turn is None:
            return
        if isinstance(turn, bool) or not isinstance(turn, int):
            raise ProtocolError("bad_request", "turn must be the id of a turn (an integer)")
        if turn != self.turn_id:
            raise ProtocolError("stale_turn", f"turn {turn} has passed; the current turn is {self.turn_id}")

    def _require_running(self) -> Engine:
        if self.status != RUNNING or self.engine is None:
            raise ProtocolError("bad_state", f"no match is running (status {self.status})")
        if self.paused:
            raise ProtocolError("paused", "the owner paused the table (G-8)")
        return self.engine

    def _game_action(self, seat: int, action: Mapping[str, Any], received: float) -> None:
        engine = self._require_running()
        if self.turn_kind == "continue" or engine.to_act != seat:
            raise ProtocolError("not_your_turn", f"seat {engine.to_act} is to act" if engine.to_act else "nobody is to act")
        _check_action_shape(action)
        self._apply(seat, dict(action), received, voluntary=True)

    def _apply(self, seat: int, action: Data, received: float | None, voluntary: bool) -> None:
        """Apply ``seat``'s action; the turn ends only if the engine accepts it
        (an illegal action leaves the turn and its clock running)."""
        assert self.engine is not None
        try:
            events = self.engine.apply(seat, action)
        except IllegalAction as exc:
            extra: Data = {"reason": exc.code}
            if exc.rule:
                extra["rule"] = exc.rule
            raise ProtocolError("illegal_action", str(exc), **extra) from None
        self._end_turn(voluntary)
        self.hall.metrics.actions.inc()
        if received is not None:
            self._latencies.append(received)
        self._emit_all(events)
        self._settle()

    def _seat_control(self, kind: str, seat: int, action: Mapping[str, Any]) -> None:
        occ = self.seats[seat]
        if kind == "continue":
            self._require_running()
            if self.turn_kind != "continue" or self.turn_seat != seat:
                raise ProtocolError("bad_state", "the table is not waiting for continue")
            self.turn_kind = None
            self._advance()
        elif kind == "sit_out":
            if occ.sitting_out:
                raise ProtocolError("bad_state", "already sitting out")
            occ.sitting_out = True
            self._emit(Event({"type": "sat_out", "seat": seat, "reason": "player"}))
            if self.turn_seat == seat and self.turn_kind == "human" and not self.paused:
                self._schedule_auto()
            self._stop_waiting_for(seat)
        elif kind == "sit_in":
            if not occ.sitting_out:
                raise ProtocolError("bad_state", "not sitting out")
            occ.sitting_out = False
            occ.timeouts = 0
            self._emit(Event({"type": "sat_in", "seat": seat}))
        else:  # show, muck (FL-9)
            engine = self._require_running()
            try:
                events = engine.control(seat, {"type": kind})
            except IllegalAction as exc:
                raise ProtocolError("illegal_action", str(exc), reason=exc.code, **({"rule": exc.rule} if exc.rule else {})) from None
            self._emit_all(events)
            self._settle()
        self._dirty = True

    def _owner_control(self, kind: str, conn: Connection, action: Mapping[str, Any], viewer: int | None) -> None:
        player = conn.player
        assert player is not None
        is_owner = player.id == self.owner
        if kind == "rematch":
            seated_human = viewer is not None and self.seats.get(viewer) is not None
            if not (is_owner or seated_human):
                raise ProtocolError("not_owner", "the owner or a seated player may ask for the rematch")
            if self.status != FINISHED:
                raise ProtocolError("bad_state", "a rematch follows a finished match (G-7)")
            self._rematch()
            return
        if not is_owner:
            raise ProtocolError("not_owner", f"only the owner may {kind} (G-8, G-9)")
        if kind == "start":
            if self.status != WAITING:
                raise ProtocolError("bad_state", f"the table is {self.status}")
            if len(self.seats) < max(2, self.cls.min_seats):
                raise ProtocolError("bad_state", f"{self.game} needs at least {max(2, self.cls.min_seats)} players seated (G-9)")
            self._start_match()
        elif kind == "pause":
            self._require_running()
            self._pause()
        elif kind == "resume":
            if self.status != RUNNING or not self.paused:
                raise ProtocolError("bad_state", "the table is not paused")
            self._resume()

    # ------------------------------------------------------------ lifecycle
    def _start_match(self) -> None:
        """G-9 start: build the match's generator from the server seed and the
        client seeds in seat order (G-2), seat the bots, deal. ``match_started``
        carries the game options the match is played with
        (``Engine.match_options``, the first button or dealer filled in: public
        data, nothing about the deck or seed)."""
        seats = sorted(self.seats)
        seeds = [self.seats[s].seed.encode() for s in seats if self.seats[s].seed]
        rng = FairRandom(self.server_seed, seeds)
        options = dict(self.gopts)
        for key in ("button", "dealer"):  # G-7: the next match moves the button on
            if key in self.cls.default_options and key not in options and self.first_dealer in self.seats:
                options[key] = next_seat(seats, after=self.first_dealer) if self.match > 1 else None
        if options.get("button", 0) is None:
            del options["button"]
        if options.get("dealer", 0) is None:
            del options["dealer"]
        self.engine = self.cls.new(seats, options, rng)
        for occ in self.seats.values():
            occ.bank = float(self.topts["time_bank"])
            occ.timeouts = 0
            occ.sitting_out = False
            if occ.bot is not None:
                occ.start_bot(self.game, self.server_seed)
        self.status = RUNNING
        self.paused = False
        self._dirty = True
        events = self.engine.start()  # draws the first button or dealer (G-2): announced below
        view = self.engine.view(None)
        first = view.get("button", view.get("dealer"))
        self.first_dealer = first if isinstance(first, int) else None
        played = self.engine.match_options()
        for key in ("button", "dealer"):
            if key in played:
                played[key] = self.first_dealer
        self._emit(Event({
            "type": "match_started", "match": self.match, "commitment": commitment(self.server_seed),
            "seats": [self.seats[s].public() for s in seats],
            "client_seeds": {str(s): self.seats[s].seed for s in seats if self.seats[s].seed},
            "options": played,
        }))
        self._emit_all(events)
        self._settle()

    def _end_match(self) -> None:
        """Match over: result, the server seed revealed (G-2), the next match's
        commitment published, rematch offered (G-7)."""
        assert self.engine is not None
        self._cancel_timer()
        self.turn_id = self.turn_seat = self.turn_kind = None
        self.clock = None
        result = self.engine.result()
        revealed = self.server_seed
        self.server_seed = new_server_seed()
        self.status = FINISHED
        self.last_result = result
        self.idle_since = time.monotonic()
        self._dirty = True
        self._emit(Event({
            "type": "match_ended", "match": self.match, "result": result,
            "server_seed": revealed.hex(), "commitment": commitment(revealed),
            "client_seeds": {str(s): o.seed for s, o in sorted(self.seats.items()) if o.seed},
            "next_commitment": commitment(self.server_seed),
        }))
        self._schedule_rematch()

    def _schedule_rematch(self) -> None:
        """A finished bots-only table with ``auto_rematch`` starts the next match after its pause."""
        if self.topts["auto_rematch"] and all(not o.human for o in self.seats.values()):
            self._loop.call_later(float(self.topts["pause"]), self.post, ("rematch",))

    def _rematch(self) -> None:
        """G-7: same seats, next match; starts at once when every seat is taken."""
        self.match += 1
        self.engine = None
        self.status = WAITING
        self._dirty = True
        self._emit(Event({"type": "rematch", "match": self.match, "commitment": commitment(self.server_seed)}))
        if len(self.seats) == self.n_seats:
            self._start_match()

    def _pause(self) -> None:
        self.paused = True
        if isinstance(self.clock, TurnClock):
            self.clock = self.clock.pause(self._loop.time())
        self._cancel_timer()
        self._dirty = True
        self._emit(Event({"type": "paused"}))

    def _resume(self) -> None:
        """G-8 resume; the ``resumed`` event carries the open turn again (its
        clock restarted with the time that was left, and the legal actions for
        the seat to act), so clients need nothing else."""
        self.paused = False
        self._dirty = True
        rec = self._emit(Event({"type": "resumed"}))
        self._rearm()
        if self.turn_id is not None and rec.turn is None:
            rec.turn = self.turn_public()
            if self.turn_kind == "human":
                rec.legal_seat = self.turn_seat
                rec.legal = self.turn_legal

    def _rearm(self) -> None:
        """Schedule what the current turn or dealer step waits for (after a
        resume or a restore)."""
        if self.status != RUNNING or self.engine is None:
            return
        if self.turn_id is None:
            self._settle()
            return
        if self.turn_kind == "human":
            occ = self.seats[self.turn_seat]  # type: ignore[index]
            if occ.sitting_out:
                self._schedule_auto()
                return
            paused = self.clock if isinstance(self.clock, PausedClock) else PausedClock(float(self.topts["action_clock"]), occ.bank)
            self.clock = paused.resume(self._loop.time())
            self._timer = self._loop.call_at(self.clock.deadline, self.post, ("clock", self.turn_id, None))
        elif self.turn_kind == "bot":
            self._schedule(self._think_time(self.seats[self.turn_seat]), ("bot", self.turn_id, None))  # type: ignore[index]
        elif self.turn_kind == "auto":
            self._schedule_auto()

    def _close(self, reason: str) -> None:
        self._cancel_timer()
        self.status = CLOSED
        self._dirty = True
        self._emit(Event({"type": "closed", "reason": reason}))

    # ------------------------------------------------------- turns and steps
    def _settle(self) -> None:
        """After the engine changed: end the match, record a finished hand,
        begin the next turn, or take/schedule the next dealer step (G-4)."""
        for _ in range(_MAX_SETTLE):
            engine = self.engine
            assert engine is not None
            pending = engine.pending
            if pending == "hand" or engine.finished:
                self._record_hand()
            if engine.finished:
                self._end_match()
                return
            seat = engine.to_act
            if seat is not None:
                self._begin_turn(seat)
                return
            if pending is None:
                return
            if self.paused:
                return
            solo = self._solo_human()
            if solo is not None:
                self._begin_continue(solo)
                return
            pause = float(self.topts["pause"])
            if pause > 0:
                self.step_id = self.seq
                self._schedule(pause, ("advance", self.seq, None))
                return
            self._emit_all(engine.advance())
        raise RuntimeError(f"no decision after {_MAX_SETTLE} dealer steps")

    def _advance(self) -> None:
        assert self.engine is not None
        self.step_id = None
        self._emit_all(self.engine.advance())
        self._settle()

    def _paced_step(self, step_id: int) -> None:
        if self.status != RUNNING or self.paused or step_id != self.step_id:
            return
        self._advance()

    def _solo_human(self) -> int | None:
        """The seat of the table's only human, if exactly one human plays and
        is there to press ``continue`` (G-4): connected and not sitting out.
        A solo player who left or lost the connection is not waited for: the
        table goes on at its own pace and their turns run on the clock (G-3, G-5)."""
        humans = [s for s, o in self.seats.items() if o.human]
        if len(humans) != 1:
            return None
        seat = humans[0]
        return None if self.seats[seat].sitting_out or self.fanout.presence(seat) == 0 else seat

    def _stop_waiting_for(self, seat: int) -> None:
        """``seat`` can no longer press ``continue`` (left, sat out, disconnected):
        a table waiting for it goes on at its own pace (G-4, G-5). Not while the
        service shuts down: those disconnects are its own (clients reconnect after
        the restart and the table still waits for them)."""
        if not self.hall.accepting:
            return
        if self.status == RUNNING and self.turn_kind == "continue" and self.turn_seat == seat:
            self.turn_kind = None
            self._dirty = True
            self._settle()

    def _record_hand(self) -> None:
        assert self.engine is not None
        record = self.engine.hand_record()
        if record is None:
            return
        digest = hand_digest(record)
        if digest == self._last_hand:
            return
        self._last_hand = digest
        self._hands.append({"game": self.game, "match": self.match, "hand": record, "seq": self.seq})

    def _turn_event(self) -> EventRecord:
        """The record that puts a seat to act: the last event of this step, or a
        ``awaiting`` event when the step produced none."""
        if not self._outbox or self._outbox[-1].turn is not None or self._outbox[-1].seq == self.turn_id:
            self._emit(Event({"type": "awaiting"}))
        return self._outbox[-1]

    def _begin_turn(self, seat: int) -> None:
        engine = self.engine
        assert engine is not None
        occ = self.seats[seat]
        rec = self._turn_event()
        self.turn_id = rec.seq
        self.turn_seat = seat
        turn: Data = {"seat": seat, "id": rec.seq}
        if occ.bot is not None:
            self.turn_kind = "bot"
            self._schedule(self._think_time(occ), ("bot", rec.seq, None))
        elif occ.sitting_out:
            self.turn_kind = "auto"
            self._schedule_auto()
        else:
            self.turn_kind = "human"
            clock = float(self.topts["action_clock"])
            self.clock = TurnClock.begin(self._loop.time(), clock, occ.bank)
            turn["clock"] = clock
            turn["bank"] = round(occ.bank, 3)
            self._cancel_timer()
            self._timer = self._loop.call_at(self.clock.deadline, self.post, ("clock", rec.seq, None))
        rec.turn = turn
        rec.legal_seat = seat
        rec.legal = self.turn_legal = [a.to_data() for a in engine.legal_actions()]

    def _begin_continue(self, seat: int) -> None:
        rec = self._turn_event()
        self.turn_id = rec.seq
        self.turn_seat = seat
        self.turn_kind = "continue"
        rec.turn = {"seat": seat, "id": rec.seq, "continue": True}

    def _end_turn(self, voluntary: bool) -> None:
        """The current turn ends: bank used (G-3), timer cancelled."""
        self._cancel_timer()
        if self.turn_kind == "human" and isinstance(self.clock, TurnClock):
            occ = self.seats[self.turn_seat]  # type: ignore[index]
            occ.bank = self.clock.bank_after(self._loop.time())
            if voluntary:
                occ.timeouts = 0
        self.clock = None
        self.turn_id = self.turn_seat = self.turn_kind = None

    def _think_time(self, occ: Occupant) -> float:
        """A bot's pause before acting: ``bot_think`` on average, drawn uniformly
        in [0.5, 1.5] x ``bot_think`` from the bot's own generator (people do not
        act in lockstep either, and tables created together stay apart)."""
        think = float(self.topts["bot_think"])
        if think <= 0 or occ.brain is None:
            return think
        return think * (0.5 + occ.brain.rng.randbelow(1001) / 1000)

    def _schedule(self, delay: float, item: tuple[Any, ...]) -> None:
        if delay <= 0:
            self._loop.call_soon(self.post, (*item[:-1], time.perf_counter()))
        else:
            self._loop.call_later(delay, self._post_timed, item)

    def _post_timed(self, item: tuple[Any, ...]) -> None:
        self.post((*item[:-1], time.perf_counter()))

    def _schedule_auto(self) -> None:
        self._schedule(0, ("auto", self.turn_id, None))

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _bot_turn(self, turn_id: int, fired: float) -> None:
        if self.status != RUNNING or self.paused or turn_id != self.turn_id or self.turn_kind != "bot":
            return
        engine = self.engine
        assert engine is not None and self.turn_seat is not None
        seat = self.turn_seat
        occ = self.seats[seat]
        legal = self.turn_legal  # the state has not changed since the turn began
        if not legal:
            legal = [a.to_data() for a in engine.legal_actions()]
        assert occ.brain is not None
        action = occ.brain.choose(SeatView(engine, seat), legal)
        try:
            self._apply(seat, action, fired, voluntary=True)
        except ProtocolError as exc:  # a bot's mistake: play the timeout action instead
            log.warning("table %s: bot at seat %s chose %r: %s", self.id, seat, action, exc.message)
            self._apply(seat, engine.timeout_action(seat), fired, voluntary=True)

    def _auto_turn(self, turn_id: int, fired: float) -> None:
        """A sitting-out player's turn, played at once with the timeout action (G-3)."""
        if self.status != RUNNING or self.paused or turn_id != self.turn_id:
            return
        seat = self.turn_seat
        assert self.engine is not None and seat is not None
        self._end_turn(voluntary=False)
        self._apply(seat, self.engine.timeout_action(seat), fired, voluntary=False)

    def _clock_expired(self, turn_id: int, fired: float | None) -> None:
        """G-3: the timeout action; a second timeout in a row sits the player out."""
        if self.status != RUNNING or self.paused or turn_id != self.turn_id or self.turn_kind != "human":
            return
        seat = self.turn_seat
        assert self.engine is not None and seat is not None
        occ = self.seats[seat]
        self._timer = None
        self._end_turn(voluntary=False)
        occ.bank = 0.0
        occ.timeouts += 1
        action = self.engine.timeout_action(seat)
        self._emit(Event({"type": "timeout", "seat": seat, "action": action}))
        if occ.timeouts >= 2 and not occ.sitting_out:
            occ.sitting_out = True
            self._emit(Event({"type": "sat_out", "seat": seat, "reason": "timeouts"}))
        self._apply(seat, action, None, voluntary=False)

    # ----------------------------------------------------------- emit/commit
    def _emit(self, event: Event) -> EventRecord:
        self.seq += 1
        rec = EventRecord(self.seq, event, self._ts)
        self._outbox.append(rec)
        return rec

    def _emit_all(self, events: list[Event]) -> None:
        for event in events:
            self._emit(event)

    def _checkpoint(self) -> Checkpoint:
        records = list(self._outbox)
        hands, self._hands = self._hands, []
        self._dirty = False
        return Checkpoint(self.id, lambda: self.to_data(shared=True),
                          lambda: [(rec.seq, pack_record(rec.event, rec.ts, rec.turn)) for rec in records], hands)

    def _publish(self) -> None:
        records = self._outbox
        if records:
            self._outbox = []
            pending = {j.conn for j in self._joins}
            self.fanout.publish(records, skip=pending)
            metrics = self.hall.metrics
            metrics.events.inc(len(records))
            if self._latencies:
                now = time.perf_counter()
                for started in self._latencies:
                    metrics.latency.observe(now - started)
                self._latencies.clear()
        if self._joins:
            joins, self._joins = self._joins, []
            for join in joins:
                self._answer_join(join, records)
                join.conn.flush()
        if self._replies:
            replies, self._replies = self._replies, []
            for conn, frame in replies:
                conn.send(frame)
            for conn, _ in replies:
                conn.flush()

    def _answer_join(self, join: _Join, published: list[EventRecord]) -> None:
        """``since`` within the buffer: the missed events then ``ok``; else a
        snapshot. A join that started the match gets the snapshot taken before
        it, then the events after that snapshot's ``seq`` (they are all among
        ``published``, the records committed and published with this join)."""
        conn = join.conn
        if self.fanout.viewer(conn) is False:
            return
        if join.before is not None:
            conn.send(join.before)
            after = [rec for rec in published if rec.seq > join.before["seq"]]
            self.fanout.replay(conn, join.viewer, after, current_turn=self.turn_id)
            return
        since = join.since
        if since is not None and since <= self.seq:
            first = self.buffer.first_seq
            if since == self.seq or (first is not None and first <= since + 1) or join.older is not None:
                missed = self.buffer.since(since)
                if join.older:
                    missed = join.older + missed
                self.fanout.replay(conn, join.viewer, missed, current_turn=self.turn_id)
                conn.send({"type": "ok", "re": join.re, "seq": self.seq})
                return
        conn.send(self.snapshot(join.viewer, join.re))

    async def _read_older_events(self) -> None:
        """Joins with a ``since`` older than the buffer (a restart empties it;
        it is bounded) get the missing events from the store's stream, when it
        still holds them all; otherwise they get a snapshot."""
        first = self.buffer.first_seq
        if first is None:
            first = self.seq + 1
        wanting = [j for j in self._joins if j.since is not None and j.since + 1 < first and j.since < self.seq]
        if not wanting:
            return
        since = min(j.since for j in wanting)  # type: ignore[type-var]
        try:
            stored = await self.hall.store.events_since(self.id, since, first - 1)
        except Exception as exc:
            log.warning("table %s: stored events after seq %s unreadable (%s); sending snapshots", self.id, since, exc)
            return
        if stored is None:
            return
        records = [self._record_from_data(seq, data) for seq, data in stored]
        for join in wanting:
            join.older = [rec for rec in records if rec.seq > join.since]  # type: ignore[operator]

    def _record_from_data(self, seq: int, data: Data) -> EventRecord:
        """An :class:`EventRecord` from its stored record (:func:`~cardhall.server.store.format.pack_record`,
        unpacked from the event buffer or a store); the current turn's event carries its
        legal actions again (a past turn's are not kept: nobody is sent them)."""
        turn = data.get("turn")
        rec = EventRecord(seq, Event.from_data(data), data.get("ts", 0.0), turn)
        if turn is not None and not turn.get("continue"):
            rec.legal_seat = turn.get("seat")
        if seq == self.turn_id and self.turn_kind == "human":
            rec.legal_seat = self.turn_seat
            rec.legal = self.turn_legal
        return rec

    # ------------------------------------------------------------ questions
    def snapshot(self, viewer: int | None, re: Any = None) -> Data:
        """The ``snapshot`` frame for ``viewer`` (a seat or None)."""
        out: Data = {
            "type": "snapshot", "table": self.id, "seq": self.seq, "you": viewer,
            "info": self.info(), "state": self.engine.view(viewer) if self.engine is not None else None,
        }
        if re is not None:
            out["re"] = re
        turn = self.turn_public()
        if turn is not None:
            out["turn"] = turn
            if viewer is not None and viewer == self.turn_seat and self.turn_kind == "human" and self.engine is not None:
                out["legal"] = [a.to_data() for a in self.engine.legal_actions()]
        return out

    @property
    def clock_running(self) -> bool:
        """A player's action clock or time bank is running now (G-3)."""
        return isinstance(self.clock, TurnClock)

    def turn_public(self) -> Data | None:
        """The current turn as everyone may see it, clocks as seconds left."""
        if self.turn_id is None:
            return None
        turn: Data = {"seat": self.turn_seat, "id": self.turn_id}
        if self.turn_kind == "continue":
            turn["continue"] = True
        elif self.turn_kind == "human" and self.clock is not None:
            clock = self.clock.pause(self._loop.time()) if isinstance(self.clock, TurnClock) else self.clock
            turn["clock"] = round(clock.clock, 3)
            turn["bank"] = round(clock.bank, 3)
        return turn

    def info(self) -> Data:
        """Public metadata: the lobby entry plus seats and the match's commitment."""
        return {
            **self.lobby_entry(),
            "occupants": [self.seats[s].public() | {"connected": (not self.seats[s].human) or self.fanout.presence(s) > 0}
                          for s in sorted(self.seats)],
            "commitment": commitment(self.server_seed),
            "match": self.match,
            "paused": self.paused,
            "result": self.last_result,
        }

    def lobby_entry(self) -> Data:
        """``GET /api/tables`` entry: id, game, seats taken and total, spectators, status, options."""
        status = "paused" if self.paused and self.status == RUNNING else self.status
        return {
            "id": self.id, "game": self.game, "seats": self.n_seats, "taken": len(self.seats),
            "spectators": self.fanout.spectators, "status": status, "owner": self.owner,
            "options": {**self.topts, **self.gopts},
        }

    # ------------------------------------------------------------ plain data
    def to_data(self, shared: bool = False) -> Data:
        """Everything about the table as plain data (clocks as seconds left);
        with :meth:`from_data`, a table moves to another process. ``shared``:
        the engine's part is its ``state_data()`` (lists shared with the live
        engine: for a checkpoint packed before the table changes again)."""
        turn = None
        if self.turn_id is not None:
            turn = {"id": self.turn_id, "seat": self.turn_seat, "kind": self.turn_kind}
            if self.clock is not None:
                clock = self.clock.pause(self._loop.time()) if isinstance(self.clock, TurnClock) else self.clock
                turn["clock"], turn["bank"] = clock.clock, clock.bank
        return {
            "v": FORMAT_VERSION, "id": self.id, "game": self.game, "seats": self.n_seats,
            "table_options": self.topts, "game_options": self.gopts, "owner": self.owner,
            "status": self.status, "paused": self.paused, "match": self.match,
            "server_seed": self.server_seed.hex(), "seq": self.seq, "created": self.created,
            "occupants": [o.to_data() for _, o in sorted(self.seats.items())],
            "engine": (self.engine.state_data() if shared else self.engine.to_data()) if self.engine is not None else None,
            "turn": turn, "step": self.step_id, "last_result": self.last_result,
            "last_hand_digest": self._last_hand, "first_dealer": self.first_dealer,
        }

    @classmethod
    def from_data(cls, hall: Hall, data: Data) -> "Table":
        """Rebuild a table from :meth:`to_data` (its clocks resume with the time
        that was left when :meth:`start_actor` runs); ValueError on a bad version."""
        if data.get("v") != FORMAT_VERSION:
            raise ValueError(f"table state version {data.get('v')!r} is not {FORMAT_VERSION}")
        table = cls(hall, data["id"], data["game"], data["seats"], data["table_options"],
                    data["game_options"], data["owner"])
        table.status = data["status"]
        table.paused = data["paused"]
        table.match = data["match"]
        table.server_seed = bytes.fromhex(data["server_seed"])
        table.seq = data["seq"]
        table.created = data["created"]
        table.last_result = data["last_result"]
        table._last_hand = data.get("last_hand_digest")
        table.first_dealer = data.get("first_dealer")
        for od in data["occupants"]:
            occ = Occupant.from_data(od)
            if occ.bot is not None:
                occ.resume_bot(table.game)
            table.seats[occ.seat] = occ
        if data["engine"] is not None:
            table.engine = table.cls.from_data(data["engine"])
        turn = data["turn"]
        if turn is not None:
            table.turn_id, table.turn_seat, table.turn_kind = turn["id"], turn["seat"], turn["kind"]
            if "clock" in turn:
                table.clock = PausedClock(turn["clock"], turn["bank"])
            if table.engine is not None and table.engine.to_act is not None and table.turn_kind != "continue":
                table.turn_legal = [a.to_data() for a in table.engine.legal_actions()]
        table.step_id = data["step"]
        return table

    def restore(self) -> None:
        """After :meth:`from_data`: re-arm clocks, bots, paced steps and the
        automatic rematch; a human's clock resumes with the time it had left
        at the checkpoint."""
        if self.status == FINISHED:
            self._schedule_rematch()
        if self.status != RUNNING or self.paused:
            return
        if self.step_id is not None and self.turn_id is None:
            self._schedule(float(self.topts["pause"]), ("advance", self.step_id, None))
            self.post(("noop",))
            return
        self._loop.call_soon(self._rearm)


class SeatView(Mapping[str, Any]):
    """``engine.view(seat)``, computed when a bot first reads it: a strategy
    that decides from the legal actions alone (``random``) never pays for the
    view (at full speed it was ~18 % of the server's CPU). The engine does not
    change while the bot decides, so the view is the one of its turn.

    >>> from cardhall.engine.registry import engine_class
    >>> from cardhall.engine.base import test_rng
    >>> engine = engine_class("no_limit_holdem").new([1, 2], {}, test_rng("doc"))
    >>> _ = engine.start()
    >>> view = SeatView(engine, 1)
    >>> view._data is None
    True
    >>> dict(view) == engine.view(1) and view._data is not None
    True
    """

    __slots__ = ("_engine", "_seat", "_data")

    def __init__(self, engine: Engine, seat: int) -> None:
        self._engine = engine
        self._seat = seat
        self._data: Data | None = None

    def _view(self) -> Data:
        data = self._data
        if data is None:
            data = self._data = self._engine.view(self._seat)
        return data

    def __getitem__(self, key: str) -> Any:
        return self._view()[key]

    def __iter__(self) -> Any:
        return iter(self._view())

    def __len__(self) -> int:
        return len(self._view())

    def __contains__(self, key: object) -> bool:
        return key in self._view()

    def get(self, key: str, default: Any = None) -> Any:
        return self._view().get(key, default)


def _default_bot(game: str) -> str:
    from cardhall.engine.bots.registry import DEFAULT

    return DEFAULT[game]


def _check_action_shape(action: Mapping[str, Any]) -> None:
    """Amounts are integers and card lists are lists of strings in every game;
    anything else is refused before it reaches an engine."""
    for key, value in action.items():
        if not isinstance(key, str):
            raise ProtocolError("bad_request", "action fields are named by strings")
        if key in ("amount", "count") and (isinstance(value, bool) or not isinstance(value, int)):
            raise ProtocolError("bad_request", f"{key} must be an integer")
        if key == "cards" and (not isinstance(value, list) or not all(isinstance(c, str) for c in value)):
            raise ProtocolError("bad_request", "cards must be a list of card strings")
        if key in ("rank",) and not isinstance(value, (str, int)):
            raise ProtocolError("bad_request", "rank must be a string")
