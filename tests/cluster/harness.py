"""A real cardhall cluster for tests: one ``redis-server``, N ``cardhall serve``
processes on it with one key prefix, and nginx in front, run from the very
configuration file of ``deploy/nginx/cardhall.conf`` with only its
placeholders (ports, runtime directory, worker user) filled in.

* :class:`Node`: one ``cardhall serve`` subprocess on a fixed loopback port
  (kept across restarts), its output appended to ``<work>/<node id>.log``.
* :class:`Nginx`: the rendered configuration in a directory of its own,
  ``nginx -p DIR -c DIR/nginx.conf -g 'daemon off;'``; as root its workers run
  as ``nobody``, or the whole of it as ``run_as``.
* :class:`ClusterRedis`: the cluster's private ``redis-server`` (append-only
  file with the ``appendfsync`` of the test's choice: ``everysec`` like the
  Redis tests, ``always`` for the fault suite) and the faults a test
  inflicts on it: :meth:`~ClusterRedis.kill` (SIGKILL, the file kept),
  :meth:`~ClusterRedis.pause` / :meth:`~ClusterRedis.resume` (SIGSTOP /
  SIGCONT), :meth:`~ClusterRedis.flushall`.
* :class:`Cluster`: Redis + nodes ``n1..nN`` + nginx, started and stopped
  together (``async with Cluster() as c:``); the ``cluster`` fixture of
  ``tests/cluster/conftest.py`` yields a started one of three nodes.

``python -m tests.cluster.harness [N]`` starts one by hand and prints its
URLs until Ctrl-C. Times are in seconds throughout.
"""

from __future__ import annotations

