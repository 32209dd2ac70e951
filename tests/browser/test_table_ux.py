"""The table's details in Chromium: turn alerts (title, favicon, the sound switch), a paused table's
panel, the breadcrumb, the four-colour deck, Alamo's readable log, the lobby's rows (stakes, players,
free seats, joinable first, refreshed by itself) and a busted solo player who only watches (G-4)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.async_api import expect

from tests.browser.clicking import DECISION, my_decision
from tests.browser.conftest import screenshot_path
from tests.browser.pages import Tab, create_table, go_from_lobby, new_tab
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]





async def test_turn_alerts_pause_breadcrumb_four_colours_and_alamo_log(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http)
    page = tab.page
    await page.check("#pref-sound")  # off by default; the click lets the page make sounds
    # the clock: 4 s (a third of it, 1.3 s, is "low"), then a short bank; the pause keeps it still
    await create_table(tab, "no_limit_holdem", 2, 1, {}, {"bot_think": 0.2, "pause": 0, "action_clock": 4, "time_bank": 0.5})
    await expect(page.locator("#crumbs [aria-current=page]")).to_have_text("No-limit Hold'em")  # without a reload
    base = "No-limit Hold'em · cardhall"
    icon = page.locator("link[rel~=icon]")

    await my_decision(page)
    await expect(page).to_have_title(re.compile(r"^● Your turn – No-limit Hold'em · cardhall$"))
    await expect(page.locator("body")).to_have_attribute("data-turn-alert", "turn")
    assert (await icon.get_attribute("href")).startswith("data:image/svg+xml")
    assert int(await page.locator("body").get_attribute("data-alert-sounds")) >= 1  # the tone was asked for

    # the owner pauses: no live action button, the panel says why, no alert (G-8)
    await page.click("[data-control=pause]")
    await expect(page.locator(".action-panel")).to_have_text(re.compile("Paused by the owner"))
    assert await page.locator(".action-panel button").count() == 0
    await expect(page).to_have_title(base)
    await page.click("[data-control=resume]")
    await expect(page.locator(DECISION).first).to_be_visible()

    # the clock runs low: the title and icon say so
    await expect(page).to_have_title(re.compile(r"^⏳ Time running out – "), timeout=60_000)
    await expect(page.locator("body")).to_have_attribute("data-turn-alert", "low")
    low_icon = await icon.get_attribute("href")
    assert low_icon.startswith("data:image/svg+xml") and "e5484d" in low_icon
    for kind in ("fold", "check", "call"):
        button = page.locator(f".action-panel [data-action={kind}]")
        if await button.count():
            try:
                await button.click(timeout=1000)
            except Exception:
                pass  # the clock ran out first: the server acted (G-3)
            break
    await expect(page.locator("body")).to_have_attribute("data-turn-alert", "")
    await expect(page).to_have_title(base)
    assert await icon.get_attribute("href") == "data:,"

    # the four-colour deck: diamonds blue, clubs green, hearts still red; kept across a reload
    colours = """() => Promise.all([import('/web/js/cards.js')]).then(([m]) => ['Td', '5c', 'Th', 'As'].map((c) => {
        const el = m.cardEl(c); document.body.append(el); const col = getComputedStyle(el).color; el.remove(); return col; }))"""
    red, black = "rgb(201, 37, 44)", "rgb(27, 27, 31)"
    assert await page.evaluate(colours) == [red, black, red, black]
    await page.check("#pref-four-colour")
    assert await page.evaluate(colours) == ["rgb(31, 99, 214)", "rgb(23, 130, 58)", red, black]
    await page.reload()
    await page.wait_for_selector(".table-page[data-you='1']")
    assert await page.is_checked("#pref-sound") and await page.is_checked("#pref-four-colour")
    assert await page.evaluate(colours) == ["rgb(31, 99, 214)", "rgb(23, 130, 58)", red, black]

    # Alamo's log names its options in words ("no jokers", not "jokers false")
    await page.click("#crumbs a[href='#/']")
    await create_table(tab, "alamo", 2, 1, {}, {"bot_think": 0.2, "pause": 0})
    await expect(page.locator("#crumbs [aria-current=page]")).to_have_text("Alamo")
    begins = page.locator(".log li.ev-match_started")
    await expect(begins).to_contain_text("no jokers")
    assert "false" not in await begins.inner_text()
    assert not tab.errors, tab.errors
    await tab.close()


async def _post_table(tab: Tab, body: dict[str, Any]) -> str:
    """Create a table over HTTP as this page's player (its token: the owner)."""
    return await tab.page.evaluate("""async (body) => {
        const r = await fetch('/api/tables', { method: 'POST', body: JSON.stringify(body),
          headers: { Authorization: 'Bearer ' + localStorage.getItem('cardhall.token') } });
        return (await r.json()).table; }""", body)


