"""A rematch's dealer or button is the seat after the previous match's first
one, never drawn and never the table option's seat again (RULES G-7, G-2;
SPEC "The order of every random choice"): a bots-only table created with the
option set, with automatic rematches, watched from ``since: 0``."""

from __future__ import annotations

import asyncio

import pytest

from tests.server.play import QUICK

#: game -> (the option naming the first dealer or button, seats)
CASES = {"alamo": ("dealer", 3), "avalanche": ("dealer", 3), "loco_poker": ("dealer", 3),
         "no_limit_holdem": ("button", 3)}
#: matches as short as the games allow: only each match's first dealer or button is looked at
SHORT = {"alamo": {"max_hands": 1}, "no_limit_holdem": {"starting_stacks": 40}}


@pytest.mark.parametrize("game", sorted(CASES))
async def test_rematches_move_the_dealer_on_from_the_option_seat(live, game):
    key, seats = CASES[game]
    owner = await live.client("owner")
    options = {**QUICK[game], **SHORT.get(game, {}), key: 2, "pause": 0, "bot_think": 0, "auto_rematch": True}
    table = await owner.create_table(game, seats=seats, options=options, bots=seats)
    watcher = await live.client("watcher")
    await watcher.join(table, role="spectator", since=0)
    firsts: list[int] = []
    async with asyncio.timeout(60):
        while len(firsts) < 3:
            frame = await watcher.next_event(table, timeout=30)
            event = frame["event"]
            if event["type"] == "match_started":
                firsts.append(event["options"][key])
    assert firsts == [2, 3, 1]
    await owner.close()
    await watcher.close()
