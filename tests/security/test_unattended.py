"""Bots never play at full speed for a table its people walked away from
(deploy/README.md, ``--bot-think-floor``): a table created with ``bot_think``
0 by its owner plays fast while the owner is in play; once the owner sits out
and leaves, every bot decision waits at least half the floor (bots think
0.5x to 1.5x their mean), as the events' own timestamps show."""

from __future__ import annotations

from dataclasses import replace

from tests.server.conftest import TEST_SETTINGS, running_server

FLOOR = 0.3


async def test_bots_of_a_table_its_people_left_think_at_least_the_floor():
    async with running_server(replace(TEST_SETTINGS, bot_think_floor=FLOOR)) as srv:
        ann = await srv.client("ann")
        table = await ann.create_table("no_limit_holdem", seats=2, bots=1,
                                       options={"bot_think": 0, "pause": 0, "starting_stacks": 100_000})
        eve = await srv.client("eve")
        await eve.join(table, role="spectator")
        me = (await ann.join(table, role="player"))["you"]
        await ann.act(table, {"type": "sit_out"})
        await ann.leave(table)
        frames = []
        while sum(1 for f in frames if f["event"]["type"] == "action" and f["event"]["seat"] != me) < 6:
            frames.append(await eve.next_event(table, timeout=10))
        # a bot's think: from the `turn` event that gave it the turn to its `action` (other frames,
        # such as the owner's `presence` when leaving, can arrive while it thinks)
        waits, turn_at = [], None
        for f in frames:
            e = f["event"]
            if e["type"] == "turn":
                turn_at = f["ts"] if e["seat"] != me else None
            elif e["type"] == "action" and e["seat"] != me and turn_at is not None:
                waits.append(f["ts"] - turn_at)
        assert len(waits) >= 5 and min(waits[-5:]) >= FLOOR * 0.5, waits
        assert info_think(await eve.join(table, role="spectator")) == 0  # the table's option is unchanged
        await ann.close()
        await eve.close()


def info_think(snapshot):
    return snapshot["info"]["options"]["bot_think"]
