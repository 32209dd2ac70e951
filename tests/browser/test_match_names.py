"""A finished match's result names who played it (table.js ``playedNames``: ``match_ended.names``,
else ``match_started.names``, protocol 1.6; else the seat's occupant now, an older server's way).

Bob and Cat watch a table from before its match; Ann sits and plays a quick match against a bot.
Cat's page reads the frames as if ``match_ended`` carried no names (the fallback to
``match_started``'s). Once the match is over Ann
leaves and Bob takes her seat: the seat shows Bob, and on both watchers' pages the result banner's
ranking and winner line still name Ann, never Bob.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from playwright.async_api import expect

from tests.browser.pages import new_tab, play_to_end
from tests.games import quick
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

GAME = "loco_poker"
FAST = {"bot_think": 0, "pause": 0}
ANN = "Ann Played-This-Match"
BOB = "Bob Sat-Down-Later"


def named(name: str) -> str:
    """An init script: the page's player says ``hello`` under ``name`` (conn.js ``savedName``)."""
    return f"localStorage.setItem('cardhall.name', {json.dumps(name)});"


#: the page reads every ``match_ended`` without ``names`` (as from a server that sent only
#: ``match_started``'s); the frames on the wire are untouched (instrumentation only)
NO_ENDED_NAMES = """
(() => {
  const Native = window.WebSocket;
  const strip = (f) => f.type === "batch" ? { ...f, frames: f.frames.map(strip) }
    : f.type === "event" && f.event.type === "match_ended" ? { ...f, event: { ...f.event, names: undefined } } : f;
  window.WebSocket = class extends Native {
    set onmessage(fn) { super.onmessage = (msg) => fn({ data: JSON.stringify(strip(JSON.parse(msg.data))) }); }
  };
})();
"""


async def test_the_ranking_names_who_played_after_another_takes_the_seat(server: LiveServer, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.http) as http:
        r = await http.post("/api/tables", json={"game": GAME, "seats": 2, "bots": 1, "options": quick(GAME, **FAST)})
        table = r.json()["table"]
    bob = await new_tab(browser, server.http, f"/#/t/{table}/watch", init_script=named(BOB))
    cat = await new_tab(browser, server.http, f"/#/t/{table}/watch", init_script=named("Cat") + NO_ENDED_NAMES)
    ann = await new_tab(browser, server.http, f"/#/t/{table}", init_script=named(ANN))
    await ann.page.click("[data-control=sit]")
    for tab in (bob, cat):  # both see the match from its start
        await expect(tab.page.locator(".seat[data-seat='1'] .seat-name")).to_have_text(ANN)
    await play_to_end(ann, GAME)
    for tab in (bob, cat):  # the watchers' pages have the match's end too (it reaches each in its own time)
        await expect(tab.page.locator(".result-banner .ranking")).to_contain_text(ANN)
    started = next(f["event"] for f in cat.events(table) if f["event"]["type"] == "match_started")
    assert started["names"]["1"] == ANN and set(started["names"]) == {"1", "2"}
    ended = next(f["event"] for f in bob.events(table) if f["event"]["type"] == "match_ended")
    assert ended["names"]["1"] == ANN

    await ann.page.click("[data-control=leave]")
    await ann.page.wait_for_selector("#create-button")  # back in the lobby: the seat is free
    await bob.page.click("[data-control=sit]")
    await expect(bob.page.locator(".table-page")).to_have_attribute("data-you", "1")
    for tab in (bob, cat):
        page = tab.page
        await expect(page.locator(".seat[data-seat='1'] .seat-name")).to_contain_text(BOB)
        banner = page.locator(".result-banner")
        await expect(banner.locator(".ranking")).to_contain_text(ANN)
        assert BOB not in await banner.inner_text()
        winners = [ended["names"][str(s)] for s in ended["result"]["winners"]]
        await expect(banner.locator("h2")).to_have_text(f"{' & '.join(winners)} {'win' if len(winners) > 1 else 'wins'}!")
        assert not tab.errors, tab.errors
    for tab in (ann, bob, cat):
        await tab.close()
