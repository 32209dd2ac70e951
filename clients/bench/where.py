"""Where a benchmark's processes ran: the CPUs each used and how much of them.

:class:`Where` samples, in a thread, every ``every`` seconds, the server's
process and every child process of this one (the load generator's workers,
the baseline's processes: found through ``/proc/self/task/*/children``, so
processes started after the watch began are seen too): the CPU each last ran
on and its CPU seconds so far (:func:`~cardhall.clients.bench.cluster_procs.processor`,
:func:`~cardhall.clients.bench.cluster_procs.cpu_seconds`). :meth:`Where.report`
gives, for each process seen, the cores it used (CPU seconds over wall seconds
between its first and last sample) and its share of samples on each CPU;
:func:`describe` says it in one line. Linux only (``/proc``); elsewhere the
report is empty.

Times are in seconds; ``cores`` is CPU seconds per wall second (1.0: one core busy).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from typing import Any

from cardhall.clients.bench.background import Background
from cardhall.clients.bench.cluster_procs import cpu_seconds, processor


def children() -> list[int]:
    """The pids of this process's live children (every thread's)."""
    out: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                out.extend(int(p) for p in f.read().split())
        except OSError:
            continue
    return out


def _name(pid: int) -> str:
    """The process's command line, shortened to what tells the processes apart."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return "?"
    if "serve" in argv:
        return "cardhall serve"
    if any("baseline" in a for a in argv):
        return "bare broadcast server"
    if any("multiprocessing" in a for a in argv):
        return "load process"
    return os.path.basename(argv[0]) if argv else "?"


class Where(Background):
    """Watches ``roles`` (pid -> role, e.g. the server) and this process's
    children while it runs (``with Where({pid: "server"}) as w:``)."""

    def __init__(self, roles: dict[int, str] | None = None, every: float = 0.1) -> None:
        self.roles = dict(roles or {})
        self.every = every
        self.cpus: dict[int, Counter[int]] = {}
        #: pid -> (first time, first CPU seconds, last time, last CPU seconds)
        self.spent: dict[int, list[float]] = {}
        super().__init__(self._run, "where")

    def watch(self, pid: int, role: str) -> None:
        """Also watch ``pid`` (a process that is not a child of this one) as ``role``."""
        self.roles[pid] = role

    def _sample(self) -> None:
        now = time.monotonic()
        for pid in {*self.roles, *children()}:
            cpu, spent = processor(pid), cpu_seconds(pid)
            if cpu is None or spent is None:
                continue
            if pid not in self.roles:
                self.roles[pid] = _name(pid)
            self.cpus.setdefault(pid, Counter())[cpu] += 1
            got = self.spent.get(pid)
            if got is None:
                self.spent[pid] = [now, spent, now, spent]
            else:
                got[2], got[3] = now, spent

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()


    def report(self) -> list[dict[str, Any]]:
        """One dict per process seen at least twice: ``pid``, ``role``, ``cores``
        (CPU seconds per wall second while it was seen), ``cpus`` (CPU -> share
        of its samples, 0..1), busiest first."""
        out = []
        for pid, (t0, c0, t1, c1) in self.spent.items():
            if t1 <= t0:
                continue
            seen = self.cpus[pid]
            total = sum(seen.values())
            out.append({"pid": pid, "role": self.roles.get(pid, "?"), "cores": round((c1 - c0) / (t1 - t0), 2),
                        "cpus": {cpu: round(n / total, 2) for cpu, n in sorted(seen.items())}})
        return sorted(out, key=lambda r: -r["cores"])


def describe(report: list[dict[str, Any]], minimum: float = 0.02) -> str:
    """``report`` (:meth:`Where.report`) in one line: each process using at
    least ``minimum`` cores, its cores and the CPUs it ran on.

    >>> describe([{"pid": 7, "role": "cardhall serve", "cores": 0.97, "cpus": {0: 0.6, 1: 0.4}}])
    'cardhall serve (pid 7) 0.97 cores on CPU 0 60%, 1 40%'
    """
    parts = []
    for r in report:
        if r["cores"] < minimum:
            continue
        cpus = ", ".join(f"{cpu} {share:.0%}" for cpu, share in r["cpus"].items())
        parts.append(f"{r['role']} (pid {r['pid']}) {r['cores']} cores on CPU {cpus}")
    return "; ".join(parts) or "no process seen"