async def test_lobby_rows_and_a_busted_solo_player_watches(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http)
    page = tab.page
    await page.fill("#seats", "5")  # typed in the form: the list's refreshes keep it
    # bots slow enough that the match is still on while the row is looked for (a finished table nobody
    # watches leaves the lobby)
    full = await _post_table(tab, {"game": "loco_poker", "seats": 2, "bots": ["random", "random"],
                                   "options": {"points_to_win": 1, "bot_think": 30}})
    await expect(page.locator(f".table-row[data-table={full}]")).to_be_visible(timeout=60_000)  # no reload
    # a busted solo player (RULES G-4): a tiny stack, all in at every decision
    options = {"starting_stacks": [10, 600, 600], "pause": 0, "bot_think": 0}
    for attempt in range(3):
        if attempt:  # back in the lobby: a new form (a typed draft is kept by the list's refreshes, not across pages)
            await page.fill("#seats", "5")
        table = await _post_table(tab, {"game": "no_limit_holdem", "seats": 3, "bots": ["random", "random"], "options": options})
        row = page.locator(f".table-row[data-table={table}]")
        await page.evaluate("dispatchEvent(new Event('focus'))")  # back to the tab: a refresh now (a timer does too)
        await expect(row.locator("[data-stakes]")).to_have_text("Blinds 10/20 · stacks 10/600/600")
        await expect(row.locator("[data-players]")).to_have_text("2 bots")
        await expect(row).to_contain_text("2/3 seated · 1 free seat")
        assert await page.locator(".table-row").first.get_attribute("data-table") == table  # joinable first
        assert await page.input_value("#seats") == "5"
        await go_from_lobby(tab, table, "play")
        await page.wait_for_selector(".table-page[data-you='1'][data-status=running]")
        if await _play_until_busted(tab, table):
            break
        await page.click("#crumbs a[href='#/']")
    else:
        pytest.fail("never busted before the match's end")
    await page.screenshot(path=screenshot_path("table-ux-busted"))
    assert not tab.errors, tab.errors
    await tab.close()


async def _play_until_busted(tab: Tab, table: str) -> bool:
    """All in until seat 1 busts, then watch: no Continue shows and the match ends by itself.
    False when the match ended with us still in it."""
    page = tab.page
    while True:
        await page.wait_for_selector(".action-panel [data-action], .result-banner")
        if any(f["event"]["type"] == "bust" and 1 in f["event"]["seats"] for f in tab.events(table)):
            break
        if await page.locator(".result-banner").count():
            return False
        for kind in ("continue", "all_in", "call", "check"):
            button = page.locator(f".action-panel [data-action={kind}]")
            if await button.count():
                try:
                    await button.first.click(timeout=1000)
                except Exception:
                    pass
                break
        await page.wait_for_timeout(20)
    # from now on the page must never offer Continue (nor any action) to the busted player
    await page.evaluate("""() => { window.offered = 0; new MutationObserver(() => {
        if (document.querySelector('.action-panel [data-action]')) window.offered++; }).observe(document.body, { childList: true, subtree: true }); }""")
    await page.wait_for_selector(".result-banner", timeout=60_000)
    assert await page.evaluate("window.offered") == 0
    events = tab.events(table)
    bust = next(i for i, f in enumerate(events) if f["event"]["type"] == "bust" and 1 in f["event"]["seats"])
    assert not [f for f in events[bust:] if f.get("turn", {}).get("seat") == 1], json.dumps(events[bust:])[:500]
    return True
