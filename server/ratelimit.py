"""Token-bucket rate limiting of a connection's frames (SPEC "Limits").

>>> b = TokenBucket(rate=2.0, burst=2.0, now=0.0)
>>> [b.take(0.0), b.take(0.0), b.take(0.0), b.take(0.6)]
[True, True, False, True]
"""

from __future__ import annotations


class TokenBucket:
    """``rate`` tokens per second up to ``burst``; each frame takes one."""

    __slots__ = ("rate", "burst", "tokens", "stamp")

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = now

    def take(self, now: float) -> bool:
        """True if a frame arriving at ``now`` (seconds) is within the limit."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False
