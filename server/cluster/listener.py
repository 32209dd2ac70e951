"""This node's one Redis subscription: its inbox and the channels of the tables it relays.

One task reads it (:meth:`Listener.run`): a message on the inbox goes to the
node (``on_inbox``), one on a table's channel to the router
(:meth:`~cardhall.server.cluster.router.Router.on_channel`), in the order
Redis delivered them. When the subscription breaks (Redis restarted, the
connection dropped) a new one is made, retried until Redis answers, with
every relayed table's channel; meanwhile messages may have been lost, so
every relayed connection then resumes from its cursor (:meth:`Router.resync`).
A table relayed while the subscription is made again is subscribed on the
new one, never on the one being replaced (no message of it would be read).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from redis import exceptions as rexc

from cardhall.server.cluster import wire
from cardhall.server.cluster.router import Router
from cardhall.server.store.keys import Keys

log = logging.getLogger("cardhall.cluster")

#: seconds between two attempts to subscribe again while Redis does not answer
RETRY = 0.5


class Listener:
    """The subscription of node ``node`` through ``client`` (redis-py asyncio)."""

    def __init__(self, client: Any, keys: Keys, node: str, on_inbox: Callable[[list[Any]], None],
                 router: Router) -> None:
        self.client = client
        self.keys = keys
        self.inbox = keys.inbox(node)
        self.on_inbox = on_inbox
        self.router = router
        self._pubsub: Any = None
        #: set while :attr:`_pubsub` is the subscription the listener reads (clear while it is made again)
        self._ready = asyncio.Event()

    async def open(self) -> None:
        """Subscribe the inbox (once; raises RedisError or OSError)."""
        if self._pubsub is None:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            await pubsub.subscribe(self.inbox)
            self._pubsub = pubsub
            self._ready.set()

    async def close(self) -> None:
        """End the subscription."""
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()

    async def subscribe(self, channel: str) -> None:
        """Listen on ``channel`` too (a subscription being made again is waited for)."""
        await self._ready.wait()
        try:
            await self._pubsub.subscribe(channel)
        except (rexc.RedisError, OSError) as exc:
            log.warning("could not subscribe to %s: %s", channel, exc)

    async def unsubscribe(self, channel: str) -> None:
        """Stop listening on ``channel``."""
        with contextlib.suppress(rexc.RedisError, OSError):
            await self._pubsub.unsubscribe(channel)

    async def run(self) -> None:
        """Read the subscription for ever, handing each message on."""
        inbox = self.inbox.encode()
        skip = len(self.keys.prefix) + 2  # "P:{"
        while True:
            try:
                message = await self._pubsub.get_message(timeout=None)  # blocks: no timer per message
            except asyncio.CancelledError:
                raise
            except (rexc.RedisError, OSError) as exc:
                log.warning("cluster listener: %s; subscribing again", exc)
                await asyncio.sleep(RETRY)
                await self._again()
                continue
            if message is None or message.get("type") != "message":
                continue
            try:
                data = wire.unpack(message["data"])
                if message["channel"] == inbox:
                    self.on_inbox(data)
                else:
                    self.router.on_channel(message["channel"][skip:].decode().split("}", 1)[0], data)
            except Exception:
                log.exception("cluster listener: a message could not be handled")

    async def _again(self) -> None:
        """A new subscription (the inbox and every relayed table's channel),
        retried until Redis answers; then every relayed connection resumes."""
        self._ready.clear()
        with contextlib.suppress(Exception):
            await self._pubsub.aclose()
        while True:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.inbox, *[self.keys.channel(t) for t in self.router.relayed])
            except (rexc.RedisError, OSError):
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                await asyncio.sleep(RETRY)
                continue
            self._pubsub = pubsub
            break
        self._ready.set()
        self.router.resync()
