"""Clocks, owner controls, the keyboard and a phone-sized screen in Chromium.

The action clock and time bank count down on the page and stop while the owner pauses the table;
when both run out the server's timeout action shows in the log, and two in a row sit the player
out (G-3) until Sit in. Actions and Continue work from the keyboard alone. On a narrow screen the
table fits without sideways scrolling.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.conftest import screenshot_path
from tests.browser.pages import create_table, new_tab
from tests.conftest import until
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


async def clock_seconds(page: Any) -> float:
    text = await page.locator(".seat.me .clock-text").inner_text()
    return float(re.match(r"(?:time bank )?(\d+)", text).group(1))


def acts(sent: list[dict[str, Any]]) -> list[str]:
    return [m["action"]["type"] for m in sent if m.get("type") == "act"]


async def test_clock_pause_timeout_and_keyboard(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http)
    page = tab.page
    await create_table(tab, "loco_poker", 2, 1, {"points_to_win": 5},
                       {"action_clock": 3, "time_bank": 1, "bot_think": 0})
    # wait for a decision of ours where we may check (by keyboard: Space continues through the
    # dealer steps, F folds to a bot's all-in)
    while not await page.locator(".action-panel [data-action=check]").count():
        await page.wait_for_selector(".action-panel [data-action]")
        if await page.locator(".action-panel [data-action=continue]").count():
            await page.keyboard.press("Space")
        elif await page.locator(".action-panel [data-action=fold]").count():
            await page.keyboard.press("f")
        await page.wait_for_timeout(50)
    assert await clock_seconds(page) <= 3
    assert re.search(r"bank 1s", await page.locator(".seat.me .clock-text").inner_text())

    # the owner pauses: the clock stops (G-8), and resumes with the time that was left
    await page.click("[data-control=pause]")
    await page.wait_for_selector(".pill[data-status=paused]")
    frozen = await page.locator(".seat.me .clock-text").inner_text()
    await page.wait_for_timeout(1200)  # more than a second of the clock's: it must not change (a slow machine only waits longer)
    assert await page.locator(".seat.me .clock-text").inner_text() == frozen
    await page.click("[data-control=resume]")
    await page.wait_for_selector(".pill[data-status=running]")

    # no decision: the clock and the bank run out, the server checks for us (G-3)
    await page.wait_for_selector(".log li.ev-timeout", timeout=60_000)
    assert "ran out of time: check" in await page.locator(".log li.ev-timeout").first.inner_text()

    # keyboard only: A goes all-in on our next decision (C calls a bot's all-in), Space continues
    before = len(acts(tab.sent))
    for _ in range(200):
        await page.wait_for_selector(".action-panel [data-action], .result-banner")
        if await page.locator(".result-banner").count():
            break
        if await page.locator(".action-panel [data-action=continue]").count():
            await page.keyboard.press("Space")
        elif await page.locator(".action-panel [data-action=all_in]").count():
            await page.keyboard.press("a")
            break
        elif await page.locator(".action-panel [data-action=call]").count():
            await page.keyboard.press("c")
        await page.wait_for_timeout(60)
    await until(lambda: {"all_in", "call"} & set(acts(tab.sent)[before:]) and "continue" in acts(tab.sent)[before:],
                60, "the page sends the actions the keys took")
    by_keys = acts(tab.sent)[before:]
    assert {"all_in", "call"} & set(by_keys) and "continue" in by_keys, by_keys
    await page.screenshot(path=screenshot_path("controls-loco"))
    assert not tab.errors, tab.errors
    await tab.close()


async def test_narrow_screen(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http, width=390, height=844)
    page = tab.page
    await page.screenshot(path=screenshot_path("phone-lobby"))
    await create_table(tab, "no_limit_holdem", 6, 5, {}, {"bot_think": 0})
    await page.wait_for_selector(".action-panel [data-action]")
    await page.wait_for_selector(".seat.me .card[data-card]")
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    # every seat is drawn, none overlaps another
    boxes = [await page.locator(f".seat[data-seat='{s}']").bounding_box() for s in range(1, 7)]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            overlap = not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                           or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])
            assert not overlap, (a, b)
    await page.screenshot(path=screenshot_path("phone-table"), full_page=True)
    assert not tab.errors, tab.errors
    await tab.close()
