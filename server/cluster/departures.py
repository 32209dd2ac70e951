"""Nodes that left the registry: their subscribers at this node's tables are let go.

A node missing from the registry for a whole lease TTL is gone: it died, so
no ``disconnect`` of its connections will ever come, and the subscribers it
had at this node's tables are disconnected here. A node missing for less is
not yet gone (right after Redis lost its data every node is missing until
its next heartbeat: no reason to forget its connections).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from cardhall.server.cluster import wire
from cardhall.server.table.inputs import Disconnect

if TYPE_CHECKING:
    from cardhall.server.table.actor import TableActor

#: seconds a gone node is remembered (then forgotten: a subscriber of it seen later is missing anew)
FORGET_AFTER = 60.0


class Departures:
    """Node ``node``'s record of the nodes missing from the registry (a node
    missing ``ttl`` seconds is gone)."""

    def __init__(self, node: str, ttl: float) -> None:
        self.node = node
        self.ttl = ttl
        self.missing: dict[str, float] = {}  # node no longer live -> since when (monotonic s)

    def seen(self, before: Iterable[str], live: Iterable[str]) -> bool:
        """The live nodes were ``before`` and are ``live`` now; True when a
        node has been missing for a TTL (:meth:`prune` then lets it go)."""
        live = set(live)
        now = time.monotonic()
        for node in set(before) - live:
            self.missing.setdefault(node, now)
        for node in live:
            self.missing.pop(node, None)
        return any(now - at > self.ttl for at in self.missing.values())

    def prune(self, tables: Mapping[str, TableActor], live: Mapping[str, Any]) -> None:
        """Subscribers of ``tables`` whose node has been missing from ``live``
        (the registry) for a TTL are disconnected; a node never seen live
        counts as missing from the first time one of its subscribers is seen."""
        now = time.monotonic()
        for table in tables.values():
            for key in table.machine.subscribers.viewers:
                parsed = wire.parse_key(key)
                if parsed is not None and parsed[0] not in live and parsed[0] != self.node:
                    self.missing.setdefault(parsed[0], now)
        gone = {n for n, at in self.missing.items() if now - at > self.ttl}
        for table in list(tables.values()):
            for key in list(table.machine.subscribers.viewers):
                parsed = wire.parse_key(key)
                if parsed is not None and parsed[0] in gone:
                    table.post(Disconnect(key))
        for node in gone:
            if now - self.missing[node] > FORGET_AFTER:
                del self.missing[node]
