"""Latency histograms with logarithmic buckets, small enough to send between processes.

A bucket spans 1 % (bucket ``i`` holds latencies in ``[L * 1.01**i, L * 1.01**(i+1))``
with ``L`` = 10 microseconds), so a quantile read from it is within 1 % of the
exact one; 2,000 buckets reach ~ 7 minutes. Negative values (clock steps) count
in the first bucket.

>>> h = LatencyHistogram()
>>> for ms in range(1, 101):
...     h.add(ms / 1000)
>>> round(h.quantile(0.5) * 1000), round(h.quantile(0.99) * 1000), h.count
(50, 99, 100)
>>> g = LatencyHistogram(); g.add(0.2); h.merge(g); round(h.quantile(1.0) * 1000)
200
>>> h.over(0.1)
1
"""

from __future__ import annotations

import math
from array import array

_LOW = 1e-5  # seconds: the lower edge of bucket 0
_RATIO = 1.01
_LOG_RATIO = math.log(_RATIO)
_BUCKETS = 2000


class LatencyHistogram:
    """Counts of latencies (seconds) per 1 % bucket."""

    __slots__ = ("counts", "count")

    def __init__(self) -> None:
        self.counts = array("Q", bytes(8 * _BUCKETS))
        self.count = 0

    def add(self, seconds: float) -> None:
        """Count one latency of ``seconds``."""
        if seconds <= _LOW:
            index = 0
        else:
            index = int(math.log(seconds / _LOW) / _LOG_RATIO)
            if index >= _BUCKETS:
                index = _BUCKETS - 1
        self.counts[index] += 1
        self.count += 1

    def merge(self, other: LatencyHistogram) -> None:
        """Add ``other``'s counts to this one."""
        counts = self.counts
        for i, n in enumerate(other.counts):
            if n:
                counts[i] += n
        self.count += other.count

    def quantile(self, q: float) -> float:
        """The latency (seconds, a bucket's midpoint) below which a fraction ``q``
        of the counted latencies lie; 0.0 when nothing was counted."""
        if not self.count:
            return 0.0
        rank = max(1, math.ceil(q * self.count))
        seen = 0
        for i, n in enumerate(self.counts):
            seen += n
            if seen >= rank:
                return _LOW * _RATIO ** (i + 0.5)
        return _LOW * _RATIO ** _BUCKETS

    def over(self, seconds: float) -> int:
        """How many counted latencies lie above ``seconds`` (to the bucket: 1 %)."""
        if seconds <= _LOW:
            return self.count
        first = int(math.log(seconds / _LOW) / _LOG_RATIO) + 1
        return sum(self.counts[first:])

    def __getstate__(self) -> tuple[bytes, int]:
        return self.counts.tobytes(), self.count

    def __setstate__(self, state: tuple[bytes, int]) -> None:
        self.counts = array("Q")
        self.counts.frombytes(state[0])
        self.count = state[1]
