"""The processes of ``cardhall bench cluster``: a private ``redis-server``,
the ``cardhall serve`` nodes on it, and what the kernel says about each
process (Linux ``/proc``): CPU seconds used and the CPUs it ran on.

* :class:`Redis`: ``redis-server`` on a free loopback port, no persistence
  (``--save ''``, no AOF; or an AOF synced every second), in a temporary directory; :meth:`Redis.close` shuts it down;
  :meth:`Redis.pause` / :meth:`Redis.resume`: SIGSTOP / SIGCONT (the fault round, :mod:`.cluster_faults`).
* :class:`Node`: one ``cardhall serve --redis URL --redis-prefix P --node-id bN
  --placement least_loaded`` subprocess on its own port, its output in ``<dir>/<prefix>-bN.log``.
* :class:`Cluster`: N nodes ``b1..bN`` on one Redis (anything with a ``url`` and
  :meth:`Redis.named_pids`: also :class:`~.redis_cluster.RedisCluster`) and a fresh key prefix,
  their HTTP endpoints (``/api/cluster``, ``/metrics``, ``POST /api/tables``);
  :func:`session`: a started cluster, its tables and the load process
  (:mod:`.cluster_load`) watching them (and, for the fault round, tables with a
  seat played by the load, each player connected to a node that does not own its table).
* :func:`cpu_seconds`, :func:`processor`, :class:`Placement`: ``/proc/<pid>/stat``
  read for user+system time (``utime + stime`` over ``SC_CLK_TCK``) and field 39
  (the CPU the process last ran on), sampled while a window is measured;
  :func:`machine_busy_seconds`: the whole machine's (``/proc/stat``).

Times are in seconds throughout.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cardhall.clients.bench.background import Background
from cardhall.clients.bench.cluster_load import LoadProcess, Plan
from cardhall.clients.load.probe import free_port

#: the ``cardhall serve`` limits every node of the benchmark runs with. Every
#: spectator connects from 127.0.0.1 and says ``hello`` without a token, so the
#: per-address limits would refuse all but a few of them (by default 64
#: connections per address, 20 new players per address per minute, 20 tables
#: per address): they are off (0: no limit; the tables are created over HTTP with
#: the operator key, exempt from the table limits, but they are off anyway).
#: ``--bot-think-floor 0``: a node that takes a table over (failover, handover)
#: would otherwise raise the think time of its bots from ``--think`` to the floor
#: (0.5 s), changing the offered load in the middle of the measurement.
#: ``--max-tables-per-player`` is left alone: the tables have no owner (0 would
#: mean none at all). :func:`~.cluster_load.run_load` reports the spectators
#: refused all the same, and ``bench cluster`` warns about them.
LOAD_LIMITS = ("--max-connections-per-ip", "0", "--new-players-per-address", "0",
               "--max-tables-per-address", "0", "--bot-think-floor", "0")

#: clock ticks per second of ``/proc/<pid>/stat``'s utime and stime
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name (field 3 first), None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # the name may hold spaces and parentheses


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds process ``pid`` has used (its threads included;
    not its children), None when it is gone."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    return (int(fields[14 - 3]) + int(fields[15 - 3])) / CLK_TCK  # fields 14 and 15: utime, stime


def processor(pid: int) -> int | None:
    """The CPU process ``pid`` (its main thread) last ran on (field 39), None when it is gone."""
    fields = _stat_fields(pid)
    return None if fields is None else int(fields[39 - 3])


def machine_busy_seconds() -> float:
    """CPU seconds every CPU of the machine has spent busy since boot (``/proc/stat``:
    user, nice, system, irq and softirq), to tell the benchmark's processes from the rest."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    return (sum(ticks[:7]) - ticks[3] - ticks[4]) / CLK_TCK  # user nice system idle iowait irq softirq (steal: not ours)


def affinity(pid: int) -> list[int]:
    """The CPUs process ``pid`` may run on (empty when it is gone)."""
    try:
        return sorted(os.sched_getaffinity(pid))
    except OSError:
        return []


class Placement(Background):
    """Samples, every ``every`` seconds in a thread, the CPU each of ``pids``
    is on (:func:`processor`) while it runs (``with Placement(pids):``);
    :attr:`seen` is pid -> Counter of CPU -> samples."""

    def __init__(self, pids: list[int], every: float = 0.1) -> None:
        self.pids = pids
        self.every = every
        self.seen: dict[int, Counter[int]] = {pid: Counter() for pid in pids}
        super().__init__(self._run, "cpu placement")

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            for pid in self.pids:
                cpu = processor(pid)
                if cpu is not None:
                    self.seen[pid][cpu] += 1


