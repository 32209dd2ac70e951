"""The lobby's form is built from the server's catalogue (``GET /api/games``): the games and their
titles, the seat range, the bot strategies and every option with its default, range and choices;
what the form sends is what the table is created with, and the match's log line shows the
options the match is played with (``match_started.options``)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.browser.pages import new_tab
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


async def test_form_follows_the_catalogue(server: LiveServer, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.http) as http:
        catalogue = (await http.get("/api/games")).json()
    tab = await new_tab(browser, server.http)
    page = tab.page
    await page.wait_for_selector("#game")
    titles = await page.locator("#game option").evaluate_all("els => els.map(e => [e.value, e.textContent])")
    assert titles == [[g["name"], g["title"]] for g in catalogue["games"]]
    for entry in catalogue["games"]:
        await page.select_option("#game", entry["name"])
        seats = page.locator("#seats")
        assert await seats.get_attribute("min") == str(entry["seats"]["min"])
        assert await seats.get_attribute("max") == str(entry["seats"]["max"])
        assert await seats.input_value() == str(entry["seats"]["default"])
        bots = await page.locator("#bot option").evaluate_all("els => els.map(e => e.value)")
        assert bots == [""] + entry["bots"] and entry["default_bot"] in await page.locator("#bot option").first.inner_text()
        for option in entry["options"]:  # every option has its field, bounded as the catalogue says
            field = page.locator(f"#g-{option['name']}")
            assert await field.count() == 1, option["name"]
            if option["type"] in ("int", "number") and "min" in option and not option["nullable"]:
                assert await field.get_attribute("min") == f"{option['min']:g}", option["name"]
            if option["type"] == "choice":
                values = await field.locator("option").evaluate_all("els => els.map(e => e.value)")
                assert values == ([""] if option["nullable"] else []) + [str(c) for c in option["choices"]]
    for option in catalogue["table_options"]:
        assert await page.locator(f"#t-{option['name']}").count() == 1, option["name"]

    # Alamo with options from the "More options" part: jokers (a nullable bool) and the first dealer
    await page.select_option("#game", "alamo")
    await page.fill("#seats", "2")
    await page.fill("#bots", "1")
    await page.click("details.more-game summary")
    await page.select_option("#g-jokers", "true")
    await page.fill("#g-dealer", "2")
    await page.fill("#g-max_hands", "1")
    await page.click("details.more summary")
    await page.fill("#t-bot_think", "0")
    await page.click("#create-button")
    await page.wait_for_selector(".table-page[data-you='1']")
    create = next(m for m in tab.sent if m.get("type") == "create_table")
    assert create["options"] == {"jokers": True, "dealer": 2, "max_hands": 1, "bot_think": 0}
    started = next(f for f in tab.frames if f.get("type") == "event" and f["event"]["type"] == "match_started")
    assert started["event"]["options"] == {"jokers": True, "preflop_betting": False, "max_hands": 1, "dealer": 2}
    await page.wait_for_selector(".log li.ev-match_started")
    line = await page.locator(".log li.ev-match_started").first.inner_text()
    assert "dealer seat 2" in line and "begins: jokers," in line and "max hands 1" in line, line  # words, not "jokers true"
    _, problems = tab.schema_failures()
    assert not problems, problems
    assert not tab.errors, tab.errors
    await tab.close()
