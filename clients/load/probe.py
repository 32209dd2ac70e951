"""The server seen from outside: its Prometheus text, its memory, its port.

Used by ``cardhall loadtest`` (a server anywhere) and ``cardhall bench server``
(a server it starts itself).

>>> text = 'process_resident_memory_bytes 1.5e+08\\ncardhall_errors_total{code="malformed"} 3.0\\n'
>>> metric(text, "process_resident_memory_bytes")
150000000.0
>>> labelled(text, "cardhall_errors_total", "code")
{'malformed': 3.0}
"""

from __future__ import annotations

import re
import secrets
import socket
import subprocess
import time


def metric(text: str, name: str) -> float:
    """The value of the unlabelled sample ``name`` in Prometheus text (0.0 when absent)."""
    m = re.search(rf"^{re.escape(name)} ([0-9.e+-]+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def labelled(text: str, name: str, label: str) -> dict[str, float]:
    """``{label value: sample}`` of a metric with one label (``cardhall_errors_total{code=...}``)."""
    pattern = rf'^{re.escape(name)}{{{re.escape(label)}="([^"]*)"}} ([0-9.e+-]+)$'
    return {key: float(value) for key, value in re.findall(pattern, text, re.M)}


def histogram_quantile(m0: str, m1: str, name: str, q: float) -> float | None:
    """The upper bound (seconds) of the bucket holding quantile ``q`` of a
    Prometheus histogram's increase between two scrapes, or None without data."""
    def buckets(text: str) -> list[tuple[float, float]]:
        out = []
        for le, value in re.findall(rf'^{re.escape(name)}_bucket{{le="([^"]+)"}} ([0-9.e+-]+)$', text, re.M):
            out.append((float("inf") if le == "+Inf" else float(le), float(value)))
        return out
    b0, b1 = dict(buckets(m0)), buckets(m1)
    if not b1:
        return None
    diffs = [(le, count - b0.get(le, 0.0)) for le, count in b1]
    total = diffs[-1][1]
    if total <= 0:
        return None
    for le, count in diffs:
        if count >= q * total:
            return le
    return None


def rss(pid: int) -> int:
    """Resident memory of process ``pid`` in bytes (Linux ``/proc``; 0 when unknown)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


#: where :func:`free_port` looks: below Linux's default range of ephemeral ports (32768-60999), from
#: which the kernel gives every outgoing connection its local port, so a port chosen here and bound a
#: moment later by a server is not taken meanwhile by some client's connection
LISTEN_PORTS = range(20000, 32768)


def free_port() -> int:
    """A TCP port free on the loopback interface right now, from :data:`LISTEN_PORTS` (chosen with
    the OS's CSPRNG, so processes looking at once rarely pick the same), else one the OS gives.

    >>> free_port() in LISTEN_PORTS
    True
    """
    for _ in range(50):
        port = LISTEN_PORTS[secrets.randbelow(len(LISTEN_PORTS))]
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:  # in use (a server, or a connection's end): another
                continue
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes] | None = None, timeout: float = 20.0,
              host: str = "127.0.0.1") -> None:
    """Wait until ``host:port`` accepts connections; RuntimeError if ``proc``
    exits first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError("server process exited")
        try:
            with socket.create_connection((host, port), 0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")