import asyncio
import contextlib
import grp
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from tests.server.conftest import REDIS_SERVER, RedisServer, free_port

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
#: the operator's nginx configuration, with placeholders (its header lists them)
NGINX_CONF = DEPLOY / "nginx" / "cardhall.conf"
#: the nginx binary (``CARDHALL_NGINX`` overrides; Debian's is in /usr/sbin, often off a user's PATH)
NGINX = os.environ.get("CARDHALL_NGINX") or shutil.which("nginx") or (
    "/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)

PLACEHOLDERS = ("{{USER}}", "{{PREFIX}}", "{{LOGS}}", "{{LISTEN}}", "{{NODE}}")


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of the text file at ``path`` ("" when there is none)."""
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a TCP connection to ``host:port`` is accepted right now."""
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


def render_nginx_conf(template: str, *, user: str, prefix: str, logs: str, listen: str, nodes: Sequence[str]) -> str:
    """``template`` (the text of ``deploy/nginx/cardhall.conf``) with its
    placeholders filled on every line that is not a comment: ``user`` (``"name
    group"``), ``prefix`` and ``logs`` (directories), ``listen`` (``port`` or
    ``address:port``), and each line holding ``{{NODE}}`` written once per
    ``host:port`` of ``nodes``. Raises ValueError if a placeholder is left or
    unknown, or if ``nodes`` is empty."""
    if not nodes:
        raise ValueError("an upstream needs at least one node")
    fill = {"{{USER}}": user, "{{PREFIX}}": prefix, "{{LOGS}}": logs, "{{LISTEN}}": listen}
    out: list[str] = []
    for number, line in enumerate(template.splitlines(), 1):
        if line.lstrip().startswith("#"):
            out.append(line)
            continue
        for key, value in fill.items():
            line = line.replace(key, value)
        lines = [line.replace("{{NODE}}", node) for node in nodes] if "{{NODE}}" in line else [line]
        for rendered in lines:
            if "{{" in rendered:
                raise ValueError(f"line {number}: unfilled placeholder in {rendered.strip()!r}")
        out.extend(lines)
    return "\n".join(out) + "\n"


class ClusterRedis(RedisServer):
    """The cluster's ``redis-server`` (a :class:`tests.server.conftest.RedisServer`:
    loopback, a free port kept across restarts, append-only persistence, no
    RDB snapshots, its own directory) with ``appendfsync`` set (``always``:
    every write the nodes were told succeeded is on disk before the reply,
    so a SIGKILL loses nothing acknowledged; ``everysec``, ``no``) and
    ``extra_args`` (more ``redis-server`` options), and the faults a test
    inflicts on it. :attr:`paused` is True between :meth:`pause` and
    :meth:`resume`."""

    def __init__(self, binary: str, *, appendfsync: str = "everysec", extra_args: Sequence[str] = ()) -> None:
        if appendfsync not in ("always", "everysec", "no"):
            raise ValueError(f"appendfsync is always, everysec or no, not {appendfsync!r}")
        super().__init__(binary)
        self.appendfsync = appendfsync
        self.extra_args = list(extra_args)
        self.paused = False

    @property
    def argv(self) -> list[str]:
        """The command line :meth:`start` runs."""
        return [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "yes", "--appendfsync", self.appendfsync, "--dir", self.dir,
                "--daemonize", "no", "--loglevel", "warning", *self.extra_args]

    @property
    def alive(self) -> bool:
        """Started and not exited (a paused one is alive)."""
        return self.proc is not None and self.proc.poll() is None

    def start(self, fresh: bool = False) -> None:
        """Start it (``fresh``: without its data) and return once it answers
        ``PING``: it loads its append-only file first, so a restarted Redis
        answers with every write it acknowledged before it went down."""
        if self.alive:
            raise RuntimeError("redis-server is running")
        self.paused = False
        super().start(fresh)

    def kill(self) -> int | None:
        """SIGKILL and reap it (its append-only file stays for :meth:`start`);
        returns the exit code (``-9``), None if it was not running."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.paused = False
        code = self.proc.returncode
        self.proc = None
        return code

    def pause(self) -> None:
        """SIGSTOP: it stops dead; its clients' connections stay open and their
        commands wait (up to each client's own timeout)."""
        if not self.alive or self.proc is None:
            raise RuntimeError("redis-server is not running")
        self.proc.send_signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        """SIGCONT after :meth:`pause`."""
        if self.alive and self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)
        self.paused = False

    def command(self, *args: str, timeout: float = 10.0) -> bytes:
        """One command over a plain socket (RESP), its reply's first line (``+OK``)."""
        payload = f"*{len(args)}\r\n".encode() + b"".join(
            f"${len(a.encode())}\r\n".encode() + a.encode() + b"\r\n" for a in args)
        with socket.create_connection(("127.0.0.1", self.port), timeout) as sock:
            sock.sendall(payload)
            reply = b""
            while not reply.endswith(b"\r\n"):
                chunk = sock.recv(4096)
                if not chunk:
                    break
                reply += chunk
        return reply.strip()

    def flushall(self) -> None:
        """``FLUSHALL``: every key gone while it runs (the nodes must notice and
        write their tables again from memory)."""
        reply = self.command("FLUSHALL")
        if reply != b"+OK":
            raise RuntimeError(f"FLUSHALL answered {reply!r}")

    def stop(self) -> None:
        """Shut down in order (SIGTERM: the append-only file is complete); a
        paused one is resumed first."""
        if self.paused:
            self.resume()
        super().stop()

    def close(self) -> None:
        if self.paused:
            self.resume()
        super().close()


def _user_and_group(uid: int) -> tuple[str, str]:
    entry = pwd.getpwuid(uid)
    return entry.pw_name, grp.getgrgid(entry.pw_gid).gr_name


class Nginx:
    """nginx from ``conf`` (default :data:`NGINX_CONF`) in front of
    ``upstreams`` (``host:port`` each), listening on ``127.0.0.1:port`` (a free
    port by default).

    Its files are in :attr:`dir`, a new temporary directory that :meth:`close`
    removes: ``nginx.conf`` (rendered), ``nginx.log`` (its stderr),
    ``error.log``, ``access.log``, the pid file and the temp folders. Started
    as root, nginx runs its workers as ``nobody`` (the directory is made
    world-readable for them); ``run_as`` (a user name, root only) starts the
    whole of it as that user instead, as a non-root operator would.
    """

    def __init__(self, upstreams: Iterable[str], *, port: int | None = None, conf: Path = NGINX_CONF,
                 binary: str | None = None, run_as: str | None = None) -> None:
        binary = binary or NGINX
        if binary is None:
            raise RuntimeError("nginx is not installed (set CARDHALL_NGINX)")
        if run_as is not None and os.geteuid() != 0:
            raise ValueError("run_as needs root")
        self.binary = binary
        self.upstreams = list(upstreams)
        self.port = port if port is not None else free_port()
        self.conf = conf
        self.run_as = run_as
        self.dir = Path(tempfile.mkdtemp(prefix="cardhall-nginx-"))
        self.conf_path = self.dir / "nginx.conf"
        self.log_path = self.dir / "nginx.log"
        self.proc: subprocess.Popen[bytes] | None = None
        if run_as is not None:
            entry = pwd.getpwnam(run_as)
            self._ids: tuple[int, int] | None = (entry.pw_uid, entry.pw_gid)
            self.user = f"{run_as} {grp.getgrgid(entry.pw_gid).gr_name}"
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        else:
            self._ids = None
            # as root: unprivileged workers, which must reach the temp folders under dir
            uid = pwd.getpwnam("nobody").pw_uid if os.geteuid() == 0 else os.getuid()
            self.user = " ".join(_user_and_group(uid))
            if os.geteuid() == 0:
                self.dir.chmod(0o755)

    @property
    def http(self) -> str:
        """``http://127.0.0.1:PORT``"""
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        """``ws://127.0.0.1:PORT/ws``"""
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def pid(self) -> int | None:
        """The master process's pid (None before :meth:`start`)."""
        return self.proc.pid if self.proc is not None else None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def render(self) -> str:
        """The configuration nginx runs: :data:`NGINX_CONF` with the placeholders filled."""
        return render_nginx_conf(self.conf.read_text(), user=self.user, prefix=str(self.dir), logs=str(self.dir),
                                 listen=f"127.0.0.1:{self.port}", nodes=self.upstreams)

    def write(self) -> Path:
        """Write :meth:`render` to ``dir/nginx.conf``; returns its path."""
        self.conf_path.write_text(self.render())
        if self._ids is not None:
            os.chown(self.conf_path, *self._ids)
        return self.conf_path

    def command(self, *args: str) -> list[str]:
        """``nginx -p DIR/ -c DIR/nginx.conf -e stderr ARGS``"""
        return [self.binary, "-p", f"{self.dir}/", "-c", str(self.conf_path), "-e", "stderr", *args]

    def _popen_user(self) -> dict[str, Any]:
        return {"user": self._ids[0], "group": self._ids[1], "extra_groups": []} if self._ids else {}

    def test(self) -> str:
        """``nginx -t`` of the written configuration; returns its output, raises
        RuntimeError with it if nginx refuses the file."""
        proc = subprocess.run(self.command("-t"), capture_output=True, text=True, timeout=30, **self._popen_user())
        output = proc.stdout + proc.stderr
        if proc.returncode != 0:
            raise RuntimeError(f"nginx -t refused {self.conf_path} (exit {proc.returncode}):\n{output}")
        return output

    def start(self, timeout: float = 10.0) -> None:
        """Write the configuration, start nginx in the foreground and return once
        its port accepts connections (RuntimeError with its log if it exits or
        does not listen within ``timeout``)."""
        if self.alive:
            raise RuntimeError("nginx is running")
        self.write()
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.command("-g", "daemon off;"), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, **self._popen_user())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited with {self.proc.returncode}:\n{self.log_tail()}")
            if port_open(self.port):
                return
            time.sleep(0.02)
        raise RuntimeError(f"nginx did not listen on {self.port} within {timeout} s:\n{self.log_tail()}")

    def workers(self) -> set[int]:
        """Pids of the master's child processes (its workers)."""
        if self.proc is None:
            return set()
        found = set()
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError):
                # "pid (comm) state ppid ...": comm may hold spaces, so split after its ")"
                fields = stat.read_text().rpartition(")")[2].split()
                if int(fields[1]) == self.proc.pid:
                    found.add(int(stat.parent.name))
        return found

    def reload(self, upstreams: Iterable[str] | None = None, timeout: float = 10.0) -> None:
        """Re-render (with ``upstreams`` if given), check it with ``nginx -t``,
        send SIGHUP and return once a worker of the new configuration runs.
        Old workers finish their open connections (websockets included) first."""
        if not self.alive or self.proc is None:
            raise RuntimeError("nginx is not running")
        if upstreams is not None:
            self.upstreams = list(upstreams)
        self.write()
        self.test()
        before = self.workers()
        self.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.workers() - before:
                return
            time.sleep(0.02)
        raise RuntimeError(f"nginx did not start new workers within {timeout} s:\n{self.log_tail()}")

    def stop(self, timeout: float = 10.0) -> int | None:
        """Fast shutdown (SIGTERM: open connections are closed), SIGKILL after
        ``timeout``; returns the exit code (None if it was not running)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode

    def close(self) -> None:
        """:meth:`stop` and remove :attr:`dir`."""
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def log_tail(self, lines: int = 40) -> str:
        """The end of nginx's stderr and of its error log."""
        return (f"--- {self.log_path}\n{tail(self.log_path, lines)}\n"
                f"--- {self.dir / 'error.log'}\n{tail(self.dir / 'error.log', lines)}")


