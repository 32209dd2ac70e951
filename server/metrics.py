"""Prometheus metrics of one service instance (``GET /metrics``).

Each app has its own registry (tests run several apps in one process). The
process collector gives ``process_resident_memory_bytes``, which the
benchmarks and load tests read.

The counters and histograms updated for every action, event, websocket
message and commit are plain numbers (:class:`HotCounter`,
:class:`HotHistogram`) read by a collector when ``/metrics`` is scraped:
prometheus-client's own take a lock on every update, a cost paid thousands
of times a second at full speed (docs/LOAD.md). They are exported under the
same names and types.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric

LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)


class HotCounter:
    """A counter for the hot path: ``inc`` adds to an int, nothing else.

    >>> c = HotCounter("cardhall_x", "things"); c.inc(); c.inc(2); c.value
    3
    """

    __slots__ = ("name", "doc", "value")

    def __init__(self, name: str, doc: str) -> None:
        self.name = name
        self.doc = doc
        self.value = 0

    def inc(self, amount: int = 1) -> None:
        self.value += amount

    def family(self) -> Metric:
        return CounterMetricFamily(self.name, self.doc, value=self.value)


class HotHistogram:
    """A histogram for the hot path: a count per bucket (upper bounds
    ``buckets``, seconds or any unit; one more for +Inf) and the sum.

    >>> h = HotHistogram("cardhall_y", "delays", (0.1, 1.0))
    >>> for v in (0.05, 0.1, 0.5, 3.0): h.observe(v)
    >>> h.counts, h.total
    ([2, 1, 1], 3.65)
    """

    __slots__ = ("name", "doc", "bounds", "counts", "total")

    def __init__(self, name: str, doc: str, buckets: tuple[float, ...]) -> None:
        self.name = name
        self.doc = doc
        self.bounds = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.total = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value

    def family(self) -> Metric:
        cumulative, running = [], 0
        for bound, count in zip((*self.bounds, float("inf")), self.counts):
            running += count
            cumulative.append(("+Inf" if bound == float("inf") else repr(float(bound)), running))
        return HistogramMetricFamily(self.name, self.doc, buckets=cumulative, sum_value=self.total)


class _HotCollector:
    """Exports the hot counters and histograms at each scrape."""

    def __init__(self, metrics: list[HotCounter | HotHistogram]) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        for m in self.metrics:
            yield m.family()


class Metrics:
    """The service's counters, gauges and histograms.

    ``latency``: seconds from an action's arrival (a client frame read, or a
    bot's or clock's input firing) to its events being queued to every
    subscriber, after their checkpoint.

    Store health (server/STORAGE.md): ``cardhall_store_up`` (1, or 0 while the store
    cannot be written), ``cardhall_tables_stalled`` (tables waiting for it),
    ``cardhall_store_failures_total``, ``cardhall_store_rewrites_total`` (a
    store that lost its data written again from memory),
    ``cardhall_tables_quarantined``, and the last start's recovery:
    ``cardhall_tables_recovered``, ``cardhall_recovery_seconds``.
    """

    def __init__(self, tables: Callable[[], float], connections: Callable[[], float],
                 stalled: Callable[[], float] = lambda: 0) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        ProcessCollector(registry=r)
        PlatformCollector(registry=r)
        Gauge("cardhall_tables", "open tables", registry=r).set_function(tables)
        Gauge("cardhall_connections", "open websocket connections", registry=r).set_function(connections)
        self.actions = HotCounter("cardhall_actions", "actions applied (players, bots, timeouts)")
        self.events = HotCounter("cardhall_events", "events published (each seq once)")
        self.frames = HotCounter("cardhall_frames_sent", "event and reply frames written to websockets")
        self.messages = HotCounter("cardhall_ws_messages_sent", "websocket messages written (a batch is one)")
        self.errors_by_code = Counter("cardhall_errors", "error frames sent, by code", ["code"], registry=r)
        self.dropped = Counter("cardhall_connections_dropped", "connections dropped, by reason", ["reason"], registry=r)
        self.latency = HotHistogram("cardhall_action_latency_seconds", "action arrival to events queued for delivery",
                                    LATENCY_BUCKETS)
        self.commit_seconds = HotHistogram("cardhall_commit_seconds", "time of one group commit", LATENCY_BUCKETS)
        self.commit_size = HotHistogram("cardhall_commit_tables", "tables per group commit",
                                        (1, 2, 5, 10, 20, 50, 100, 200, 500))
        self.handovers = HotHistogram("cardhall_handover_seconds",
                                      "tables handed to this node: from the old owner stopping it to serving it here",
                                      LATENCY_BUCKETS)
        self.rebalance_pauses = HotHistogram("cardhall_rebalance_pause_seconds",
                                             "tables moved here by rebalancing: from the old owner stopping it to "
                                             "serving it here", LATENCY_BUCKETS)
        r.register(_HotCollector([self.actions, self.events, self.frames, self.messages, self.latency,
                                  self.commit_seconds, self.commit_size, self.handovers, self.rebalance_pauses]))
        self.rebalance_moves = Counter("cardhall_rebalance_moves", "tables this node moved to another by rebalancing",
                                       registry=r)
        self.bots_waiting = Gauge("cardhall_bot_turns_waiting", "bot turns queued for a slot (server/thinker.py)",
                                  registry=r)
        self.broken = Counter("cardhall_tables_broken", "tables marked broken after a fault", registry=r)
        self.store_up = Gauge("cardhall_store_up", "1 when the store can be written, 0 while it cannot", registry=r)
        self.store_up.set(1)
        Gauge("cardhall_tables_stalled", "tables waiting for the store to answer", registry=r).set_function(stalled)
        self.store_failures = Counter("cardhall_store_failures", "times the store became unavailable", registry=r)
        self.rewrites = Counter("cardhall_store_rewrites", "times an emptied store was written again from memory",
                                registry=r)
        self.quarantined = Gauge("cardhall_tables_quarantined", "stored tables set aside as unreadable", registry=r)
        self.recovered_tables = Gauge("cardhall_tables_recovered", "tables recovered from the store at start",
                                      registry=r)
        self.recovery_seconds = Gauge("cardhall_recovery_seconds", "time to recover the stored tables at start",
                                      registry=r)

    def handover(self, seconds: float, rebalanced: bool = False) -> None:
        """A table handed to this node serves again ``seconds`` after its old
        owner stopped it (``rebalanced``: moved by rebalancing, not by a
        stopping node's handover)."""
        (self.rebalance_pauses if rebalanced else self.handovers).observe(seconds)

    def rebalanced(self) -> None:
        """This node moved a table to another by rebalancing."""
        self.rebalance_moves.inc()

    def error(self, code: str) -> None:
        """An error frame with ``code`` was sent."""
        self.errors_by_code.labels(code).inc()

    def published(self, actions: int, events: int, latencies: Sequence[float]) -> None:
        """A table published ``events`` events after applying ``actions``
        actions; ``latencies``: seconds from each action's arrival to its
        events being queued."""
        self.actions.value += actions
        self.events.value += events
        observe = self.latency.observe
        for seconds in latencies:
            observe(seconds)

    def sent(self, frames: int) -> None:
        self.frames.value += frames
        self.messages.value += 1

    def committed(self, seconds: float, size: int) -> None:
        self.commit_seconds.observe(seconds)
        self.commit_size.observe(size)

    def store_down(self) -> None:
        self.store_up.set(0)
        self.store_failures.inc()

    def recovered(self, tables: int, seconds: float) -> None:
        self.recovered_tables.set(tables)
        self.recovery_seconds.set(seconds)

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
