"""Commands packed by hiredis's C packer on redis-py's asyncio connections.

redis-py's synchronous connections pack each command with
``hiredis.pack_command`` when hiredis is installed; its asyncio connections
always use their Python packer, which builds the command's bytes argument by
argument. A group commit is one ``EVALSHA`` with some eighteen keys and arguments
per table, so at the service's maximum load that Python packing is a sizeable
share of the Redis store's CPU. :func:`use_hiredis_packing` gives a client's
connections (a ``Redis``'s pool, or every node of a ``RedisCluster``) ones
that pack the way the synchronous ones do: the same
bytes on the wire (the first argument split at spaces, ``bytes``, ``str`` as
UTF-8, ``int`` and ``float`` as their decimal text), made in one C call.

>>> hiredis_packed("EVALSHA", "f00", 1, b"k", "é", 2.5)
[b'*6\\r\\n$7\\r\\nEVALSHA\\r\\n$3\\r\\nf00\\r\\n$1\\r\\n1\\r\\n$1\\r\\nk\\r\\n$2\\r\\n\\xc3\\xa9\\r\\n$3\\r\\n2.5\\r\\n']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import Connection
from redis.exceptions import DataError

#: hiredis's packer: one command's arguments (a tuple of any length) to its
#: protocol bytes; None without it. (hiredis's stub types the argument as a
#: 1-tuple, ``Tuple[str | ...]``, where the C function takes a tuple of any
#: length, and leaves the result unannotated.)
_pack_command: Callable[[tuple[Any, ...]], bytes] | None
try:
    from hiredis import pack_command as _pack_command
except ImportError:  # no hiredis, or one older than pack_command (2.1): redis-py's own packer
    _pack_command = None


def hiredis_packed(*args: Any) -> list[bytes]:
    """The Redis protocol bytes of the command ``args`` as one chunk, as
    redis-py's synchronous hiredis serializer makes them: a first argument with
    spaces (``"SCRIPT LOAD"``) is split into words. Raises
    :class:`redis.exceptions.DataError` for an argument hiredis cannot pack
    (as redis-py's encoder does), and RuntimeError without hiredis's packer."""
    if _pack_command is None:
        raise RuntimeError("hiredis.pack_command is not available")
    first = args[0]
    if isinstance(first, str):
        args = (*first.encode().split(), *args[1:])
    elif b" " in first:
        args = (*first.split(), *args[1:])
    try:
        return [_pack_command(args)]  # str, bytes, int, float and memoryview as they are (what this store sends)
    except TypeError:
        pass
    try:  # a bytearray among them (hiredis refuses it): as bytes, as redis-py's encoder takes it
        return [_pack_command(tuple(bytes(a) if isinstance(a, (bytearray, memoryview)) else a for a in args))]
    except TypeError as exc:
        raise DataError(str(exc)) from None


class _HiredisPacking:
    """Mixin for a redis-py asyncio connection class: commands packed by :func:`hiredis_packed`."""

    def pack_command(self, *args: Any) -> list[bytes]:
        return hiredis_packed(*args)


#: connection class -> its hiredis-packing subclass (one class per kind, however many clients)
_PACKING: dict[type, type] = {}


def _packing(base: type) -> type:
    """``base`` (a connection class) packing with hiredis."""
    if issubclass(base, _HiredisPacking):
        return base
    if base not in _PACKING:
        _PACKING[base] = type(f"Hiredis{base.__name__}", (_HiredisPacking, base), {})
    return _PACKING[base]


def use_hiredis_packing(client: aioredis.Redis | RedisCluster) -> bool:
    """Give the connections ``client`` makes from now on hiredis's packer,
    keeping their kind (TCP, TLS, Unix socket). ``client`` is a ``Redis`` (its
    connection pool makes them) or a ``RedisCluster``: each of its nodes makes
    its own, from its ``connection_class``, and the nodes it finds later (a
    new master, a failover) take theirs from the client's ``connection_kwargs``,
    so both are changed. Returns True when applied; False, changing nothing,
    when hiredis has no ``pack_command``."""
    if _pack_command is None:
        return False
    if isinstance(client, RedisCluster):
        kwargs = client.connection_kwargs  # shared with its NodesManager: the nodes found later
        kwargs["connection_class"] = _packing(kwargs.get("connection_class", Connection))
        manager = client.nodes_manager
        nodes = [*client.startup_nodes, *manager.startup_nodes.values(), *manager.nodes_cache.values()]
        for node in nodes:
            node.connection_class = _packing(node.connection_class)
        return True
    pool = client.connection_pool
    pool.connection_class = _packing(pool.connection_class)
    return True
