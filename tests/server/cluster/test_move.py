"""A rebalancing move whose final write fails (server/cluster/handover.py
``move``, server/cluster/leaving.py): one node in process on a private
``redis-server``, a bots table playing, a spectator on a real websocket.

Redis loses its data (``FLUSHALL``) just before the move, the table paused by
its owner so that the move's final write is the first to meet the emptied
Redis: that write fails and the table's stored copy is gone. The move reports
failure and the table is not lost: it is served on the giving node again
from its state in memory, its spectator goes on receiving its events in
order, and once the node writes every table back into the emptied Redis the
table (resumed) is stored again and plays on.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import redis.asyncio as aioredis

from cardhall.clients.client import Client, ServerError
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, RedisServer, running_server

BOTS = {"game": "no_limit_holdem", "seats": 2, "bots": 2,
        "options": {"bot_think": 0.05, "pause": 0.05, "auto_rematch": True}}


async def _seqs(client: Client, table: str, count: int) -> list[int]:
    """The ``seq`` of the next ``count`` frames of ``table`` (events, or a snapshot without ``re``)."""
    out: list[int] = []
    while len(out) < count:
        frame = await asyncio.wait_for(client.inbox.get(), 20)
        if frame.get("table") == table and "seq" in frame:
            out.append(frame["seq"] if frame.get("type") != "snapshot" else -frame["seq"])
    return out


async def _resumed(owner: Client, table: str) -> bool:
    """Ask ``table`` to resume: True when it did, False when answered ``unavailable``."""
    try:
        await owner.act(table, {"type": "resume"})
    except ServerError as exc:
        if exc.code != "unavailable":
            raise
        return False
    return True


async def test_a_move_whose_final_write_fails_keeps_the_table(redis_server: RedisServer) -> None:
    # no probe timer, a renewal a minute apart and the table paused: nothing but the move itself may
    # meet the emptied Redis first (a probe, renewal or commit that found it empty would write
    # everything back before the move's final write, which would then succeed)
    settings = replace(TEST_SETTINGS, redis_url=redis_server.url, redis_prefix="move-fails", node_id="a",
                       lease_ttl=180, lease_renew=60, rebalance_rate=0, store_probe=0)
    async with running_server(settings) as a:
        owner = await a.client("owner")
        table = await owner.create_table(**BOTS)
        await owner.join(table, role="spectator")  # the owner's pause and resume need a join
        watcher = await a.client("watcher")
        await watcher.join(table, role="spectator")
        await _seqs(watcher, table, 5)  # it plays
        node = a.hall.topology.node  # type: ignore[attr-defined]
        actor = a.hall.tables[table]
        db = aioredis.Redis.from_url(redis_server.url)
        try:
            await owner.act(table, {"type": "pause"})  # no commit of its own meets the emptied Redis first
            await db.flushall()
            assert await node.move(actor, "b") is False
            revived = a.hall.tables.get(table)
            assert revived is not None and revived is not actor, "the table is served here again"
            # the resume's commit finds Redis empty: it is answered unavailable while the node writes
            # every table back (SPEC "Errors": retry), then ok
            await until(lambda: _resumed(owner, table), 20, "the table resumed")
            await until(lambda: node.leases.stored(table), 20, "the table stored again")  # written back with the others
            try:
                after = await _seqs(watcher, table, 20)
            except TimeoutError:
                raise AssertionError(f"the spectator heard nothing more: closed {watcher.close_codes}") from None
        finally:
            await db.aclose()
        events = [s for s in after if s > 0]
        assert events == sorted(events) and len(set(events)) == len(events), after  # in order, no repeat
        snapshots = [i for i, s in enumerate(after) if s < 0]
        for i, s in enumerate(after[1:], 1):  # gap-free, but where a snapshot replaced what was not buffered
            if s > 0 and after[i - 1] > 0:
                assert s == after[i - 1] + 1, after
        assert len(snapshots) <= 1, after
        await owner.close()
        await watcher.close()