class Node:
    """One ``cardhall serve`` process: node ``node_id`` of the cluster at
    ``redis_url`` + ``prefix``, on ``127.0.0.1:port`` (a free port by default;
    the same after :meth:`restart`), its stdout and stderr appended to
    ``work/<node_id>.log``. ``lease_ttl``/``lease_renew``: seconds (``--lease-ttl``,
    ``--lease-renew``); ``extra_args``: more ``cardhall serve`` options. Runs
    with this interpreter (``sys.executable``), without ``CARDHALL_REDIS_URL`` or
    ``CARDHALL_NODE_ID`` from the environment.
    """

    def __init__(self, node_id: str, redis_url: str, *, work: Path, prefix: str = "cardhall",
                 operator_key: str = "operator-key", port: int | None = None, lease_ttl: float = 2.0,
                 lease_renew: float = 0.5, trusted_proxy: str = "127.0.0.1", extra_args: Sequence[str] = ()) -> None:
        self.node_id = node_id
        self.redis_url = redis_url
        self.work = work
        self.prefix = prefix
        self.operator_key = operator_key
        self.port = port if port is not None else free_port()
        self.lease_ttl = lease_ttl
        self.lease_renew = lease_renew
        self.trusted_proxy = trusted_proxy
        self.extra_args = list(extra_args)
        self.log_path = work / f"{node_id}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.paused = False

    @property
    def argv(self) -> list[str]:
        """The command line :meth:`start` runs."""
        return [sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(self.port),
                "--log-level", "warning", "--redis", self.redis_url, "--redis-prefix", self.prefix,
                "--node-id", self.node_id, "--operator-key", self.operator_key,
                "--lease-ttl", str(self.lease_ttl), "--lease-renew", str(self.lease_renew),
                "--trusted-proxy", self.trusted_proxy, *self.extra_args]

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT`` (an nginx upstream)."""
        return f"127.0.0.1:{self.port}"

    @property
    def http(self) -> str:
        """``http://127.0.0.1:PORT``"""
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        """``ws://127.0.0.1:PORT/ws``"""
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def pid(self) -> int | None:
        """The process's pid (None before :meth:`start`)."""
        return self.proc.pid if self.proc is not None else None

    @property
    def alive(self) -> bool:
        """Started and not exited (a paused node is alive)."""
        return self.proc is not None and self.proc.poll() is None

    @property
    def returncode(self) -> int | None:
        """The exit code once exited (negative: killed by that signal), else None."""
        return self.proc.poll() if self.proc is not None else None

    def start(self) -> None:
        """Start the process (does not wait: :meth:`wait_ready`)."""
        if self.alive:
            raise RuntimeError(f"node {self.node_id} is running")
        env = {k: v for k, v in os.environ.items() if k not in ("CARDHALL_REDIS_URL", "CARDHALL_NODE_ID")}
        env["PYTHONUNBUFFERED"] = "1"
        with open(self.log_path, "ab") as log:
            log.write(f"--- harness: start {' '.join(self.argv)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=env, cwd=self.work)
        self.paused = False

    async def wait_ready(self, timeout: float = 30.0) -> None:
        """Return once ``GET /healthz`` answers 200; RuntimeError with the log's
        end as soon as the process exits, TimeoutError after ``timeout``."""
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(timeout=1.0) as http:
            while time.monotonic() < deadline:
                if not self.alive:
                    raise RuntimeError(f"node {self.node_id} exited with {self.returncode} before it was ready:\n"
                                       f"{self.log_tail()}")
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get(f"{self.http}/healthz")).status_code == 200:
                        return
                await asyncio.sleep(0.05)
        raise TimeoutError(f"node {self.node_id} not ready within {timeout} s:\n{self.log_tail()}")

    def _signal(self, sig: signal.Signals) -> None:
        if self.proc is None:
            raise RuntimeError(f"node {self.node_id} was never started")
        if self.proc.poll() is None:
            self.proc.send_signal(sig)

    def kill(self) -> int | None:
        """SIGKILL and reap it; returns the exit code (``-9``)."""
        if self.alive and self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
        self.paused = False
        return self.returncode

    def pause(self) -> None:
        """SIGSTOP: the process stops dead (its sockets stay open; the kernel
        still accepts connections on its port)."""
        self._signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        """SIGCONT after :meth:`pause`."""
        self._signal(signal.SIGCONT)
        self.paused = False

    def _term(self) -> None:
        if self.paused:
            self.resume()
        self._signal(signal.SIGTERM)

    def _killed(self, timeout: float) -> TimeoutError:
        self.kill()
        return TimeoutError(f"node {self.node_id} did not exit within {timeout} s of SIGTERM (killed):\n"
                            f"{self.log_tail()}")

    def terminate(self, timeout: float = 10.0) -> int | None:
        """SIGTERM (a graceful stop) and wait up to ``timeout``; returns the exit
        code: ``-15`` after a clean stop (uvicorn raises the captured SIGTERM
        again once it has shut down). Past ``timeout``: SIGKILL and
        TimeoutError. Blocks the event loop: from async code with clients of
        this node in the same loop, use :meth:`stop`, which lets them answer
        the close handshake."""
        if not self.alive or self.proc is None:
            return self.returncode
        self._term()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise self._killed(timeout) from None

    async def stop(self, timeout: float = 10.0) -> int | None:
        """:meth:`terminate` without blocking the event loop."""
        if not self.alive:
            return self.returncode
        self._term()
        deadline = time.monotonic() + timeout
        while self.alive:
            if time.monotonic() > deadline:
                raise self._killed(timeout)
            await asyncio.sleep(0.02)
        return self.returncode

    async def restart(self, timeout: float = 30.0) -> None:
        """Stop it if it runs (SIGTERM), start it again with the same id and
        port, and wait until it is ready."""
        await self.stop()
        self.start()
        await self.wait_ready(timeout)

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of its log."""
        return tail(self.log_path, lines)


class Cluster:
    """``size`` nodes ``n1..nN`` on one private Redis and one key prefix, nginx
    in front: ``async with Cluster() as c`` (or :meth:`start` / :meth:`stop`).

    ``node_args``: more ``cardhall serve`` options for every node;
    ``lease_ttl``/``lease_renew``: seconds; ``appendfsync`` and
    ``redis_args``: Redis's (:class:`ClusterRedis`). Attributes: :attr:`nodes`,
    :attr:`nginx`, :attr:`redis` (a :class:`ClusterRedis`),
    :attr:`prefix`, :attr:`operator_key`, :attr:`work` (the node logs; nginx
    and Redis have directories of their own; :meth:`stop` removes all three).
    """

    def __init__(self, size: int = 3, *, node_args: Sequence[str] = (), lease_ttl: float = 2.0,
                 lease_renew: float = 0.5, prefix: str | None = None, operator_key: str | None = None,
                 redis_binary: str | None = None, nginx_binary: str | None = None,
                 ready_timeout: float = 30.0, appendfsync: str = "everysec", redis_args: Sequence[str] = (),
                 redis: Any = None, own_redis: bool = True) -> None:
        if redis is None:
            redis_binary = redis_binary or REDIS_SERVER
            if redis_binary is None:
                raise RuntimeError("redis-server is not installed (set CARDHALL_REDIS_SERVER)")
            redis = ClusterRedis(redis_binary, appendfsync=appendfsync, extra_args=redis_args)
        #: the Redis (any object with ``url`` and ``close()``), closed by :meth:`stop` when ``own_redis``
        self.redis = redis
        self.own_redis = own_redis
        self.work = Path(tempfile.mkdtemp(prefix="cardhall-cluster-"))
        self.prefix = prefix or f"cardhall-test-{secrets.token_hex(3)}"
        self.operator_key = operator_key or secrets.token_hex(16)
        self.node_args = list(node_args)
        self.lease_ttl = lease_ttl
        self.lease_renew = lease_renew
        self.ready_timeout = ready_timeout
        self.nodes = [self._node(f"n{i}") for i in range(1, size + 1)]
        self.nginx = Nginx([n.address for n in self.nodes], binary=nginx_binary)

    def redis_url(self, node_id: str) -> str:
        """The Redis URL node ``node_id`` is given."""
        return str(self.redis.url)

    def _node(self, node_id: str) -> Node:
        return Node(node_id, self.redis_url(node_id), work=self.work, prefix=self.prefix, operator_key=self.operator_key,
                    lease_ttl=self.lease_ttl, lease_renew=self.lease_renew, extra_args=self.node_args)

    def node(self, node_id: str) -> Node:
        """The node named ``node_id`` (``"n2"``)."""
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        raise KeyError(node_id)

    @property
    def live_nodes(self) -> list[Node]:
        """The nodes whose process runs (paused ones included)."""
        return [n for n in self.nodes if n.alive]

    async def start(self) -> Cluster:
        """Redis, then every node (waiting until each is ready), then nginx; on
        any failure everything started is stopped again and the error raised."""
        try:
            self.redis.start()
            for n in self.nodes:
                n.start()
            await asyncio.gather(*(n.wait_ready(self.ready_timeout) for n in self.nodes))
            self.nginx.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def add_node(self, extra_args: Sequence[str] = ()) -> Node:
        """Start one more node (the next id), wait until it is ready and put it
        behind nginx (reload)."""
        node = self._node(f"n{len(self.nodes) + 1}")
        node.extra_args += list(extra_args)
        self.nodes.append(node)
        node.start()
        await node.wait_ready(self.ready_timeout)
        self.nginx.reload([n.address for n in self.nodes])
        return node

    async def stop(self, timeout: float = 10.0) -> dict[str, int | None]:
        """SIGTERM every node at once and wait (SIGKILL after ``timeout``), then
        stop nginx and Redis and remove the files; returns each node's exit code
        (``-15``: a clean stop, see :meth:`Node.terminate`; None: never
        started). Safe to call twice."""
        results = await asyncio.gather(*(n.stop(timeout) for n in self.nodes), return_exceptions=True)
        codes = {n.node_id: n.returncode for n in self.nodes}
        self.nginx.close()
        if self.own_redis:
            self.redis.close()
        shutil.rmtree(self.work, ignore_errors=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return codes

    def log_tails(self, lines: int = 30) -> str:
        """The end of every node's log and of nginx's, for a failure report."""
        parts = [f"--- {n.node_id} (port {n.port}, exit {n.returncode})\n{n.log_tail(lines)}" for n in self.nodes]
        parts.append(self.nginx.log_tail(lines))
        return "\n".join(parts)

    async def __aenter__(self) -> Cluster:
        return await self.start()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()


async def _main(size: int) -> None:
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    async with Cluster(size) as cluster:
        print(f"cluster of {size} on {cluster.redis.url} prefix {cluster.prefix}, operator key {cluster.operator_key}")
        for n in cluster.nodes:
            print(f"  {n.node_id}: {n.http} (pid {n.pid}, log {n.log_path})")
        print(f"  nginx: {cluster.nginx.http} ({cluster.nginx.ws}); Ctrl-C or SIGTERM stops it all", flush=True)
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(_main(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
