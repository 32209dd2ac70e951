"""One master's share of this node's sharded subscriptions (for :mod:`.listener`).

Pub/sub is sharded (``SSUBSCRIBE``, ``SPUBLISH``), on a standalone Redis
too: a channel lives on the master serving its hash slot, and a
subscription to it is made on that master. A :class:`Shard` is this node's
one connection to one master (a plain ``redis.asyncio.Redis`` to it, no
retry: a connection that broke is never made again silently, messages may
have been lost meanwhile) and the channels subscribed there; its reader task
(:meth:`Shard.run`) hands each message on, in the order the master sent
them, and tells the listener when the subscription went wrong:

* the connection broke (the master was killed, restarted, failed over, the
  network dropped it): :attr:`Shard.broken`, every channel of it is to be
  subscribed again where its slot is served now;
* the master unsubscribed a channel itself (an ``sunsubscribe`` this node did
  not ask for: its slot moved to another master, a migration or a failover),
  or refused a subscription (``MOVED``: the slot map this node had was
  stale): the channel is in :attr:`Shard.lost`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from redis import exceptions as rexc

from cardhall.server.store.keys import slot
from cardhall.server.store.redis_conn import as_text

log = logging.getLogger("cardhall.cluster")

#: a master's ``(host, port)``
Address = tuple[str, int]


class Shard:
    """This node's sharded subscription on the master at ``address``, through
    ``client`` (``RedisConn.subscriber``: closed with the shard)."""

    def __init__(self, address: Address, client: Any) -> None:
        self.address = address
        self.client = client
        self.pubsub = client.pubsub()
        #: the channels subscribed here (or being subscribed)
        self.channels: set[str] = set()
        #: of those, the ones whose ``SSUBSCRIBE`` is not confirmed yet
        self.pending: set[str] = set()
        #: channels this node unsubscribed here and whose ``sunsubscribe`` has not come back yet
        self.leaving: set[str] = set()
        #: channels of :attr:`channels` the master no longer delivers here (unsubscribed by the master, refused)
        self.lost: set[str] = set()
        #: the connection broke: nothing of it is delivered any more
        self.broken = False
        self.closed = False
        self.task: asyncio.Task[None] | None = None
        #: when something last came from the master (monotonic s), and when it was pinged since (None: not)
        self.heard = time.monotonic()
        self.pinged: float | None = None

    async def connect(self) -> None:
        """Open the connection (raises RedisError or OSError)."""
        await self.pubsub.connect()

    async def join(self, channel: str) -> None:
        """``SSUBSCRIBE`` ``channel`` here (confirmed later, to the reader)."""
        self.channels.add(channel)
        self.pending.add(channel)
        self.lost.discard(channel)
        await self.pubsub.ssubscribe(channel)

    async def leave(self, channel: str) -> None:
        """``SUNSUBSCRIBE`` ``channel`` here."""
        self.channels.discard(channel)
        self.pending.discard(channel)
        lost = channel in self.lost
        self.lost.discard(channel)
        if not lost and not self.broken and not self.closed:  # closed: the connection is gone with it
            self.leaving.add(channel)
            await self.pubsub.sunsubscribe(channel)

    async def ping(self) -> None:
        """Ask the master for a sign of life (its ``pong`` comes to the reader)."""
        self.pinged = time.monotonic()
        await self.pubsub.ping()

    async def close(self) -> None:
        """End the reader and the connection."""
        self.closed = True
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()
        with contextlib.suppress(Exception):
            await self.client.aclose()

    def start(self, deliver: Callable[[bytes, bytes], None], trouble: Callable[[], None]) -> None:
        """Start the reader task (once)."""
        if self.task is None and not self.closed:
            name = f"cluster listener {self.address[0]}:{self.address[1]}"
            self.task = asyncio.get_running_loop().create_task(self.run(deliver, trouble), name=name)

    async def run(self, deliver: Callable[[bytes, bytes], None], trouble: Callable[[], None]) -> None:
        """Read the subscription until it breaks: each message to ``deliver``
        (channel, data), in the order the master sent them; ``trouble()``
        when a channel or the whole connection needs subscribing again."""
        while True:
            try:
                message = await self.pubsub.get_message(timeout=None)  # blocks: no timer per message
            except asyncio.CancelledError:
                raise
            except rexc.ResponseError as exc:  # a command of this connection refused: an SSUBSCRIBE
                self._refused(exc)
                trouble()
                continue
            except Exception as exc:  # whatever stops the reading (redis-py's own errors included) breaks it
                if not self.closed:
                    log.warning("cluster listener: subscription at %s:%d broke: %s", *self.address, exc)
                    self.broken = True
                    trouble()
                return
            self.heard = time.monotonic()
            self.pinged = None
            if message is None:
                continue
            kind = message["type"]
            if kind == "smessage":
                try:
                    deliver(message["channel"], message["data"])
                except Exception:
                    log.exception("cluster listener: a message could not be handled")
            elif kind == "ssubscribe":
                self.pending.discard(as_text(message["channel"]))
            elif kind == "sunsubscribe":
                channel = as_text(message["channel"])
                if channel in self.leaving:
                    self.leaving.discard(channel)
                elif channel in self.channels:  # not asked for: its slot is served by another master now
                    log.info("cluster listener: %s:%d unsubscribed %s (its slot moved)", *self.address, channel)
                    self.pending.discard(channel)
                    self.lost.add(channel)
                    trouble()

    def _refused(self, exc: rexc.ResponseError) -> None:
        """A subscription was refused: with ``MOVED`` the waiting ones of that
        slot, otherwise every one still waiting, are lost here."""
        moved = getattr(exc, "slot_id", None) if isinstance(exc, rexc.MovedError) else None
        refused = {c for c in self.pending if moved is None or slot(c) == moved}
        log.warning("cluster listener: %s:%d refused subscribing %s: %s", *self.address, sorted(refused), exc)
        self.pending -= refused
        self.lost |= refused
