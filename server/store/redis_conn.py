"""The store's connections to Redis: a standalone Redis or a Redis Cluster, told apart at start.

``cardhall serve --redis URL`` takes the URL of a standalone Redis or of any
node of a Redis Cluster (``server/STORAGE.md``, "Redis Cluster").
:func:`preflight` looks before the service starts: it asks the server for
``INFO`` (its version, whether cluster mode is on) and, on a cluster,
``CLUSTER INFO`` (every slot served); it waits for a Redis that does not
answer, up to a deadline, and refuses at once what cannot work (a wrong
password, something that is not Redis, a Redis older than
:data:`MIN_VERSION`, a cluster with slots missing, a database other than 0 on
a cluster). :class:`RedisConn` then makes the clients: redis-py's asyncio
``Redis`` or ``RedisCluster`` (which follows ``MOVED``/``ASK`` and reloads the
slot map itself), always speaking RESP2 (:data:`PROTOCOL`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis
import redis.asyncio as aioredis
from redis import exceptions as rexc
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from cardhall.server.store.redis_packing import use_hiredis_packing

log = logging.getLogger("cardhall.store")

#: the oldest Redis the store works with: sharded pub/sub (SPUBLISH, SSUBSCRIBE) and
#: scripts that publish on a sharded channel came with 7.0
MIN_VERSION = (7, 0)
#: the Redis protocol every client speaks. redis-py 8 defaults to RESP3; the store reads
#: replies (scripts' tables, streams, pub/sub messages) in their RESP2 shapes
PROTOCOL = 2


class Misconfigured(Exception):
    """The URL names something the store cannot use (the message says why, in one line)."""


class Unreachable(Exception):
    """Nothing answers at the URL yet (refused, timed out, a cluster still electing)."""


@dataclass(frozen=True)
class Found:
    """What :func:`inspect` found: the server's version and whether it is a cluster node."""

    version: tuple[int, ...]
    clustered: bool


def _version(text: str) -> tuple[int, ...]:
    """``"7.0.15"`` -> ``(7, 0, 15)`` (parts that are not numbers end it)."""
    out: list[int] = []
    for part in text.split("."):
        if not part.isdigit():
            break
        out.append(int(part))
    return tuple(out)


def inspect(url: str, timeout: float = 3.0) -> Found:
    """Look at the Redis at ``url`` once. Raises :class:`Misconfigured` for what
    waiting cannot mend and :class:`Unreachable` for what it may."""
    where = redact(url)
    try:
        client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                      protocol=PROTOCOL, retry=None)
    except ValueError as exc:
        raise Misconfigured(f"--redis {where}: not a Redis URL ({exc})") from None
    try:
        info = client.info()
        version = _version(str(info.get("redis_version", "")))
        if version < MIN_VERSION:
            raise Misconfigured(f"the Redis at {where} is version {info.get('redis_version')}; cardhall needs "
                                f"{'.'.join(map(str, MIN_VERSION))} or newer (sharded pub/sub)")
        clustered = bool(info.get("cluster_enabled"))
        if clustered:
            db = client.connection_pool.connection_kwargs.get("db") or 0
            if int(db) != 0:
                raise Misconfigured(f"--redis {where}: a Redis Cluster has only database 0 (drop /{db} from the URL)")
            fields = {as_text(k): as_text(v) for k, v in client.cluster("INFO").items()}
            assigned = int(fields.get("cluster_slots_assigned", "0"))
            if assigned < 16384:
                raise Misconfigured(f"the Redis Cluster at {where} serves {assigned} of 16384 hash slots: "
                                    f"assign every slot (redis-cli --cluster fix) before starting cardhall")
            if fields.get("cluster_state") != "ok":
                raise Unreachable(f"the Redis Cluster at {where} is {fields.get('cluster_state')} "
                                  f"({fields.get('cluster_slots_fail', '?')} slots failing)")
        return Found(version, clustered)
    except rexc.AuthenticationError as exc:
        raise Misconfigured(f"the Redis at {where} refused the credentials: {exc}") from None
    except rexc.ResponseError as exc:
        text = str(exc)
        if text.startswith(("NOAUTH", "WRONGPASS", "NOPERM")) or "AUTH" in text:
            raise Misconfigured(f"the Redis at {where} refused the credentials: {text}") from None
        if "SELECT is not allowed in cluster mode" in text:
            raise Misconfigured(f"--redis {where}: a Redis Cluster has only database 0 (drop the /N from the URL)") from None
        if text.startswith("LOADING"):
            raise Unreachable(f"the Redis at {where} is loading its data") from None
        raise Misconfigured(f"the Redis at {where} refused INFO: {text}") from None
    except rexc.InvalidResponse as exc:
        raise Misconfigured(f"{where} does not answer as Redis does ({exc})") from None
    except (rexc.ConnectionError, rexc.TimeoutError, OSError) as exc:
        if "Protocol error" in str(exc):
            raise Misconfigured(f"{where} does not answer as Redis does ({exc})") from None
        raise Unreachable(f"redis {where}: {exc}") from None
    except rexc.RedisError as exc:
        raise Misconfigured(f"the Redis at {where} cannot be used: {type(exc).__name__}: {exc}") from None
    finally:
        client.close()


