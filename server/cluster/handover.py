"""Handing a node's tables to the other live nodes (SIGTERM, a rolling restart).

Each table in turn: it waits for what it is doing, its actor ends, its state
is written now (clocks as the time left now), and its lease is released
reserved for the least loaded live node (``node|handover|epoch``: nobody else
claims it, and the old owner can no longer write), which is asked through
its inbox to claim it. One at a time: each table pauses only for its own
final commit, release and claim (released side by side, the claims and
restores pile up on the receiving node and every pause grows). The receiving
node records the pause, from the old owner stopping the table to serving it,
in ``cardhall_handover_seconds``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redis import exceptions as rexc

from cardhall.server.cluster.host import NodeHost
from cardhall.server.cluster.leases import Leases
from cardhall.server.cluster.router import Router
from cardhall.server.store.base import LeaseLost, StoreUnavailable
from cardhall.server.store.redis import RedisStore

if TYPE_CHECKING:
    from cardhall.server.table.actor import TableActor

log = logging.getLogger("cardhall.cluster")


@dataclass(frozen=True)
class Parts:
    """What a handover works with: the hall, the store, the leases, the
    router, the live nodes' heartbeats, and what forgets a table's cluster
    state on this node."""

    host: NodeHost
    store: RedisStore
    leases: Leases
    router: Router
    live: dict[str, dict[str, Any]]
    forget: Callable[[str], None]


async def hand_over(parts: Parts, others: list[str], timeout: float) -> int:
    """Hand every table of ``parts.host`` to the live nodes ``others`` (the
    least loaded first), within ``timeout`` seconds; returns how many were
    handed over (none without another node: the service then stops as a
    single server does and frees the leases last)."""
    if not others:
        return 0
    loads = {n: parts.live.get(n, {}).get("tables", 0) for n in others}
    handed = 0
    deadline = time.monotonic() + timeout
    for table in list(parts.host.tables.values()):
        if time.monotonic() > deadline:
            break
        target = min(others, key=lambda n: loads[n])
        try:
            stopped = await release(parts, table, to=target)
        except (StoreUnavailable, LeaseLost, rexc.RedisError, OSError) as exc:
            log.warning("table %s not handed over: %s", table.id, exc)
            continue
        if stopped is not None:
            loads[target] += 1
            parts.router.send(target, ["claim", table.id, stopped])
            handed += 1
    await parts.router.outbox.drain()
    return handed


async def release(parts: Parts, table: TableActor, to: str | None = None) -> float | None:
    """Stop serving ``table`` here: wait for what it is doing (at most ~1 s),
    end its actor, write its state now and release its lease (reserved for
    node ``to``). Returns when the table stopped (Unix seconds: its pause
    starts there), or None when it was not this node's to release. Raises
    StoreUnavailable or LeaseLost when the state cannot be written."""
    for _ in range(100):
        if table.quiet:
            break
        await asyncio.sleep(0.01)
    host = parts.host
    if host.tables.get(table.id) is not table or table.token is None or table.unwritable:
        return None  # unwritable: its stored copy is quarantined, there is nothing to hand over
    stopped = time.time()
    table.drop()
    host.tables.pop(table.id, None)
    parts.forget(table.id)
    parts.router.forget_owner(table.id)
    token = table.token
    if not table.machine.stalled and not table.machine.pending.needs_commit:
        checkpoint = table.whole_checkpoint()  # the receiving node replays no log of this one
        await parts.store.commit([checkpoint])
        if checkpoint.error is not None:
            raise checkpoint.error
    table.token = None
    return stopped if await parts.leases.release(table.id, token, to) else None
