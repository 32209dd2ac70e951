"""Connection admission: every TCP connection counted from accept to close.

The :class:`Gate` counts each connection the moment the listening socket
accepts it (before a byte is read), per peer address and in total, until the
socket closes, whatever it is: a plain HTTP request, a websocket, or a
connection that never sends a complete request. ``admit`` says what to do
with a new one:

* past ``max_connections`` (all peers together): HTTP 503, reason "server at
  its connection limit";
* past ``max_connections_per_ip`` from its peer address: HTTP 403, reason
  "too many connections from this address" (SPEC "Transport": the same answer
  as a websocket handshake refused for its address);
* past a hard ceiling (the caps plus their slack, :data:`SLACK`), no answer at
  all: the socket is aborted, so a flood of refused connections cannot hold
  more descriptors than that.

A peer in ``trusted_proxies`` is a load balancer: every client arrives from
its address, and which client a connection carries is known only once its
``X-Forwarded-For`` header has been read. Its connections count in the total
only; the websocket endpoint then counts the forwarded client's websockets
(``session.py``, with the hall's limits: ``server/limits.py``, across every
node on one Redis), and the proxy bounds its own clients' half-open
connections (nginx's ``client_header_timeout``, ``limit_conn``; deploy/README.md).

These counts are this process's own and synchronous: a connection is counted
before a byte of it is read, and a Redis round trip per accepted connection
would let a flood of connections load Redis.

The protocols reach the gate through :class:`GatedConfig` (a ``uvicorn.Config``
carrying the gate and the settings), which ``server/app.py`` builds.
"""

from __future__ import annotations

import ipaddress
import logging
import resource
import time
from dataclasses import dataclass
from typing import Any

import uvicorn
from prometheus_client import CollectorRegistry, Counter, Gauge

from cardhall.server.config import Settings

log = logging.getLogger("cardhall.gate")

#: connections past a cap that still get their refusal written: a tenth of the cap, at least 64
SLACK = 0.1
#: descriptors kept free of client connections (the listening socket, Redis, logs, files served)
RESERVED_FDS = 256
#: seconds between two log lines about refused connections (a flood must not flood the log)
LOG_EVERY = 60.0


@dataclass(frozen=True)
class Refusal:
    """What a refused connection gets: ``status`` (an HTTP status code) with
    ``reason`` as a plain-text body, or, with ``answer`` False, nothing (aborted)."""

    status: int
    reason: str
    answer: bool = True


SERVER_FULL = Refusal(503, "server at its connection limit; try again later")
ADDRESS_FULL = Refusal(403, "too many connections from this address")
DROPPED = Refusal(0, "past the connection ceiling", answer=False)


