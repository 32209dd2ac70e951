"""Every numeric option has an upper bound, checked at creation: past it,
``create_table`` is refused with ``bad_options`` naming the option, before any
table exists. The options come from ``GET /api/games`` (games' and table
options alike), so an option added later is covered without touching this
test; at the bounds themselves a match plays to its end without breaking
(the sums of chips stay far inside what every client's numbers hold)."""

from __future__ import annotations

from typing import Any

import httpx

from cardhall.clients.client import Client, ServerError
from tests.server.conftest import LiveServer

#: values no option may take: past every bound a real table would need, and past 64 bits
HUGE = (2**53 + 1, 2**63, 2**64 - 1)


def _numeric(options: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in options if o["type"] in ("int", "number")]


def _past(option: dict[str, Any]) -> list[Any]:
    """Values just past ``option``'s maximum and far past it (as a list too, for a per-seat option)."""
    top = option["max"]
    values: list[Any] = [top + 1 if option["type"] == "int" else top * 2 + 1, *HUGE]
    if option.get("per_seat"):
        values.append([top + 1, 1])
    return values


async def _refused(client: Client, game: str, seats: int, options: dict[str, Any]) -> ServerError:
    try:
        await client.create_table(game, seats=seats, options=options)
    except ServerError as exc:
        return exc
    raise AssertionError(f"{game} accepted {options}")


async def test_every_numeric_option_has_a_bound_checked_at_creation(live: LiveServer):
    async with httpx.AsyncClient(base_url=live.http, timeout=5) as http:
        catalogue = (await http.get("/api/games")).json()
    table_options = _numeric(catalogue["table_options"])
    assert table_options
    checked = 0
    for game in catalogue["games"]:
        client = await live.client(f"bounds {game['name']}", codec="json")  # one connection per game: its own rate
        options = _numeric(game["options"]) + table_options
        assert options, game["name"]
        for option in options:
            assert isinstance(option.get("max"), (int, float)), f"{game['name']}.{option['name']} has no maximum"
            assert isinstance(option.get("min"), (int, float)), f"{game['name']}.{option['name']} has no minimum"
            if option["type"] == "int":  # chip amounts keep every sum of a match exact in a JSON client
                assert option["max"] * game["seats"]["max"] < 2**53 / 1000, option
            for value in _past(option):
                exc = await _refused(client, game["name"], game["seats"]["min"], {option["name"]: value})
                assert exc.code == "bad_options", (game["name"], option["name"], value, exc.frame)
                assert exc.frame.get("option") == option["name"], exc.frame
                checked += 1
        await client.close()
    assert checked > 40
    assert [t for t in live.hall.tables.values()] == []  # nothing was created


async def test_a_match_at_the_bounds_plays_to_its_end(live: LiveServer):
    async with httpx.AsyncClient(base_url=live.http, timeout=5) as http:
        catalogue = (await http.get("/api/games")).json()
    nl = next(g for g in catalogue["games"] if g["name"] == "no_limit_holdem")
    top = {o["name"]: o["max"] for o in nl["options"] if o["type"] == "int"}
    seats = nl["seats"]["max"]
    options = {"starting_stacks": top["starting_stacks"], "small_blind": top["small_blind"] // 3,
               "big_blind": top["big_blind"] // 2, "ante": top["ante"] // 7, "blind_levels": 1,
               "pause": 0, "bot_think": 0}
    client = await live.client("watcher", codec="json")
    table = await client.create_table("no_limit_holdem", seats=seats, options=options, bots=seats)
    await client.join(table, role="spectator")
    seen: list[str] = []
    while not seen or seen[-1] not in ("match_ended", "broken"):
        seen.append((await client.next_event(table, timeout=10))["event"]["type"])
    assert seen[-1] == "match_ended" and "broken" not in seen
    assert live.hall.tables[table].machine.status == "finished"
    await client.close()
