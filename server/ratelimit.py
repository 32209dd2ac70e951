"""Token-bucket rate limiting: a connection's frames, and budgets per client address (SPEC "Limits").

>>> b = TokenBucket(rate=2.0, burst=2.0, now=0.0)
>>> [b.take(0.0), b.take(0.0), b.take(0.0), b.take(0.6)]
[True, True, False, True]
>>> turns = TurnCredit()
>>> [turns.take("t_1", 8, latest=9), turns.take("t_1", 8, latest=9), turns.take("t_1", 12, latest=9)]
[True, False, False]
>>> per = AddressBudget(count=2, window=10.0)
>>> [per.take("a", 0.0), per.take("a", 0.0), per.take("a", 0.0), per.take("b", 0.0), per.take("a", 5.0)]
[True, True, False, True, True]
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

    def full(self, now: float) -> bool:
        """True if the bucket would hold ``burst`` tokens at ``now`` (it is then
        the same as a new one, so it need not be kept)."""
        return self.tokens + (now - self.stamp) * self.rate >= self.burst


class TurnCredit:
    """The turns a connection has answered, per table: the first ``act`` that
    names a turn newer than any it named before at that table, and not newer
    than the table's latest event (a turn's id is the ``seq`` of the event that
    began it, SPEC "Server messages"), is free of the frame rate limit. So a
    client answering each of its turns is never refused however fast the
    table plays (bots with no think time, SPEC "Limits"), while a flood is
    still counted: free acts are bounded by the table's own events. At most
    :attr:`TABLES` tables are remembered (a connection joins few)."""

    __slots__ = ("_last",)

    #: tables remembered; past it the oldest is forgotten (its next act is counted, or free once more)
    TABLES = 64

    def __init__(self) -> None:
        self._last: dict[str, int] = {}

    def take(self, table: str, turn: object, latest: int | None) -> bool:
        """True (and remembered) when ``turn`` (the act's ``turn`` field) is an
        integer newer than the last free one at ``table`` and at most ``latest``
        (the table's newest ``seq`` this node knows; None: unknown, never free)."""
        if latest is None or not isinstance(turn, int) or isinstance(turn, bool) or turn > latest:
            return False
        last = self._last.get(table)
        if last is not None and turn <= last:
            return False
        if last is None and len(self._last) >= self.TABLES:
            del self._last[next(iter(self._last))]
        self._last[table] = turn
        return True


class AddressBudget:
    """At most ``count`` uses per ``window`` seconds per key (a client
    address): one :class:`TokenBucket` per address, ``count`` deep, refilled
    at ``count / window`` per second, in this process's memory (each node of
    a cluster keeps its own). Memory stays bounded by the addresses seen
    within about a window: buckets that have refilled are dropped whenever
    the map has doubled since the last pruning."""

    __slots__ = ("count", "window", "_buckets", "_prune_at")

    def __init__(self, count: int, window: float) -> None:
        if count < 1 or window <= 0:
            raise ValueError("an address budget needs count >= 1 and window > 0")
        self.count = count
        self.window = window
        self._buckets: dict[str, TokenBucket] = {}
        self._prune_at = 1024

    def take(self, key: str, now: float) -> bool:
        """True if ``key`` may use one more now (``now``: monotonic seconds); False past its budget."""
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self._prune_at:
                self._prune(now)
            bucket = self._buckets[key] = TokenBucket(self.count / self.window, float(self.count), now)
        return bucket.take(now)

    def wait(self, key: str, now: float) -> float:
        """Seconds from ``now`` (monotonic seconds) until ``key`` may use one
        more (0.0: it may now); asking uses nothing.

        >>> budget = AddressBudget(count=2, window=8.0)
        >>> [budget.wait("a", 0.0), budget.take("a", 0.0), budget.take("a", 0.0)]
        [0.0, True, True]
        >>> [budget.wait("a", 0.0), budget.wait("a", 2.0), budget.wait("a", 4.0)]
        [4.0, 2.0, 0.0]
        """
        bucket = self._buckets.get(key)
        if bucket is None:
            return 0.0
        tokens = min(bucket.burst, bucket.tokens + (now - bucket.stamp) * bucket.rate)
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / bucket.rate

    def give(self, key: str, now: float) -> None:
        """Give ``key`` back one use it took (``now``: monotonic seconds): a
        use that turned out not to count (a right password, SPEC "Limits").
        Never past the budget; a key holding all its uses is forgotten.

        >>> budget = AddressBudget(count=2, window=8.0)
        >>> [budget.take("a", 0.0), budget.take("a", 0.0), budget.wait("a", 0.0)]
        [True, True, 4.0]
        >>> budget.give("a", 0.0); budget.wait("a", 0.0), len(budget)
        (0.0, 1)
        >>> budget.give("a", 0.0); len(budget)
        0
        """
        bucket = self._buckets.get(key)
        if bucket is None:
            return
        bucket.tokens = min(bucket.burst, bucket.tokens + (now - bucket.stamp) * bucket.rate + 1.0)
        bucket.stamp = now
        if bucket.full(now):
            del self._buckets[key]

    def __len__(self) -> int:
        return len(self._buckets)

    def _prune(self, now: float) -> None:
        self._buckets = {k: b for k, b in self._buckets.items() if not b.full(now)}
        self._prune_at = max(1024, 2 * len(self._buckets))
