"""A table machine driven by hand: a fake clock, a counting entropy source,
and the owner's duties done in a few lines (no sockets, no sleeps, no asyncio).

:class:`Bench` feeds inputs to a :class:`TableMachine` at a time it controls,
keeps the armed timer (a step's :class:`Timer` replaces it, :data:`CANCEL`
empties it) and takes the outputs after each step as if they were written:
the delivered records, replies and join answers are kept for the test to
look at. Time moves only when the test says so (:meth:`Bench.wait`) or when
it fires the armed timer (:meth:`Bench.fire`, at the timer's time).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from typing import Any

from cardhall.server.options import split_options
from cardhall.server.table.inputs import Act, Disconnect, Input, Join, Leave, Now
from cardhall.server.table.machine import TableMachine
from cardhall.server.table.outputs import Effects, JoinAnswer, NoTimer, Outputs, Timer
from cardhall.server.table.records import EventRecord

Data = dict[str, Any]

#: options that keep a test's table quick: no pacing, bots act at once
QUICK = {"pause": 0, "bot_think": 0}


class Seeds:
    """A deterministic entropy source: seed n is 32 bytes of SHA-256("seed n")."""

    def __init__(self) -> None:
        self.drawn: list[bytes] = []

    def __call__(self) -> bytes:
        seed = hashlib.sha256(f"seed {len(self.drawn)}".encode()).digest()
        self.drawn.append(seed)
        return seed


class Bench:
    """One machine at a fake time (see the module docstring). ``owner`` owns
    the table; ``bots``: bot names for the last seats (None: the default bot)."""

    def __init__(self, game: str = "loco_poker", seats: int = 2, bots: list[str | None] | None = None,
                 options: Data | None = None, owner: str = "p_owner") -> None:
        self.mono = 1000.0
        self.wall = 1_700_000_000.0
        self.seeds = Seeds()
        table_opts, game_opts = split_options({**QUICK, **(options or {})})
        self.m = TableMachine.create("t_test", game, seats, table_opts, game_opts, owner, list(bots or []),
                                     self.now(), entropy=self.seeds)
        self.timer: Timer | None = None
        self.records: list[EventRecord] = []
        self.replies: list[tuple[Hashable, Data]] = []
        self.joins: list[JoinAnswer] = []
        self.effects = Effects()
        self.out = self.m.take()

    # -- time ----------------------------------------------------------------------
    def now(self) -> Now:
        return Now(self.wall + self.mono, self.mono)

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass (nothing fires by itself)."""
        self.mono += seconds

    # -- feeding -------------------------------------------------------------------
    def step(self, *inputs: Input, deliver: bool = True) -> Effects:
        """Feed ``inputs`` now; keep the timer; take the outputs as written
        (``deliver=False``: leave them pending, as while a commit is awaited)."""
        effects = self.effects = self.m.step(inputs, self.now())
        if isinstance(effects.timer, Timer):
            self.timer = effects.timer
        elif isinstance(effects.timer, NoTimer):
            self.timer = None
        if deliver:
            self.deliver()
        return effects

    def deliver(self) -> Outputs:
        out = self.out = self.m.take()
        self.records += out.records
        self.replies += [(r.sub, dict(r.frame)) for r in out.replies]
        self.joins += out.joins
        return out

    def fire(self) -> Effects:
        """The armed timer is due: time moves to it and its input is fed."""
        assert self.timer is not None, "no timer is armed"
        timer, self.timer = self.timer, None
        self.mono = max(self.mono, timer.at)
        return self.step(timer.due)

    def run(self, until: str | None = None, limit: int = 2000, clocks: bool = False) -> None:
        """Fire timers (bots, automatic turns, steps; ``clocks``: people's
        clocks too) until none is armed, a person is to act, or an event of
        type ``until`` was delivered."""
        for _ in range(limit):
            if until is not None and any(r.event.type == until for r in self.records):
                return
            if self.timer is None or (type(self.timer.due).__name__ == "ClockDue" and not clocks):
                return
            self.fire()
        raise AssertionError("the table never settled")

    # -- requests --------------------------------------------------------------------
    def join(self, sub: Hashable, player: str, name: str | None = None, **fields: Any) -> Data | JoinAnswer:
        """``join`` from ``sub``: its error frame, or its join answer."""
        joins, replies = len(self.joins), len(self.replies)
        self.step(Join(sub, player, name or player, f"j{len(self.replies)}", **fields))
        if len(self.replies) > replies:
            return self.replies[-1][1]
        assert len(self.joins) > joins, "the join was neither answered nor refused"
        return self.joins[-1]

    def act(self, sub: Hashable, player: str, action: Any, turn: Any = None, received: float | None = None) -> Data:
        """``act`` from ``sub``: its reply frame (``ok`` or ``error``)."""
        replies = len(self.replies)
        self.step(Act(sub, player, f"a{replies}", action, turn, received))
        assert len(self.replies) == replies + 1, self.replies[replies:]
        return self.replies[-1][1]

    def leave(self, sub: Hashable, player: str) -> Data:
        replies = len(self.replies)
        self.step(Leave(sub, player, "leave"))
        return self.replies[replies][1]

    def disconnect(self, sub: Hashable) -> None:
        self.step(Disconnect(sub))

    # -- looking ---------------------------------------------------------------------
    def types(self, since: int = 0) -> list[str]:
        """Types of the events delivered with ``seq > since``."""
        return [r.event.type for r in self.records if r.seq > since]

    def last(self, kind: str) -> EventRecord:
        return next(r for r in reversed(self.records) if r.event.type == kind)

    def check_gap_free(self) -> None:
        assert [r.seq for r in self.records] == list(range(1, len(self.records) + 1))