class Redis:
    """A private ``redis-server`` on a free loopback port, its directory (and
    log) under ``workdir``: nothing persisted, or with ``aof`` an append-only
    file synced every second (``--appendonly yes --appendfsync everysec``, no
    snapshots), as a production Redis would run."""

    def __init__(self, workdir: Path, binary: str | None = None, aof: bool = False) -> None:
        binary = binary or shutil.which("redis-server")
        if binary is None:
            raise SystemExit("bench: redis-server is not installed (apt-get install redis-server)")
        self.port = free_port()
        self.dir = workdir / "redis"
        self.dir.mkdir(parents=True, exist_ok=True)
        persistence = ["--appendonly", "yes", "--appendfsync", "everysec"] if aof else ["--appendonly", "no"]
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", *persistence,
                "--dir", str(self.dir), "--daemonize", "no", "--loglevel", "warning",
                "--logfile", str(self.dir / "redis.log")]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while not self._pong():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"redis-server did not start (see {self.dir / 'redis.log'})")
            time.sleep(0.02)

    def _pong(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), 0.2) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def named_pids(self) -> dict[str, int]:  # (a Redis Cluster: one per master and replica)
        return {"redis": self.proc.pid}

    @property
    def pausable(self) -> bool:
        """This benchmark started it (and it runs): it may be stopped with SIGSTOP."""
        return self.proc.poll() is None

    def pause(self) -> None:
        """SIGSTOP: it stops dead, its clients' connections stay open and their commands wait."""
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT after :meth:`pause`."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)

    def close(self) -> None:
        """Shut it down (SIGTERM, SIGKILL after 10 s; SIGCONT first, should it be stopped)."""
        if self.proc.poll() is None:
            self.resume()
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


class RedisLike(Protocol):
    """What the nodes are started on: a :class:`Redis` or a :class:`~.redis_cluster.RedisCluster`."""
    @property
    def url(self) -> str: ...
    def named_pids(self) -> dict[str, int]: ...


