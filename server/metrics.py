"""Prometheus metrics of one service instance (``GET /metrics``).

Each app has its own registry (tests run several apps in one process). The
process collector gives ``process_resident_memory_bytes``, which the
benchmarks and load tests read.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)

LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)


class Metrics:
    """The service's counters, gauges and histograms.

    ``latency``: seconds from an action's arrival (a client frame read, or a
    bot's or clock's input firing) to its events being queued to every
    subscriber, after their checkpoint.

    Store health (issue 5): ``cardhall_store_up`` (1, or 0 while the store
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
        self.actions = Counter("cardhall_actions", "actions applied (players, bots, timeouts)", registry=r)
        self.events = Counter("cardhall_events", "events published (each seq once)", registry=r)
        self.frames = Counter("cardhall_frames_sent", "event and reply frames written to websockets", registry=r)
        self.messages = Counter("cardhall_ws_messages_sent", "websocket messages written (a batch is one)", registry=r)
        self.errors_by_code = Counter("cardhall_errors", "error frames sent, by code", ["code"], registry=r)
        self.dropped = Counter("cardhall_connections_dropped", "connections dropped, by reason", ["reason"], registry=r)
        self.latency = Histogram("cardhall_action_latency_seconds", "action arrival to events queued for delivery",
                                 buckets=LATENCY_BUCKETS, registry=r)
        self.commit_seconds = Histogram("cardhall_commit_seconds", "time of one group commit", buckets=LATENCY_BUCKETS,
                                        registry=r)
        self.commit_size = Histogram("cardhall_commit_tables", "tables per group commit",
                                     buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500), registry=r)
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

    def error(self, code: str) -> None:
        self.errors_by_code.labels(code).inc()

    def sent(self, frames: int) -> None:
        self.frames.inc(frames)
        self.messages.inc()

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
