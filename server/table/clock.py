"""The action clock and time bank of one turn (RULES G-3), as plain arithmetic.

A turn gets ``action_clock`` seconds, then the seat's time bank. Times are
monotonic seconds passed in by the caller (the table machine's ``now``); the
machine asks for a timer at the deadline, and the engines never see a clock.

>>> c = TurnClock.begin(now=100.0, action_clock=30.0, bank=60.0)
>>> c.deadline
190.0
>>> c.bank_after(now=145.0)   # 15 s of the bank used
45.0
>>> c.pause(now=120.0).remaining
70.0
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TurnClock:
    """One running turn: it began at ``started`` (monotonic seconds) with
    ``clock`` seconds of action clock left and ``bank`` seconds of time bank."""

    started: float
    clock: float
    bank: float

    @classmethod
    def begin(cls, now: float, action_clock: float, bank: float) -> TurnClock:
        """A turn starting at ``now`` with ``action_clock`` then ``bank`` seconds."""
        return cls(now, action_clock, bank)

    @property
    def deadline(self) -> float:
        """When the turn times out (monotonic seconds)."""
        return self.started + self.clock + self.bank

    def bank_after(self, now: float) -> float:
        """The time bank left if the player acts at ``now`` (G-3: the bank is
        used only after the action clock runs out)."""
        over = (now - self.started) - self.clock
        return self.bank if over <= 0 else max(0.0, self.bank - over)

    def pause(self, now: float) -> PausedClock:
        """The clock stopped at ``now`` (G-8 pause, or a checkpoint)."""
        used = max(0.0, now - self.started)
        clock_left = max(0.0, self.clock - used)
        bank_left = self.bank_after(now)
        return PausedClock(clock_left, bank_left)


@dataclass(frozen=True, slots=True)
class PausedClock:
    """A stopped turn: ``clock`` and ``bank`` seconds left."""

    clock: float
    bank: float

    @property
    def remaining(self) -> float:
        """Seconds left in all: action clock then time bank."""
        return self.clock + self.bank

    def resume(self, now: float) -> TurnClock:
        """The clock running again from ``now`` with the time it had left (G-8)."""
        return TurnClock(now, self.clock, self.bank)
