"""A throwaway Redis Cluster on loopback: ``redis-server --cluster-enabled yes``
processes made one cluster by ``redis-cli --cluster create``. The one harness
of ``cardhall bench cluster --redis-cluster N`` (:mod:`.redis_cluster`, the
comparison) and of the tests' Redis Clusters (tests/cluster/redis_cluster.py
adds the faults a test inflicts: kill, failover, restart, a replica added,
``FLUSHALL``, a slot migrated).

* :class:`RedisNode`: one cluster-mode ``redis-server`` on a free port and a
  free cluster bus port (``--cluster-port``: never port + 10000, which may be
  taken), in a directory of its own (``nodes-<port>.conf``, ``redis.log``),
  nothing persisted.
* :class:`RedisCluster`: ``masters`` masters (3 or more, as ``redis-cli
  --cluster create`` wants) with ``replicas`` replicas each.
  :meth:`~RedisCluster.start` starts the servers, creates the cluster (each
  master a contiguous band of slots) and waits, polling every node, until it
  is whole (:meth:`~RedisCluster.problems`: ``cluster_state:ok`` on every
  node, one slot map and one set of roles, every replica's link to its master
  up) with the masters and replicas asked for. What the cluster says, read
  from ``CLUSTER NODES``: :meth:`~RedisCluster.masters` (in slot order),
  :meth:`~RedisCluster.replicas`, :meth:`~RedisCluster.master_of`;
  :attr:`~RedisCluster.url` (a master's: a client finds the others),
  :meth:`~RedisCluster.named_pids` (``redis-m1..``, ``redis-r1..``: the
  bench's CPU figures). :meth:`~RedisCluster.close` kills every server.

Ports come from ``free_port`` (by default :func:`fresh_port`, which never
hands out a port twice in this process; the tests pass their own allocator,
which keeps that promise across everything they start). All methods block:
from async code run them with ``asyncio.to_thread``. Times are in seconds.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from cardhall.clients.load.probe import free_port as loopback_port

#: seconds each step of :meth:`RedisCluster.start` may take (servers answering, cluster created, whole)
UP_WITHIN = 30.0

#: every port :func:`fresh_port` handed out in this process
_GIVEN: set[int] = set()


def fresh_port() -> int:
    """A loopback port free now and never handed out before by this function
    (a stopped server's port is free while it is down, and stays its own)."""
    while (port := loopback_port()) in _GIVEN:
        pass
    _GIVEN.add(port)
    return port


@dataclass(frozen=True)
class Shard:
    """One ``redis-server`` as the cluster sees it: its port, pid, cluster id,
    role, its master's port (a replica's), the slot ranges it serves (a master's)."""

    port: int
    pid: int | None
    id: str
    master: bool
    master_port: int | None
    slots: tuple[tuple[int, int], ...]

    def serves(self, slot: int) -> bool:
        return any(a <= slot <= b for a, b in self.slots)


@dataclass(frozen=True)
class NodesLine:
    """One line of ``CLUSTER NODES``."""

    id: str
    port: int
    flags: frozenset[str]
    master_id: str | None
    slots: tuple[tuple[int, int], ...]

    @property
    def failed(self) -> bool:
        return bool(self.flags & {"fail", "fail?", "noaddr", "handshake"})


def parse_nodes(text: str) -> list[NodesLine]:
    """The lines of a ``CLUSTER NODES`` reply (slots being moved, ``[...]``, left out).

    >>> [(n.port, sorted(n.flags), n.master_id, n.slots) for n in parse_nodes(
    ...     "a 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460 [93->-b]\\n"
    ...     "c 127.0.0.1:7003@17003 slave a 0 0 1 connected")]
    [(7000, ['master', 'myself'], None, ((0, 5460),)), (7003, ['slave'], 'a', ())]
    """
    out = []
    for line in text.strip().splitlines():
        fields = line.split()
        ranges = []
        for s in fields[8:]:
            if s.startswith("["):
                continue
            a, _, b = s.partition("-")
            ranges.append((int(a), int(b or a)))
        out.append(NodesLine(fields[0], int(fields[1].split("@")[0].rsplit(":", 1)[1]), frozenset(fields[2].split(",")),
                             None if fields[3] == "-" else fields[3], tuple(sorted(ranges))))
    return out


def wait_until(what: str, check: Callable[[], str | None], timeout: float) -> None:
    """Poll ``check()`` (None: done; else what is still wrong) until done;
    TimeoutError naming ``what`` and the last thing wrong after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            wrong = check()
        except (redis.RedisError, OSError, LookupError) as exc:
            wrong = repr(exc)
        if wrong is None:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"redis cluster: not within {timeout:g} s: {what} ({wrong})")
        time.sleep(0.05)


class RedisNode:
    """One cluster-mode ``redis-server`` (``binary``) under ``root``
    (module docstring); ``node_timeout``: ``--cluster-node-timeout`` in ms;
    ``extra_args``: more ``redis-server`` options. :meth:`start` again after
    :meth:`kill` keeps its ports and ``nodes-<port>.conf`` (not its data)."""

    def __init__(self, binary: str, root: Path, node_timeout: int, extra_args: Sequence[str] = (),
                 free_port: Callable[[], int] = fresh_port) -> None:
        self.binary = binary
        self.port = free_port()
        self.bus = free_port()
        self.dir = root / str(self.port)
        self.dir.mkdir(parents=True)
        self.node_timeout = node_timeout
        self.extra_args = list(extra_args)
        self.proc: subprocess.Popen[bytes] | None = None
        self._client: redis.Redis | None = None

    @property
    def argv(self) -> list[str]:
        return [self.binary, "--port", str(self.port), "--cluster-port", str(self.bus), "--bind", "127.0.0.1",
                "--cluster-enabled", "yes", "--cluster-config-file", str(self.dir / f"nodes-{self.port}.conf"),
                "--cluster-node-timeout", str(self.node_timeout), "--save", "", "--appendonly", "no",
                "--dir", str(self.dir), "--daemonize", "no", "--logfile", str(self.dir / "redis.log"),
                "--loglevel", "notice", "--repl-diskless-sync-delay", "0", *self.extra_args]

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     stdin=subprocess.DEVNULL)

    def client(self) -> redis.Redis:
        """A plain client to it (decoded replies, RESP2), kept until :meth:`kill`."""
        if self._client is None:
            self._client = redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True, protocol=2,
                                       socket_timeout=5, socket_connect_timeout=2)
        return self._client

    def call(self, *args: Any) -> Any:
        return self.client().execute_command(*args)

    def pong(self) -> bool:
        try:
            return bool(self.client().ping())
        except (redis.RedisError, OSError):
            return False

    def kill(self) -> None:
        """SIGKILL (nothing persisted: nothing to lose but its data)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        if self._client is not None:
            self._client.close()
            self._client = None

    def log_tail(self, lines: int = 30) -> str:
        """The last ``lines`` warnings of its log (``#``: state changes, failures, failovers)."""
        try:
            text = (self.dir / "redis.log").read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join([line for line in text.splitlines() if " # " in line][-lines:])


class RedisCluster:
    """``masters`` masters with ``replicas`` replicas each (module docstring),
    under ``workdir / "redis-cluster"`` (by default a temporary directory,
    removed by :meth:`close`); ``node_timeout``, ``extra_args``: each
    :class:`RedisNode`'s; ``server``, ``cli``: the binaries (default: on the
    PATH). Not started until :meth:`start` (or ``with``)."""

    def __init__(self, masters: int = 3, replicas: int = 0, *, workdir: Path | None = None, node_timeout: int = 5000,
                 server: str | None = None, cli: str | None = None, extra_args: Sequence[str] = (),
                 free_port: Callable[[], int] = fresh_port) -> None:
        server = server or shutil.which("redis-server")
        cli = cli or shutil.which("redis-cli")
        if server is None or cli is None:
            raise RuntimeError("redis-server and redis-cli are needed (apt-get install redis-server)")
        if masters < 3:
            raise ValueError(f"a Redis Cluster wants 3 masters or more (got {masters}): "
                             "redis-cli --cluster create makes no smaller one")
        self.server, self.cli = server, cli
        self.n_masters, self.n_replicas = masters, replicas
        self.node_timeout, self.extra_args, self.free_port = node_timeout, list(extra_args), free_port
        self._own_dir = workdir is None
        self.dir = Path(tempfile.mkdtemp(prefix="cardhall-rcluster-")) if workdir is None else workdir / "redis-cluster"
        self.procs: list[RedisNode] = []
        for _ in range(masters * (1 + replicas)):
            self.add_node()
        self.started = False
        #: seconds :meth:`start` took (servers started, cluster created, whole)
        self.start_seconds = 0.0

    def add_node(self) -> RedisNode:
        """One more server with the cluster's settings (neither started nor in the cluster yet)."""
        node = RedisNode(self.server, self.dir, self.node_timeout, self.extra_args, self.free_port)
        self.procs.append(node)
        return node

    # -- start and stop -----------------------------------------------------------------
    def start(self, timeout: float = UP_WITHIN) -> RedisCluster:
        """Start the servers, ``redis-cli --cluster create`` them and wait
        until the cluster is whole with the masters and replicas asked for;
        ``timeout`` for each step. Idempotent. On failure (RuntimeError with
        what ``redis-cli`` or the logs said, TimeoutError) everything is stopped."""
        if self.started:
            return self
        began = time.monotonic()
        try:
            self._start(timeout)
        except BaseException:
            self.close()
            raise
        self.started = True
        self.start_seconds = time.monotonic() - began
        return self

    def _start(self, timeout: float) -> None:
        for p in self.procs:
            p.start()

        def answering() -> str | None:
            for p in self.procs:
                if not p.alive:
                    raise RuntimeError(f"redis-server on {p.port} exited (see {p.dir / 'redis.log'}):\n{p.log_tail()}")
            down = [p.port for p in self.procs if not p.pong()]
            return f"not answering PING: {down}" if down else None

        wait_until("every redis-server answers", answering, timeout)
        create = [self.cli, "--cluster", "create", *(f"127.0.0.1:{p.port}" for p in self.procs),
                  "--cluster-replicas", str(self.n_replicas), "--cluster-yes"]
        done = subprocess.run(create, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        if done.returncode != 0 or "[OK] All 16384 slots covered" not in done.stdout:
            raise RuntimeError(f"{' '.join(create)} failed ({done.returncode}):\n"
                               f"{done.stdout[-3000:]}{done.stderr[-2000:]}")
        wait_until("cluster_state:ok on every node, one slot map, replicas linked, as asked",
                   lambda: self.problems() or self._not_as_asked(), timeout)

    def _not_as_asked(self) -> str | None:
        masters = self.masters()
        follow = Counter(s.master_port for s in self.replicas())
        if len(masters) != self.n_masters or any(follow[m.port] != self.n_replicas for m in masters):
            return f"{len(masters)} masters, replicas per master {dict(follow)}"
        return None

    def close(self) -> None:
        """SIGKILL every server; remove the files of a temporary directory. Safe to call twice."""
        for p in self.procs:
            p.kill()
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    stop = close

    def __enter__(self) -> RedisCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the cluster says ---------------------------------------------------------
    @property
    def ports(self) -> list[int]:
        """Every server's port (started or not, alive or not)."""
        return [p.port for p in self.procs]

    @property
    def live(self) -> list[RedisNode]:
        return [p for p in self.procs if p.alive]

    def proc(self, port: int) -> RedisNode:
        for p in self.procs:
            if p.port == port:
                return p
        raise KeyError(port)

    def view(self, port: int) -> list[NodesLine]:
        """``CLUSTER NODES`` as the server on ``port`` sees the cluster."""
        return parse_nodes(self.proc(port).call("CLUSTER", "NODES"))

    def shards(self, port: int | None = None) -> list[Shard]:
        """Every server the cluster knows and does not hold failed, by port, as
        the server on ``port`` (default: the first live one) sees it."""
        port = port if port is not None else self.live[0].port
        lines = [line for line in self.view(port) if not line.failed]
        port_of = {line.id: line.port for line in self.view(port)}
        pids = {p.port: p.pid for p in self.procs}
        return sorted((Shard(line.port, pids.get(line.port), line.id, "master" in line.flags,
                             port_of.get(line.master_id or ""), line.slots) for line in lines), key=lambda s: s.port)

    def masters(self) -> list[Shard]:
        """The masters serving slots (ports, pids, slot ranges), in slot order."""
        return sorted((s for s in self.shards() if s.master and s.slots), key=lambda s: s.slots)

    def replicas(self) -> list[Shard]:
        """The live replicas (``master_port``: the master each follows)."""
        return [s for s in self.shards() if not s.master]

    def master_of(self, slot: int) -> Shard:
        """The master serving ``slot``."""
        for s in self.masters():
            if s.serves(slot):
                return s
        raise LookupError(f"no master serves slot {slot}")

    def url_of(self, port: int) -> str:
        return f"redis://127.0.0.1:{port}/0"

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<a live master's port>/0``"""
        return self.url_of(self.masters()[0].port)

    @property
    def master_urls(self) -> list[str]:
        return [self.url_of(s.port) for s in self.masters()]

    def named_masters(self) -> dict[str, Shard]:
        """``redis-m1..``: the masters in slot order."""
        return {f"redis-m{i}": m for i, m in enumerate(self.masters(), 1)}

    def named_pids(self) -> dict[str, int]:
        """:meth:`named_masters` and ``redis-r1..`` (``rK``: a replica of ``mK``;
        ``rK.2`` a second one) -> pid."""
        masters, replicas = self.named_masters(), self.replicas()
        out = {name: m.pid for name, m in masters.items()}
        for name, m in masters.items():
            for j, r in enumerate(r for r in replicas if r.master_port == m.port):
                out[f"redis-r{name[7:]}" + ("" if j == 0 else f".{j + 1}")] = r.pid
        return {name: pid for name, pid in out.items() if pid is not None}

    def problems(self) -> str | None:
        """What keeps the cluster from being whole (None: nothing): a live
        server not ``cluster_state:ok``; two live servers disagreeing on the
        slot map or on who replicates whom; a live replica whose link to its
        master is not up."""
        maps: dict[int, Any] = {}
        for p in self.live:
            info = p.call("CLUSTER", "INFO")
            if "cluster_state:ok" not in info:
                return f"{p.port}: {info.split()[0]}"
            lines = [line for line in self.view(p.port) if not line.failed]
            port_of = {line.id: line.port for line in lines}
            maps[p.port] = sorted((line.port, line.slots, "master" in line.flags, port_of.get(line.master_id or ""))
                                  for line in lines)
        first, *rest = maps.items()
        for port, seen in rest:
            if seen != first[1]:
                return f"{port} and {first[0]} disagree: {seen} / {first[1]}"
        live = {p.port for p in self.live}
        for port, _, master, master_port in first[1]:
            if port not in live:
                return f"{port} is dead but not held failed yet"
            if not master:
                if master_port not in live:
                    return f"replica {port} follows a dead master {master_port}"
                if self.proc(port).client().info("replication").get("master_link_status") != "up":
                    return f"replica {port}: link to {master_port} not up"
        return None

    def wait_ok(self, timeout: float = UP_WITHIN) -> None:
        """Until :meth:`problems` finds nothing."""
        wait_until("cluster_state:ok on every node, one slot map, replicas linked", self.problems, timeout)

    def log_tails(self, lines: int = 15) -> str:
        return "\n".join(f"--- redis {p.port} (pid {p.pid}, {'alive' if p.alive else 'dead'})\n{p.log_tail(lines)}"
                         for p in self.procs)
