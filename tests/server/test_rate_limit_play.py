"""The frame rate limit catches floods, not play (SPEC "Limits"): a client
answering each of its turns at once, naming the turn, at a solo table whose
bots think for no time, plays a whole game under a rate limit far below its
pace without one refusal; a flood of the same act on one turn is still
refused."""

from __future__ import annotations

from dataclasses import replace

from cardhall.clients.client import ServerError
from tests.games import quick
from tests.server.conftest import TEST_SETTINGS, running_server
from tests.server.play import play, remember_seat

#: far below the pace of a table with no think time and no pause
SLOW = replace(TEST_SETTINGS, rate=5.0, burst=5.0, rate_strikes=1000)


async def test_a_client_answering_each_turn_at_once_is_never_rate_limited():
    async with running_server(SLOW) as srv:
        ann = await srv.client("ann")
        table = await ann.create_table("avalanche", seats=2, options=quick("avalanche", pause=0, bot_think=0), bots=1)
        snapshot = await ann.join(table, role="player", seed="s")
        remember_seat(ann, table, snapshot["you"])
        seen = await play(ann, table, "pace", snapshot=snapshot, timeout=120)
        acts = sum(1 for f in ann.frames if f.get("type") == "ok")
        assert seen[-1]["event"]["type"] == "match_ended"
        assert acts > 30  # many more answers than the bucket holds
        assert not [f for f in ann.frames if f.get("type") == "error"]
        await ann.close()


async def test_repeating_an_act_on_one_turn_is_still_limited():
    async with running_server(SLOW) as srv:
        ann = await srv.client("ann")
        table = await ann.create_table("loco_poker", seats=2, options={"pause": 0, "bot_think": 30, "dealer": 2}, bots=1)
        await ann.join(table, role="player")
        codes = []
        for _ in range(12):
            try:
                await ann.act(table, {"type": "dance"}, turn=1)
            except ServerError as exc:
                codes.append(exc.code)
        assert "rate_limited" in codes and codes.count("rate_limited") >= 12 - 5 - 1
        await ann.close()
