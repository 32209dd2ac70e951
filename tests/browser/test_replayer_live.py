"""The hand replayer follows the table while it is open, and shows names whole (history.js, style.css).

* A spectator opens the replayer at hand N of a bots-only fixed-limit match (stacks deep enough
  that it lasts hundreds of hands): without closing it, its hand list grows to hand N+2 as the bots
  play on, and the hand being read stays where the reader left it.
* A player with a 40-character name (one long word in it) opens the replayer during the match on a
  narrow screen: the seat's name is drawn whole, wrapped inside its seat, with the name as its title.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.async_api import expect

from tests.browser.clicking import press_until
from tests.browser.pages import new_tab
from tests.conftest import until
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

#: a long match: fixed-limit betting loses at most a few hundred chips a hand
DEEP = {"starting_stacks": 100_000, "bot_think": 0.05, "pause": 0}
LONG_NAME = "Hubert Wolfeschlegelsteinhausenbergerdor"  # 40 characters, the most a name may have


def hands_seen(tab: Any, table: str) -> int:
    """The number of the last hand the page was sent (0 before the first)."""
    return max((f["event"]["hand"] for f in tab.events(table) if f["event"]["type"] == "hand_start"), default=0)


async def test_the_open_replayer_lists_the_hands_played_since(server: LiveServer, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.http) as http:
        r = await http.post("/api/tables", json={"game": "fixed_limit_holdem", "seats": 2, "bots": 2, "options": DEEP})
        table = r.json()["table"]
    tab = await new_tab(browser, server.http, f"/#/t/{table}/watch")
    page = tab.page
    await until(lambda: hands_seen(tab, table) >= 2, 120, "hand 2 dealt")
    # the table redraws at every bot's action here: the click goes to the control itself, not to the
    # place where it was a moment ago
    await page.locator(".history [data-control=replay]").dispatch_event("click")
    dlg = page.locator("dialog.replayer[data-source=live]")
    await dlg.locator(".replay-stage").wait_for()
    labels = await dlg.locator(".hand-pick option").all_inner_texts()
    shown = max(int(m.group(1)) for label in labels if (m := re.fullmatch(r"Hand (\d+)", label)))
    assert shown >= 2, labels

    await dlg.locator(".hand-pick").select_option("0")  # reading the first hand meanwhile
    await dlg.locator("[data-step=forward]").click()
    text = await dlg.locator(".replay-text").inner_text()
    later = dlg.locator(".hand-pick option").filter(has_text=re.compile(rf"^Hand {shown + 2}$"))
    await expect(later).to_have_count(1)  # the list grew while open
    count, said = await dlg.evaluate("d => [d.querySelectorAll('.hand-pick option').length, d.querySelector('.replay-count').textContent]")
    assert said == f"{count} hands"  # read at once: the list may grow again at any time
    assert await dlg.locator(".hand-pick").input_value() == "0"  # still on the hand being read
    assert await dlg.locator(".replay-stage").get_attribute("data-step-index") == "1"
    assert await dlg.locator(".replay-text").inner_text() == text
    assert await page.locator("dialog.replayer").count() == 1
    assert not tab.errors, tab.errors
    await tab.close()


async def test_names_are_drawn_whole_in_the_replayer(server: LiveServer, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.http) as http:
        r = await http.post("/api/tables", json={"game": "no_limit_holdem", "seats": 2, "bots": 1,
                                                  "options": {"starting_stacks": 400, "bot_think": 0, "pause": 0}})
        table = r.json()["table"]
    tab = await new_tab(browser, server.http, f"/#/t/{table}", width=480, height=900,
                        init_script=f"localStorage.setItem('cardhall.name', '{LONG_NAME}');")
    page = tab.page
    await page.click("[data-control=sit]")
    await press_until(page, ".result-banner", ("fold", "check", "call", "continue"), until=lambda: hands_seen(tab, table) >= 2)
    await page.click(".table-tabs [data-tab=hands]")  # a narrow screen: the hand history is behind its tab
    await page.click(".history [data-control=replay]")
    dlg = page.locator("dialog.replayer")
    name = dlg.locator(".replay-stage .replay-seat[data-seat='1'] .seat-name")
    await expect(name).to_have_attribute("title", LONG_NAME)
    assert (await name.inner_text()).replace("\n", "").startswith(LONG_NAME)
    fits = await name.evaluate("""e => {
        const seat = e.closest('.replay-seat').getBoundingClientRect(), box = e.getBoundingClientRect();
        return { cut: e.scrollWidth > e.clientWidth + 1, inside: box.right <= seat.right + 1,
                 wrapped: box.height > 1.8 * parseFloat(getComputedStyle(e).fontSize) };
    }""")
    assert not fits["cut"] and fits["inside"] and fits["wrapped"], fits  # longer than its seat is wide: wrapped
    assert not tab.errors, tab.errors
    await tab.close()
