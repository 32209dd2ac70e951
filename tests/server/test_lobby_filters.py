"""The lobby's list (``GET /api/tables``, SPEC "HTTP"): its filters by game,
free seats, bots and stakes, a player's own tables first, unlisted tables
and finished tables nobody is connected to left out, a bad filter refused."""

from __future__ import annotations

from typing import Any

import httpx

from cardhall.clients.client import Client
from tests.conftest import until
from tests.server.conftest import LiveServer

QUICK = {"pause": 0, "bot_think": 0}


async def lobby(live: LiveServer, **params: Any) -> list[str]:
    """The ids the lobby lists for ``params``, in its order."""
    async with httpx.AsyncClient(base_url=live.http) as http:
        answer = await http.get("/api/tables", params=params)
    assert answer.status_code == 200, answer.text
    return [t["id"] for t in answer.json()]


async def table(client: Client, game: str, seats: int, bots: int, **options: Any) -> str:
    return await client.create_table(game, seats=seats, bots=bots, options={**QUICK, **options})


async def test_the_filters_narrow_the_list(live: LiveServer) -> None:
    ann, bob = await live.client("ann"), await live.client("bob")
    low = await table(ann, "no_limit_holdem", 4, 1, small_blind=5, big_blind=10)
    default = await table(ann, "no_limit_holdem", 4, 0)  # the catalogue's big blind: 20
    loco = await table(bob, "loco_poker", 3, 1)
    people = await table(bob, "loco_poker", 2, 0)
    assert set(await lobby(live)) == {low, default, loco, people}
    assert set(await lobby(live, game="loco_poker")) == {loco, people}  # in no promised order
    assert set(await lobby(live, free=3)) == {low, default}
    assert set(await lobby(live, free=2)) == {low, default, loco, people}
    assert set(await lobby(live, bots="true")) == {low, loco}
    assert set(await lobby(live, bots="false")) == {default, people}
    assert await lobby(live, max_big_blind=10) == [low]
    assert await lobby(live, min_big_blind=15, max_big_blind=20) == [default]
    assert await lobby(live, min_big_blind=0, game="loco_poker") == []  # no blinds: left out
    async with httpx.AsyncClient(base_url=live.http) as http:
        entries = {t["id"]: t for t in (await http.get("/api/tables")).json()}
    assert (entries[low]["bots"], entries[default]["bots"], entries[low]["password"]) == (1, 0, False)


async def test_a_players_own_tables_come_first(live: LiveServer) -> None:
    ann, bob = await live.client("ann"), await live.client("bob")
    tables = [await table(ann, "loco_poker", 3, 1) for _ in range(2)]
    bobs = await table(bob, "loco_poker", 3, 1)
    await bob.join(tables[1], role="player")
    order = await lobby(live, player=bob.player)
    assert set(order[:2]) == {bobs, tables[1]} and order[2] == tables[0]
    assert set((await lobby(live, player=ann.player))[:2]) == set(tables)


async def test_unlisted_and_deserted_finished_tables_are_left_out(live: LiveServer) -> None:
    ann = await live.client("ann")
    hidden = (await ann.request({"type": "create_table", "game": "loco_poker", "seats": 2, "bots": 1,
                                 "options": {**QUICK, "visibility": "unlisted"}}))["table"]
    finished = await table(ann, "loco_poker", 2, 2, points_to_win=1)
    watcher = await live.client("watcher")
    await watcher.join(finished, role="spectator")
    await until(lambda: live.hall.tables[finished].machine.status == "finished", timeout=60, what="the match's end")
    assert finished in await lobby(live) and hidden not in await lobby(live)
    await watcher.leave(finished)
    await until(lambda: live.hall.tables[finished].machine.subscribers.count == 0, what="nobody connected")
    assert finished not in await lobby(live) and hidden not in await lobby(live, bots="true")


async def test_a_bad_filter_is_a_bad_request(live: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=live.http) as http:
        for params in ({"free": "0"}, {"free": "x"}, {"bots": "maybe"}, {"max_big_blind": "-1"}):
            answer = await http.get("/api/tables", params=params)
            assert answer.status_code == 400 and answer.json()["code"] == "bad_request", params
