"""A rematch's dealer or button is the seat after the previous match's first
one, never drawn and never the table option's seat again (RULES G-7, G-2;
SPEC "The order of every random choice"): a bots-only table created with the
option set, with automatic rematches, watched from ``since: 0``."""

from __future__ import annotations

import asyncio

import pytest

from cardhall.engine.registry import engine_class
from tests.games import GAMES, quick, seats

#: the options naming a match's first dealer or button (a game has at most one of them)
SEAT_OPTIONS = ("dealer", "button")


def _seat_option(game: str) -> str | None:
    """The option of ``game`` that names the first dealer or button, or None."""
    names = {o.name for o in engine_class(game).options_spec}
    return next((name for name in SEAT_OPTIONS if name in names), None)


@pytest.mark.parametrize("game", [g for g in GAMES if _seat_option(g)])
async def test_rematches_move_the_dealer_on_from_the_option_seat(live, game):
    key, n = _seat_option(game), seats(game, 3)
    assert key is not None
    owner = await live.client("owner")
    options = quick(game, **{key: 2}, pause=0, bot_think=0, auto_rematch=True)
    table = await owner.create_table(game, seats=n, options=options, bots=n)
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