def preflight(url: str, wait: float, timeout: float = 3.0, should_stop: Callable[[], bool] = lambda: False,
              report: Callable[[str], None] | None = None, clock: Callable[[], float] = time.monotonic,
              sleep: Callable[[float], None] = time.sleep) -> Found:
    """:func:`inspect` until it answers: a Redis that does not answer yet is
    waited for up to ``wait`` seconds (0: for ever), then :class:`Misconfigured`
    saying so; the reason is handed to ``report`` (default: logged at ERROR) at
    once and every 10 s. Misconfigurations raise at once."""
    started = clock()
    logged = None
    if report is None:
        report = lambda why: log.error("cannot use the redis store yet (%s); waiting for it", why)  # noqa: E731
    while True:
        try:
            return inspect(url, timeout)
        except Unreachable as exc:
            now = clock()
            if wait and now - started >= wait:
                raise Misconfigured(f"no usable Redis at {redact(url)} within {wait:g} s (--redis-wait): {exc}") from None
            if should_stop():
                raise Misconfigured(f"stopped while waiting for Redis at {redact(url)}: {exc}") from None
            if logged is None or now - logged >= 10.0:
                report(str(exc))
                logged = now
            sleep(0.5)


def redis_trouble(exc: BaseException) -> bool:
    """Whether ``exc`` means Redis could not be reached or answered with an
    error: redis-py's errors, socket errors, and the ``AttributeError`` or
    ``RuntimeError`` redis-py's asyncio connections raise when a connection
    is dropped under them (a master killed during a failover: "'NoneType'
    object has no attribute 'writelines'" from redis-py's own code, "unable
    to perform operation on <TCPTransport closed=True>; the handler is
    closed" from the event loop's transport, asyncio's or uvloop's, that
    redis-py writes to), told apart from a fault of the caller's code by the
    innermost frame: redis-py's own, or the event loop's when called through
    redis-py.

    >>> redis_trouble(rexc.ConnectionError("x")), redis_trouble(AttributeError("x"))
    (True, False)
    """
    if isinstance(exc, (rexc.RedisError, rexc.RedisClusterException, OSError)):
        return True
    if isinstance(exc, (AttributeError, RuntimeError)):
        modules = []
        tb = exc.__traceback__
        while tb is not None:
            modules.append(str(tb.tb_frame.f_globals.get("__name__", "")))
            tb = tb.tb_next
        through_redis = any(m == "redis" or m.startswith("redis.") for m in modules)
        innermost = modules[-1] if modules else ""
        return through_redis and (innermost == "redis" or innermost.startswith(("redis.", "asyncio.", "uvloop.")))
    return False