def response(status: int, phrase: str, reason: str) -> bytes:
    """An HTTP/1.1 response closing the connection, ``reason`` as its text body.

    >>> response(503, "Service Unavailable", "full").split(b"\\r\\n")[0]
    b'HTTP/1.1 503 Service Unavailable'
    """
    body = reason.encode()
    return (f"HTTP/1.1 {status} {phrase}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


def descriptor_bound(wanted: int) -> int:
    """``wanted`` connections (>= 1), lowered so that the cap and its slack fit
    in this process's open-file limit (``RLIMIT_NOFILE``, soft) less
    :data:`RESERVED_FDS`: past that limit the kernel would refuse to accept
    at all, and no client would get an answer."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    free = soft - RESERVED_FDS
    room = min(free - 64, int(free / (1 + SLACK)))  # the cap plus its slack (a tenth, at least 64) fits
    if wanted > room:
        log.warning("max_connections %d lowered to %d to fit the open-file limit %d (ulimit -n)",
                    wanted, max(1, room), soft)
        return max(1, room)
    return wanted


class Gate:
    """Counts of open connections per peer address and in total, and the
    admission rule above. ``max_connections``: connections, >= 1;
    ``max_per_address``: connections from one peer address, 0 for no limit;
    ``trusted``: addresses or networks (``10.0.0.0/8``) of trusted proxies,
    or ``*`` for every peer. Raises ``ValueError`` for a malformed entry.

    >>> g = Gate(2, 1, ())
    >>> [g.admit("a", "10.0.0.1"), g.admit("b", "10.0.0.1").status, g.admit("c", "10.0.0.2"), g.admit("d", "10.0.0.3").status]
    [None, 403, None, 503]
    >>> g.release("a"); g.release("a"); g.open, g.from_address("10.0.0.1")
    (3, 1)
    """

    def __init__(self, max_connections: int, max_per_address: int, trusted: tuple[str, ...]) -> None:
        if max_connections < 1 or max_per_address < 0:
            raise ValueError("max_connections must be >= 1 and max_per_address >= 0")
        self.max_connections = max_connections
        self.max_per_address = max_per_address
        self.ceiling = max_connections + max(64, int(max_connections * SLACK))
        self.address_ceiling = 2 * max_per_address
        self.trust_all = "*" in trusted
        self.trusted = [ipaddress.ip_network(t, strict=False) for t in trusted if t != "*"]
        self.admitted = 0
        self.peers: dict[Any, tuple[str | None, bool]] = {}  # transport -> (address counted, admitted)
        self.per_address: dict[str, int] = {}
        self.refused: dict[int, int] = {}  # status (0: aborted) -> connections refused since the last log line
        self.logged_at = float("-inf")
        self.refused_metric: Counter | None = None

    def export(self, registry: CollectorRegistry) -> None:
        """Add the gate's metrics to ``registry``: ``cardhall_tcp_connections``
        (open now, refused ones still closing included) and
        ``cardhall_connections_refused_total{status}`` (403, 503, or 0 for
        aborted without an answer)."""
        Gauge("cardhall_tcp_connections", "TCP connections open, from accept to close", registry=registry
              ).set_function(lambda: self.open)
        self.refused_metric = Counter("cardhall_connections_refused", "TCP connections refused at accept, by status",
                                      ["status"], registry=registry)

    @classmethod
    def for_settings(cls, settings: Settings) -> Gate:
        """The gate of ``settings`` (``max_connections`` fitted to the open-file limit)."""
        return cls(descriptor_bound(settings.max_connections), settings.max_connections_per_ip,
                   settings.trusted_proxies)

    @property
    def open(self) -> int:
        """Connections open now, refused ones still closing included."""
        return len(self.peers)

    def from_address(self, address: str) -> int:
        """Connections open now from peer ``address`` (0 for a trusted proxy's)."""
        return self.per_address.get(address, 0)

    def is_trusted(self, address: str | None) -> bool:
        """Whether ``address`` is a trusted proxy (its clients are counted after the handshake)."""
        if address is None or self.trust_all:
            return self.trust_all
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in net for net in self.trusted)

    def admit(self, key: Any, address: str | None) -> Refusal | None:
        """Count the new connection ``key`` (its transport) from peer
        ``address`` (None: not an IP socket); None if it is admitted, else its
        :class:`Refusal`. Either way it stays counted until :meth:`release`."""
        counted = None if address is None or self.is_trusted(address) else address
        here = self.per_address.get(counted, 0) if counted is not None else 0
        refusal: Refusal | None = None
        if len(self.peers) >= self.ceiling or (self.address_ceiling and here >= self.address_ceiling):
            refusal = DROPPED
        elif self.max_per_address and counted is not None and here >= self.max_per_address:
            refusal = ADDRESS_FULL
        elif self.admitted >= self.max_connections:
            refusal = SERVER_FULL
        self.peers[key] = (counted, refusal is None)
        if counted is not None:
            self.per_address[counted] = here + 1
        if refusal is None:
            self.admitted += 1
        else:
            self._count(refusal)
        return refusal

    def _count(self, refusal: Refusal) -> None:
        self.refused[refusal.status] = self.refused.get(refusal.status, 0) + 1
        if self.refused_metric is not None:
            self.refused_metric.labels(str(refusal.status)).inc()
        now = time.monotonic()
        if now - self.logged_at >= LOG_EVERY:
            counts = ", ".join(f"{n} with {status or 'no answer'}" for status, n in sorted(self.refused.items()))
            log.warning("connections refused (%s); open %d of %d, per-address limit %d", counts, self.open,
                        self.max_connections, self.max_per_address)
            self.refused.clear()
            self.logged_at = now

    def release(self, key: Any) -> None:
        """Forget connection ``key`` (closed); a key not counted, or already released, is ignored."""
        entry = self.peers.pop(key, None)
        if entry is None:
            return
        counted, admitted = entry
        if admitted:
            self.admitted -= 1
        if counted is not None:
            left = self.per_address[counted] - 1
            if left:
                self.per_address[counted] = left
            else:
                del self.per_address[counted]


class GatedConfig(uvicorn.Config):
    """``uvicorn.Config`` with the service's ``settings`` and its :class:`Gate`,
    read by :mod:`cardhall.server.http_protocol` and :mod:`cardhall.server.ws_protocol`."""

    def __init__(self, app: Any, settings: Settings, gate: Gate, **options: Any) -> None:
        super().__init__(app, **options)
        self.settings = settings
        self.gate = gate
