"""A phone is a first-class screen: every game played to its end by touch at 390x844, with the
action bar pinned to the bottom (every button and field on screen, at least 44 px, no sideways
scroll, at every decision); no-limit's and Alamo's amount set by touching its slider; the side panels behind tabs
(chat's tab counting the lines not seen), the top bar's settings folded behind a button, and the
landscape layout's actions on screen too. Layouts at every size on recorded tables:
test_layout_matrix.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.clicking import click_first
from tests.browser.conftest import screenshot_path
from tests.browser.pages import create_table, go_from_lobby, new_tab, play_to_end
from tests.conftest import until
from tests.games import GAMES, everyday, quick, seats
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FAST = {"bot_think": 0, "pause": 0}

#: what is wrong with the action bar now: sideways scroll, a control off screen or under 44 px
#: (a checkbox counts with its label); [] when nothing
BAR_PROBLEMS = """() => {
  const out = [];
  const root = document.scrollingElement;
  if (root.scrollWidth > innerWidth + 1) out.push(`sideways scroll: ${root.scrollWidth} > ${innerWidth}`);
  for (const el of document.querySelectorAll('.action-panel button, .action-panel input, .action-panel select')) {
    const r = el.getBoundingClientRect();
    if (!r.width && !r.height) continue;
    const what = `${el.tagName.toLowerCase()}[${el.dataset.action || el.dataset.preset || el.type}] "${el.textContent.trim()}"`;
    const target = el.type === 'checkbox' && el.closest('label') ? el.closest('label').getBoundingClientRect() : r;
    if (target.width < 44 - 0.5 || target.height < 44 - 0.5) out.push(`${what} is ${Math.round(target.width)}x${Math.round(target.height)} px`);
    if (r.left < -0.5 || r.top < -0.5 || r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5) {
      out.push(`${what} off screen at ${Math.round(r.left)},${Math.round(r.top)}-${Math.round(r.right)},${Math.round(r.bottom)}`);
    }
  }
  return out;
}"""


@pytest.mark.parametrize("game", everyday(GAMES, {"alamo"}))
async def test_a_whole_match_by_touch(server: LiveServer, browser: Any, game: str) -> None:
    tab = await new_tab(browser, server.http, width=390, height=844, touch=True)
    page = tab.page
    n = seats(game, 3)
    await create_table(tab, game, n, n - 1, quick(game), FAST)
    problems: list[str] = []

    async def check(clicks: int, kind: str | None) -> None:
        found = await page.evaluate(BAR_PROBLEMS)
        if found:
            await page.screenshot(path=screenshot_path(f"phone-{game}-{clicks}"))
        problems.extend(f"decision {clicks} ({kind}): {p}" for p in found)

    await play_to_end(tab, game, on_decision=check, tap=True)
    await page.screenshot(path=screenshot_path(f"phone-{game}-end"))
    assert not problems, problems
    assert await page.locator(".result-banner").is_visible()
    assert not tab.errors, tab.errors
    await tab.close()


@pytest.mark.parametrize("game", ["no_limit_holdem", "alamo"])
async def test_the_amount_set_by_touching_its_slider(server: LiveServer, browser: Any, game: str) -> None:
    """No-limit and Alamo bet amounts: a touch on the slider's track near its right end moves the
    amount there, the field beside it follows, and the raise sends it."""
    tab = await new_tab(browser, server.http, width=390, height=844, touch=True)
    page = tab.page
    # the default stacks (a wide range); the bot thinks long enough that our turn stays while we touch
    await create_table(tab, game, 2, 1, {}, {"bot_think": 0.5, "pause": 0})
    panel = page.locator(".action-panel")
    rng = panel.locator("input[type=range]")
    # check, or fold, until a turn offers a bet or raise with an amount: a turn without one faces an all-in,
    # and calling it could end the match (with Alamo's short stacks it did)
    while not await rng.count():
        await panel.locator("[data-action]").first.wait_for()
        if not await rng.count():
            await click_first(page, ("continue", "check", "fold", "call"))
    box = await rng.bounding_box()
    low, high = int(await rng.get_attribute("min")), int(await rng.get_attribute("max"))
    assert high - low >= 4, (low, high)  # room for a touch to land past the middle
    await page.touchscreen.tap(box["x"] + box["width"] * 0.85, box["y"] + box["height"] / 2)
    field = panel.locator("input[type=number]")
    value = int(await field.input_value())
    assert value == int(await rng.input_value())
    assert low + (high - low) // 2 < value <= high, (low, value, high)
    kind = await panel.locator(".raise-group button[data-action]").get_attribute("data-action")
    await panel.locator(f".raise-group button[data-action={kind}]").tap()
    await until(lambda: any(m.get("type") == "act" and m["action"]["type"] == kind for m in tab.sent), 60,
                "the page sends the bet")
    sent = [m["action"] for m in tab.sent if m.get("type") == "act" and m["action"]["type"] == kind]
    assert sent[-1] == {"type": kind, "amount": value}, sent
    assert not tab.errors, tab.errors
    await tab.close()


async def test_tabs_settings_and_landscape(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http, width=390, height=844, touch=True)
    page = tab.page
    # the top bar's switches and name field fold behind Settings
    assert not await page.locator("#pref-sound").is_visible()
    await page.locator("#topbar-more").tap()
    assert await page.locator("#pref-sound").is_visible()
    assert await page.locator("#player-name").is_visible()
    assert await page.locator("#topbar-more").get_attribute("aria-expanded") == "true"
    await page.locator("#topbar-more").tap()
    assert not await page.locator("#pref-sound").is_visible()

    # the bot thinks long enough that our turn comes and stays while the tabs are looked at
    table = await create_table(tab, "no_limit_holdem", 3, 2, {"starting_stacks": 400}, {"bot_think": 0.5, "pause": 0})
    await page.wait_for_selector(".action-panel [data-action]")
    assert await page.locator(".felt").is_visible()
    assert not await page.locator(".chat").is_visible()

    # a spectator on a wide screen says something: the phone's Chat tab counts it
    watcher = await new_tab(browser, server.http)
    await go_from_lobby(watcher, table, "watch")
    await watcher.page.wait_for_selector(".table-page .chat-input")
    await watcher.page.fill(".chat-input", "nice hand")
    await watcher.page.press(".chat-input", "Enter")
    chat_tab = page.locator(".table-tabs [data-tab=chat]")
    await page.wait_for_function("document.querySelector('.table-tabs [data-tab=chat]').textContent === 'Chat (1)'")

    # the chat tab: the chat in the felt's place, the action bar still pinned below it
    await chat_tab.tap()
    await page.wait_for_selector(".chat .chat-line")
    assert await page.locator(".chat").is_visible()
    assert not await page.locator(".felt").is_visible()
    assert await chat_tab.get_attribute("aria-selected") == "true"
    assert await chat_tab.text_content() == "Chat"
    assert not await page.locator(".log").is_visible()
    await page.screenshot(path=screenshot_path("phone-chat-tab"))
    await page.locator(".table-tabs [data-tab=log]").tap()
    assert await page.locator(".log").is_visible()
    assert not await page.locator(".chat").is_visible()
    await page.locator(".table-tabs [data-tab=table]").tap()
    assert await page.locator(".felt").is_visible()
    assert not await page.locator(".log").is_visible()

    # the same table on the phone held sideways: the actions beside the felt, on screen
    await page.set_viewport_size({"width": 844, "height": 390})
    await page.wait_for_selector(".action-panel [data-action]")
    await page.wait_for_function("document.querySelector('.felt').getBoundingClientRect().right"
                                 " <= document.querySelector('.action-panel').getBoundingClientRect().left")
    assert await page.evaluate(BAR_PROBLEMS) == []
    await page.screenshot(path=screenshot_path("phone-landscape"))
    assert not tab.errors, tab.errors
    assert not watcher.errors, watcher.errors
    await watcher.close()
    await tab.close()


async def test_keep_order_holds_the_rows_shown(server: LiveServer, browser: Any) -> None:
    """The lobby's refresh while the pointer is over its list (lobby.js): the rows shown keep their
    order, tables gone drop out, new tables come after them."""
    tab = await new_tab(browser, server.http)
    kept = await tab.page.evaluate("""async () => {
      const { keepOrder } = await import('/web/js/lobbyrows.js');
      const fresh = [{ id: 'c' }, { id: 'a' }, { id: 'd' }, { id: 'b' }];
      return keepOrder(fresh, [{ id: 'a' }, { id: 'b' }, { id: 'gone' }, { id: 'c' }]).map((t) => t.id);
    }""")
    assert kept == ["a", "b", "c", "d"]
    await tab.close()
