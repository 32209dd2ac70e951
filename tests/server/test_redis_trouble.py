"""Which exceptions mean "Redis could not be reached" (a table stalls and waits) and which are a fault of our
own code (the table breaks): :func:`cardhall.server.store.redis_conn.redis_trouble`, with the errors raised
by redis-py's asyncio connections when a master is killed under them."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import Any

import pytest

from cardhall.server.store.redis_conn import redis_trouble


def _in_module(name: str, source: str, fn: str) -> Callable[..., Any]:
    """Function ``fn`` of ``source``, run as if it were code of module ``name``."""
    scope: dict[str, Any] = {"__name__": name}
    exec(compile(source, f"<{name}>", "exec"), scope)
    return scope[fn]


def _raised(call: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as caught:
        call()
    return caught.value


def test_a_closed_transport_written_through_redis_is_redis_trouble() -> None:
    """uvloop's "unable to perform operation on <TCPTransport closed=True>; the handler is closed",
    raised under asyncio's StreamWriter (its innermost Python frame) when redis-py writes to a
    connection a failover closed under it; the same error from our own code is ours."""
    uvloop = pytest.importorskip("uvloop", reason="the server's event loop where uvloop is installed")

    async def closed_writer() -> asyncio.StreamWriter:
        left, right = socket.socketpair()
        _, writer = await asyncio.open_connection(sock=left)
        writer.close()
        await writer.wait_closed()
        right.close()
        return writer

    async def check() -> None:
        writer = await closed_writer()
        through_redis = _in_module("redis.asyncio.connection", "def send(w):\n    w.writelines([b'PING'])\n", "send")
        exc = _raised(lambda: through_redis(writer))
        assert isinstance(exc, RuntimeError) and "the handler is closed" in str(exc), exc
        assert redis_trouble(exc)
        ours = _in_module("cardhall.server.table.turns", "def send(w):\n    w.writelines([b'PING'])\n", "send")
        assert not redis_trouble(_raised(lambda: ours(writer)))

    uvloop.run(check())


def test_our_own_faults_are_not_redis_trouble() -> None:
    ours = _in_module("cardhall.server.store.redis", "def f():\n    return None.writelines\n", "f")
    assert not redis_trouble(_raised(ours))
    theirs = _in_module("redis.asyncio.connection", "def f():\n    return None.writelines\n", "f")
    assert redis_trouble(_raised(theirs))
    through = _in_module("redis.asyncio.connection", "def f(g):\n    return g()\n", "f")
    assert not redis_trouble(_raised(lambda: through(ours)))  # our frame innermost: ours, even through redis-py
