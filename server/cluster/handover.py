"""Handing a node's tables to the other live nodes (SIGTERM, a rolling restart).

Each table in turn (a single table the same way when rebalancing,
:mod:`.rebalance`): it waits for what it is doing, its actor ends, its state
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
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redis import exceptions as rexc

from cardhall.server.cluster import leaving
from cardhall.server.cluster.host import NodeHost
from cardhall.server.cluster.leases import Leases
from cardhall.server.cluster.peers import Owned
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
        released = await release(parts, table, to=target)
        if released is not None and released.error is not None:
            log.warning("table %s not handed over: %s", table.id, released.error)
        elif released is not None and released.freed:
            loads[target] += 1
            parts.router.send(target, ["claim", table.id, released.stopped])
            handed += 1
    await parts.router.outbox.drain()
    return handed


@dataclass
class Released:
    """A table this node stopped serving (:func:`release`): ``stopped``, when
    (Unix seconds: its pause starts there); ``unanswered``, the requests it
    had taken and not answered (``(subscriber, re)``: nothing of them was
    written); ``token``, its lease when it stopped; ``freed``, its lease
    released (reserved for the node it goes to); ``error``, why its state or
    its lease could not be written."""

    stopped: float
    unanswered: list[tuple[Hashable, Any]]
    token: str | None = None
    freed: bool = False
    error: BaseException | None = None


async def release(parts: Parts, table: TableActor, to: str | None = None) -> Released | None:
    """Stop serving ``table`` here: wait for what it is doing (at most ~1 s),
    end its actor, write its state now and release its lease (reserved for
    node ``to``). None when it was not this node's to release (nothing
    happened); else what happened (:class:`Released`)."""
    for _ in range(100):
        if table.quiet:
            break
        await asyncio.sleep(0.01)
    host = parts.host
    if host.tables.get(table.id) is not table or table.token is None or table.unwritable:
        return None  # unwritable: its stored copy is quarantined, there is nothing to hand over
    token = table.token
    released = Released(time.time(), table.drop(), token)
    host.tables.pop(table.id, None)
    parts.forget(table.id)
    parts.router.forget_owner(table.id)
    try:
        if not table.machine.stalled and not table.machine.pending.needs_commit:
            checkpoint = table.whole_checkpoint()  # the receiving node replays no log of this one
            await parts.store.commit([checkpoint])
            if checkpoint.error is not None:
                raise checkpoint.error
        table.token = None
        released.freed = await parts.leases.release(table.id, token, to)
    except (StoreUnavailable, LeaseLost, rexc.RedisError, OSError) as exc:
        released.error = exc
    return released


async def move(parts: Parts, table: TableActor, to: str, owned: Owned) -> bool:
    """Hand ``table`` to live node ``to`` while this node goes on
    (rebalancing, :mod:`.rebalance`): released as a stopping node releases
    it, ``to`` asked to claim it (``["claim", table, stopped, "rebalance"]``:
    it records the pause in ``cardhall_rebalance_pause_seconds``); the
    requests it had not answered get ``unavailable`` and this node's
    connections watching it follow it (:mod:`.leaving`). True when it was
    handed over; False when it stays here: also when its final state or its
    lease could not be written (the store went away, or lost its data), when
    it is served here again from its state in memory
    (:func:`~cardhall.server.cluster.leaving.revive`)."""
    released = await release(parts, table, to=to)
    if released is None:
        return False
    leaving.refuse(parts.host, owned, table, released.unanswered)
    if released.error is not None:
        log.warning("table %s not moved to %s: %s; served here again", table.id, to, released.error)
        await leaving.revive(parts.host, table, released.token)
        return False
    if released.freed:  # the claim first: the connections' joins that follow find it claimed, or on its way
        parts.router.send(to, ["claim", table.id, released.stopped, "rebalance"])
        parts.host.metrics.rebalanced()
    else:
        log.warning("table %s not moved to %s: its lease was not this node's", table.id, to)
    leaving.follow(parts.host, parts.router, table)
    return released.freed