class Node:
    """One ``cardhall serve`` node ``node_id`` of a cluster (``argv`` built by :class:`Cluster`)."""

    def __init__(self, node_id: str, argv: list[str], port: int, log_path: Path) -> None:
        self.id = node_id
        self.argv = argv
        self.port = port
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("CARDHALL_REDIS_URL", "CARDHALL_NODE_ID")}
        env["PYTHONUNBUFFERED"] = "1"
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         env=env)

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Return once ``GET /healthz`` answers 200; RuntimeError with the log's end otherwise."""
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive:
                raise RuntimeError(f"node {self.id} exited before it was ready:\n{self.log_tail()}")
            try:
                if httpx.get(self.http + "/healthz", timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"node {self.id} not ready within {timeout:.0f} s:\n{self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL (kill -9), reaped."""
        if self.alive and self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)

    def terminate(self) -> None:
        """SIGTERM (a graceful stop, with handover); does not wait. (Then SIGCONT: a node
        stopped by :meth:`pause` handles it; for a running one SIGCONT is nothing.)"""
        if self.alive and self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.send_signal(signal.SIGCONT)

    def pause(self) -> None:
        """SIGSTOP: the process stops dead (its sockets stay open, nothing answers)."""
        if self.alive and self.proc is not None:
            self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT after :meth:`pause`."""
        if self.alive and self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for the process to exit; whether it did."""
        if self.proc is None:
            return True
        try:
            self.proc.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class Cluster:
    """``size`` nodes ``b1..bN`` on ``redis`` under a fresh key prefix, their logs in ``workdir``.

    ``lease_ttl`` (and ``lease_renew``, default a third of it, at most 1 s)
    are passed to every node; ``operator_key`` (fresh) opens ``/api/cluster``.
    Every node runs with :data:`LOAD_LIMITS`, and with ``--max-connections``
    raised above ``connections`` (the spectators planned) when its default,
    10000, would not hold them on one node; ``node_args``: more options of
    ``cardhall serve`` for every node (e.g. ``--redis-wait-replicas 1``)."""

    def __init__(self, redis: RedisLike, size: int, workdir: Path, lease_ttl: float = 3.0,
                 lease_renew: float | None = None, connections: int = 0, node_args: tuple[str, ...] = ()) -> None:
        self.redis = redis
        self.prefix = f"cardhall-bench-{secrets.token_hex(3)}"
        self.key = secrets.token_hex(16)
        self.lease_ttl = lease_ttl
        self.lease_renew = lease_renew or min(1.0, lease_ttl / 3)
        self.nodes: list[Node] = []
        limits = list(LOAD_LIMITS)
        if connections + 1000 > 10_000:  # spectators plus the HTTP probes, on the node that takes over a dead one's
            limits += ["--max-connections", str(connections + 1000)]
        for i in range(1, size + 1):
            node_id, port = f"b{i}", free_port()
            argv = [sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(port),
                    "--log-level", "warning", "--send-queue", "100000", "--redis", redis.url,
                    "--redis-prefix", self.prefix, "--node-id", node_id, "--placement", "least_loaded",
                    "--lease-ttl", repr(lease_ttl), "--lease-renew", repr(self.lease_renew),
                    "--operator-key", self.key, *limits, *node_args]
            self.nodes.append(Node(node_id, argv, port, workdir / f"{self.prefix}-{node_id}.log"))
        print(f"bench cluster: its {size} node(s) run with {' '.join(limits)} (the load comes from one "
              f"address, 127.0.0.1: no per-address limit; the tables' bots keep their think time)", file=sys.stderr)

    def start(self) -> Cluster:
        """Start every node and wait until each answers; on failure stop them all and raise."""
        try:
            for n in self.nodes:
                n.start()
            for n in self.nodes:
                n.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """SIGTERM every node at once, SIGKILL those still running after 20 s."""
        for n in self.nodes:
            n.terminate()
        deadline = time.monotonic() + 20
        for n in self.nodes:
            if not n.wait(max(0.0, deadline - time.monotonic())):
                n.kill()

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def node(self, node_id: str) -> Node:
        return next(n for n in self.nodes if n.id == node_id)

    @property
    def live(self) -> list[Node]:
        return [n for n in self.nodes if n.alive]

    def view(self) -> dict[str, Any]:
        """``GET /api/cluster`` from the first live node: ``{"nodes": [heartbeat, ...], ...}``."""
        import httpx

        r = httpx.get(self.live[0].http + "/api/cluster", headers={"X-Operator-Key": self.key}, timeout=10)
        r.raise_for_status()
        return r.json()

    def owners(self) -> dict[str, str]:
        """table id -> the node serving it, from ``/api/cluster``'s ``table_ids``."""
        return {t: n["id"] for n in self.view()["nodes"] for t in n.get("table_ids", [])}

    def scrape(self, nodes: list[Node] | None = None) -> dict[str, str]:
        """node id -> its ``/metrics`` text ("" when it does not answer)."""
        import httpx

        out = {}
        for n in nodes if nodes is not None else self.live:
            try:
                out[n.id] = httpx.get(n.http + "/metrics", timeout=10).text
            except httpx.HTTPError:
                out[n.id] = ""
        return out

    def create_tables(self, count: int, body: dict[str, Any]) -> list[str]:
        """``count`` tables of ``body`` (``POST /api/tables``), one asked of each
        node in turn; each node places it by ``least_loaded``. Placement reads
        the other nodes' table counts from their last heartbeats (up to two
        ``lease_renew`` old), so a burst of creations would pile onto one node:
        before each round of one creation per node, every node's view is made
        fresh (``GET /api/cluster`` on each node, twice over: each writes its
        heartbeat and reads the others'). Returns the tables' ids."""
        import httpx

        out: list[str] = []
        clients = [httpx.Client(base_url=n.http, timeout=30, headers={"X-Operator-Key": self.key})
                   for n in self.nodes]
        try:
            while len(out) < count:
                if len(clients) > 1:
                    for c in clients * 2:
                        c.get("/api/cluster").raise_for_status()
                for c in clients[:count - len(out)]:
                    r = c.post("/api/tables", json=body)
                    if r.status_code != 201:
                        raise RuntimeError(f"creating a table failed: {r.status_code} {r.text[:300]}")
                    out.append(r.json()["table"])
        finally:
            for c in clients:
                c.close()
        return out

    def wait_owned(self, tables: list[str], timeout: float = 30.0) -> dict[str, str]:
        """Wait until every table of ``tables`` shows in some node's ``table_ids``; returns the owners."""
        deadline = time.monotonic() + timeout
        while True:
            owners = self.owners()
            if all(t in owners for t in tables) or time.monotonic() > deadline:
                return owners
            time.sleep(0.2)


