"""A game the page has no drawing for, in Chromium: High Card (tests/toygame, registered in this
process for the module without its browser module, so its catalogue entry names no renderer) is created from the lobby and played
to the end through the generic renderer: the view and the events as data, the legal actions as
buttons with an amount field; the G-2 check says it is not available for this game. A spectator's
page never shows the player's card. A registration that names a renderer file gets it served
(``/games/<game>/<file>``) and the page draws the game with it."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from cardhall.engine import plugins
from tests.browser.conftest import screenshot_path
from tests.browser.pages import create_table, new_tab, play_to_end
from tests.server.conftest import TEST_SETTINGS, LiveServer, running_server
from tests.toygame.engine import HighCard

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

HERE = Path(__file__).resolve().parent


class DrawnHighCard(HighCard):
    """High Card under another name, registered with a web renderer file of its own."""

    game = "high_card_drawn"
    title = "High Card (own renderer)"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[LiveServer]:
    """A live server that knows High Card (no renderer) and High Card Drawn (a renderer file)."""
    (registered,) = plugins.load_module("tests.toygame")
    toy = dataclasses.replace(registered, web_renderer=None)  # its own module set aside: the generic one draws it
    drawn = dataclasses.replace(toy, name="high_card_drawn", engine=DrawnHighCard, schema=None,
                                web_renderer=HERE / "renderers" / "drawn.js", source="tests.browser")
    with plugins.registered(toy, drawn):
        async with running_server(dataclasses.replace(TEST_SETTINGS, max_tables_per_player=100)) as srv:
            yield srv


async def test_play_a_game_through_the_generic_renderer(server: LiveServer, browser: Any) -> None:
    player = await new_tab(browser, server.http)
    page = player.page
    await page.wait_for_selector("#game option[value=high_card]", state="attached")
    table = await create_table(player, "high_card", 2, 1, {"hands": 2, "max_bet": 4}, {"bot_think": 0, "pause": 0})
    watcher = await new_tab(browser, server.http, f"/#/t/{table}/watch")
    await watcher.page.wait_for_selector(".table-page[data-you='']")

    seen: list[str] = []

    async def look(clicks: int, kind: str) -> None:
        if kind != "bet":
            return
        panel = page.locator(".action-panel")
        assert await panel.locator("button[data-action=fold][aria-keyshortcuts]").count() == 1
        amount = panel.locator("#amount-bet")
        assert (await amount.get_attribute("min"), await amount.get_attribute("max")) == ("1", "4")
        if not seen:
            await amount.fill("3")  # the legal action's field: the bet sent carries it
            await page.screenshot(path=screenshot_path("generic-player"))
        # the player's own card, from its private deal event, is drawn in the centre
        card = page.locator(".generic-view .generic-event[data-type=deal] dd[data-key=card] .card")
        seen.append(await card.get_attribute("data-card"))

    clicks = await play_to_end(player, "high_card", on_decision=look)
    assert clicks >= 2 and seen
    bets = [m["action"] for m in player.sent if m.get("type") == "act" and m["action"]["type"] == "bet"]
    assert bets[0] == {"type": "bet", "amount": 3} and all(1 <= b["amount"] <= 4 for b in bets), bets
    deals = [f["event"]["card"] for f in player.events(table) if f["event"]["type"] == "deal"]
    assert set(seen) <= set(deals)
    # the log has the game's events as data; the result and the check's verdict
    log = await page.locator(".log li").all_inner_texts()
    assert any(line.startswith("deal: hand 1, order ") for line in log), log
    assert any(line.startswith("hand_end: hand 2") for line in log), log
    await page.wait_for_selector(".fair .verdict[data-status=unavailable]")
    assert "not available for this game" in await page.locator(".fair .verdict").inner_text()
    await page.screenshot(path=screenshot_path("generic-result"))
    # the spectator: no card of the player's, ever; the same end
    await watcher.page.wait_for_selector(".result-banner")
    for f in watcher.events(table):
        assert not (f["event"]["type"] == "deal" and "card" in f["event"]), f
    shown = {c for f in watcher.events(table) if f["event"]["type"] == "showdown" for c in f["event"]["cards"].values()}
    on_page = set(await watcher.page.locator(".card[data-card]").evaluate_all("els => els.map(e => e.dataset.card)"))
    assert on_page <= shown
    for tab in (player, watcher):
        checked, problems = tab.schema_failures()
        assert not problems, problems
        assert checked["event:high_card:deal"] >= 1 and checked["snapshot:high_card"] >= 1, checked
        assert not tab.errors, tab.errors
        await tab.close()


async def test_a_renderer_file_of_a_registration_is_served_and_used(server: LiveServer, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.http) as http:
        games = (await http.get("/api/games")).json()["games"]
        for g in games:  # the built-in games' renderers are the client's own files; the toy has none
            if g["name"] in ("high_card", "high_card_drawn"):
                continue
            assert g["renderer"].startswith("/web/js/games/"), g
            assert (await http.get(g["renderer"])).status_code == 200, g["renderer"]
        assert "renderer" not in next(g for g in games if g["name"] == "high_card")
        entry = next(g for g in games if g["name"] == "high_card_drawn")
        assert entry["renderer"] == "/games/high_card_drawn/drawn.js"
        r = await http.get(entry["renderer"])
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")
        assert r.text == (HERE / "renderers" / "drawn.js").read_text()
        for path in ("/games/high_card_drawn/../conftest.py", "/games/high_card_drawn/conftest.py",
                     "/games/high_card/drawn.js", "/games/nothing/drawn.js"):
            assert (await http.get(path)).status_code == 404, path
    tab = await new_tab(browser, server.http)
    await tab.page.wait_for_selector("#game option[value=high_card_drawn]", state="attached")
    await tab.page.select_option("#game", "high_card_drawn")
    assert "drawn by its own module" in await tab.page.locator(".blurb").inner_text()
    await create_table(tab, "high_card_drawn", 2, 1, {"hands": 1}, {"bot_think": 0, "pause": 0})
    await tab.page.wait_for_selector(".drawn-by-plugin")
    await play_to_end(tab, "high_card")
    assert not tab.errors, tab.errors
    await tab.close()