def code(frame: Data | JoinAnswer) -> str:
    """The error code of a reply, or its type (``ok``) / ``join`` for a join answer."""
    if isinstance(frame, JoinAnswer):
        return "join"
    return frame.get("code") or frame["type"]


def two_players(game: str = "loco_poker", options: Data | None = None, seats: int = 2) -> Bench:
    """A running two-person table: ``ann`` (subscriber "a") in seat 1, ``bob`` ("b") in seat 2."""
    bench = Bench(game, seats=seats, options=options)
    bench.join("a", "ann", role="player", seat=1)
    bench.join("b", "bob", role="player", seat=2)
    assert bench.m.status == "running"
    return bench


#: subscriber and player of each seat in :func:`two_players`
SEATS = {1: ("a", "ann"), 2: ("b", "bob")}


def to_act(bench: Bench) -> tuple[int, str, str]:
    """``(seat, subscriber, player)`` of the person to act."""
    seat = bench.m.turn_seat
    assert seat is not None and bench.m.turn_kind == "human", (seat, bench.m.turn_kind)
    sub, player = SEATS[seat]
    return seat, sub, player


def play_out(bench: Bench, until: str = "match_ended", limit: int = 20_000,
             stop: Callable[[TableMachine], bool] | None = None) -> None:
    """Play until an event of type ``until`` (or until ``stop(machine)``):
    people go all in or call (else the first legal action), the solo player
    continues, timers fire."""
    for _ in range(limit):
        if stop(bench.m) if stop is not None else any(r.event.type == until for r in bench.records):
            return
        m = bench.m
        if m.turn_kind in ("human", "continue") and m.turn_seat in SEATS:
            sub, player = SEATS[m.turn_seat]
            if m.turn_kind == "continue":
                action: Data = {"type": "continue"}
            else:
                legal = {a["type"] for a in m.turn_legal or []}
                kind = next((k for k in ("all_in", "call", "check") if k in legal), None)
                action = {"type": kind or sorted(legal)[0]}
            assert code(bench.act(sub, player, action, turn=m.turn_id)) == "ok"
        else:
            bench.fire()
    raise AssertionError(f"no {until} after {limit} steps")