@dataclass
class Session:
    """A started cluster with its tables (``owners``: table -> node when the
    load started) and its load; ``totals``: the load's figures of the whole
    session, once it has ended."""

    cluster: Cluster
    tables: list[str]
    owners: dict[str, str]
    load: LoadProcess
    totals: dict[str, Any] | None = None
    #: ``(table, node index)`` of each seat played by the load (``players`` of :func:`session`)
    players: list[tuple[str, int]] = field(default_factory=list)


def shortfall_warning(size: int, ready: dict[str, Any]) -> str:
    """The warning printed when fewer spectators joined than planned (``ready``:
    the load process's first reply, :func:`~.cluster_load.run_load`).

    >>> print(shortfall_warning(2, {"planned": 10, "connections": 7, "failed": 3,
    ...     "failure_kinds": {"rate_limited": 3}, "failed_by_node": {1: 3}, "failures": ["ServerError('x')"]}))
    bench cluster: WARNING: 2 node(s): only 7 of 10 spectators connected (3 refused or unreachable: {'rate_limited': 3}; by node index {1: 3}; e.g. ServerError('x')); the figures cover only the 7 connected
    """
    example = f"; e.g. {ready['failures'][0]}" if ready.get("failures") else ""
    return (f"bench cluster: WARNING: {size} node(s): only {ready['connections']} of {ready['planned']} spectators "
            f"connected ({ready['failed']} refused or unreachable: {ready.get('failure_kinds', {})}; by node index "
            f"{ready.get('failed_by_node', {})}{example}); the figures cover only the {ready['connections']} connected")


def player_nodes(owners: list[int], size: int) -> list[int]:
    """The node each player connects to, given the index of the node owning its
    table: of the nodes that do not own it (any node when ``size`` is 1), the
    one that has the fewest players so far.

    >>> player_nodes([0, 1, 2, 0, 1, 2], 3), player_nodes([0, 0], 1)
    ([1, 0, 0, 2, 2, 1], [0, 0])
    """
    hosted = [0] * size
    out = []
    for owner in owners:
        node = min((i for i in range(size) if i != owner or size == 1), key=lambda i: hosted[i])
        hosted[node] += 1
        out.append(node)
    return out


@contextlib.contextmanager
def session(redis: RedisLike, size: int, workdir: Path, lease_ttl: float, tables: int, body: dict[str, Any],
            spectators: int, players: int = 0, reconnect: bool = False, node_args: tuple[str, ...] = ()) -> Iterator[Session]:
    """``size`` nodes on ``redis``, ``tables`` tables of ``body`` and ``spectators``
    per table in a load process, spectator k of the session on node k mod size
    (round-robin); everything stopped at the end. ``players``: as many more
    tables of ``body`` with one bot fewer, whose free seat a player of the load
    process takes, connected to a node that does not own the table
    (:func:`player_nodes`). ``reconnect``: every connection of the load
    reconnects (and resumes) when the server closes it. ``node_args``: :class:`Cluster`'s."""
    cluster = Cluster(redis, size, workdir, lease_ttl, connections=tables * spectators + players, node_args=node_args).start()
    load = None
    try:
        ids = cluster.create_tables(tables, body)
        humans = cluster.create_tables(players, {**body, "bots": body["bots"][1:]}) if players else []
        owners = cluster.wait_owned(ids + humans)
        plan = Plan([n.ws for n in cluster.nodes], reconnect=reconnect)
        for k in range(len(ids) * spectators):
            table, node = ids[k // spectators], k % size
            plan.spectators.append((table, node, owners.get(table) == cluster.nodes[node].id))
        index = {n.id: i for i, n in enumerate(cluster.nodes)}
        plan.players = list(zip(humans, player_nodes([index.get(owners.get(t, ""), 0) for t in humans], size)))
        load = LoadProcess(plan)
        ready = load.ready
        print(f"bench cluster: {size} node(s): {ready['connections']} of {ready['planned']} spectators connected "
              f"and joined their table" + (f"; {ready['players']} of {players} players seated" if players else ""),
              file=sys.stderr)
        if ready["connections"] < ready["planned"]:
            print(shortfall_warning(size, ready), file=sys.stderr)
        s = Session(cluster, ids, owners, load, players=plan.players)
        yield s
        s.totals = load.close()
    finally:
        if load is not None:
            load.close()
        cluster.stop()