def redact(url: str) -> str:
    """``url`` without its password (for logs and ``/healthz``).

    >>> redact("redis://:secret@db:6379/2")
    'redis://:***@db:6379/2'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def as_text(reply: Any) -> str:
    """A Redis reply item as text: bytes decoded (UTF-8), anything else by ``str``.

    >>> as_text(b"ch"), as_text(7)
    ('ch', '7')
    """
    return reply.decode() if isinstance(reply, bytes) else str(reply)


#: Redis connections one client of a node opens at most (per master on a Redis Cluster)
MAX_CONNECTIONS = 512

class RedisConn:
    """The clients of the store at ``url``: :attr:`client` (one retry after a
    connection error: for idempotent commands and scripts) and :attr:`once`
    (no retry: for what must never be carried out twice, a publish of a
    request), both of the kind the server is (``clustered``; None: asked now,
    with :func:`inspect`, a server that does not answer counting as a
    standalone Redis). ``timeout``: seconds per command."""

    def __init__(self, url: str, timeout: float = 3.0, clustered: bool | None = None) -> None:
        self.url = url
        self.timeout = timeout
        if clustered is None:
            try:
                clustered = inspect(url, timeout).clustered
            except Unreachable:
                clustered = False
        #: True on a Redis Cluster
        self.clustered: bool = clustered
        self.client: Any = self._make(retries=1)
        self.once: Any = self._make(retries=0)
        for client in (self.client, self.once):
            use_hiredis_packing(client)  # the group commit's long EVALSHA packed in C

    def _make(self, retries: int) -> Any:
        options: dict[str, Any] = dict(decode_responses=False, socket_timeout=self.timeout,
                                       socket_connect_timeout=self.timeout, protocol=PROTOCOL,
                                       retry=Retry(NoBackoff(), retries), health_check_interval=0)
        if self.clustered:
            return RedisCluster.from_url(self.url, max_connections=MAX_CONNECTIONS, **options)
        # a burst past the pool's size (a node claiming a stopping node's tables, a crowd reconnecting)
        # waits for a connection (up to the timeout) instead of failing at once
        pool = aioredis.BlockingConnectionPool.from_url(self.url, max_connections=MAX_CONNECTIONS,
                                                        timeout=self.timeout, **options)
        return aioredis.Redis(connection_pool=pool)

    async def refresh(self) -> None:
        """Load the cluster's slot map again (after a failover or a slot
        migration); nothing on a standalone Redis. Raises what redis-py raises
        when no node answers."""
        if self.clustered:
            for client in (self.client, self.once):
                if not client.get_nodes():
                    await client.initialize()
                else:
                    await client.nodes_manager.initialize()

    async def ready(self) -> None:
        """Make sure the slot map is loaded (a cluster client loads it on its first command)."""
        if self.clustered and not self.client.get_nodes():
            await self.client.initialize()

    def node_of(self, key: str) -> tuple[str, int]:
        """``(host, port)`` of the master serving ``key``'s slot (call
        :meth:`ready` first on a cluster); on a standalone Redis, the Redis."""
        if self.clustered:
            node = self.client.get_node_from_key(key)
            return node.host, int(node.port)
        return self._standalone()

    def masters(self) -> list[tuple[str, int]]:
        """``(host, port)`` of every master (standalone: the one Redis)."""
        if self.clustered:
            return [(n.host, int(n.port)) for n in self.client.get_primaries()]
        return [self._standalone()]

    def _standalone(self) -> tuple[str, int]:
        kwargs = self.client.connection_pool.connection_kwargs
        return str(kwargs.get("host", "localhost")), int(kwargs.get("port", 6379))

    async def short_of_replicas(self, wanted: int) -> str | None:
        """The masters with fewer than ``wanted`` connected replicas (``INFO
        replication`` of each), said in words; None when none is. Raises what
        redis-py raises."""
        if self.clustered:
            found = dict(await self.client.info("replication", target_nodes=self.client.PRIMARIES))
        else:
            found = {redact(self.url): await self.client.info("replication")}
        short = [f"{name} has {int(info.get('connected_slaves', 0))}" for name, info in found.items()
                 if int(info.get("connected_slaves", 0)) < wanted]
        return f"master {', '.join(short)} connected replicas" if short else None

    def subscriber(self, host: str, port: int) -> aioredis.Redis:
        """A plain client (no retry) to the master at ``host:port``, for its
        sharded subscriptions (``SSUBSCRIBE``), with the URL's credentials;
        the caller closes it."""
        parts = urlsplit(self.url)
        auth = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
        path = parts.path if not self.clustered else ""
        url = urlunsplit((parts.scheme, f"{auth}{host}:{port}", path, parts.query, parts.fragment))
        return aioredis.Redis.from_url(url, decode_responses=False, socket_timeout=self.timeout,
                                       socket_connect_timeout=self.timeout, protocol=PROTOCOL,
                                       retry=Retry(NoBackoff(), 0), health_check_interval=0)

    async def close(self) -> None:
        """Close both clients (errors of dead connections ignored)."""
        for client in (self.client, self.once):
            try:
                await client.aclose()
            except Exception:
                pass
