"""The browser client reconnects by itself: after a dropped websocket and after a reload it says
hello with its saved token and joins again with ``since`` = the last ``seq`` it holds, keeps its
seat, receives every event exactly once (no gap, no fresh snapshot), and still verifies the whole
match (G-2) at the end."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import screenshot_path
from tests.browser.pages import Tab, create_table, new_tab, play_to_end
from tests.conftest import until
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

#: keeps the page's websockets reachable from the test (instrumentation only)
TRACK_SOCKETS = """
(() => {
  const Native = window.WebSocket;
  window.__sockets = [];
  window.WebSocket = class extends Native {
    constructor(...args) { super(...args); window.__sockets.push(this); }
  };
})();
"""


async def decide(tab: Tab, times: int) -> None:
    """Take ``times`` decisions by clicking: Continue, else check, else fold.

    Never calling, the player puts in at most a blind a hand (20 of a stack of 200), and the bot
    loses at most as much: nobody can bust within these decisions, so the match still runs
    whatever the cards. A call could put the player all in, and the table does not wait for the
    Continue of a disconnected player (G-4): it would deal out the board and could end the match
    before the page is back, leaving nothing to decide."""
    page = tab.page
    for _ in range(times):
        await page.wait_for_selector(".action-panel [data-action]")
        for kind in ("continue", "check", "fold"):
            button = page.locator(f".action-panel button[data-action='{kind}']")
            if await button.count():
                handle = await button.first.element_handle()
                await button.first.click()
                if handle is not None:
                    await handle.wait_for_element_state("hidden")
                break


async def heads_up(tab: Tab) -> str:
    """The tab's player creates a no-limit table against one bot (stacks of 200, no blind levels, no
    pauses, the bot acting at once), sits in seat 1 and the match starts: the table's id. With
    :func:`decide`'s choices nobody can bust for a while."""
    return await create_table(tab, "no_limit_holdem", 2, 1, {"starting_stacks": 200, "blind_levels": 0},
                              {"bot_think": 0, "pause": 0})


def joins(tab: Tab, table: str) -> list[dict[str, Any]]:
    return [m for m in tab.sent if m.get("type") == "join" and m.get("table") == table]


async def test_reconnect_after_a_drop_and_a_reload_keeps_the_seat(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http, init_script=TRACK_SOCKETS)
    table = await heads_up(tab)
    page = tab.page
    await decide(tab, 3)

    # 1. the websocket drops: the page reconnects and joins again with since
    player = await page.evaluate("window.__sockets.length")
    await page.evaluate("window.__sockets[window.__sockets.length - 1].close()")
    await page.wait_for_function(f"window.__sockets.length > {player} && window.__sockets.at(-1).readyState === 1")
    await page.wait_for_selector("#conn-status[data-state=online]")
    await page.wait_for_function("document.querySelector('.table-page') !== null")
    await decide(tab, 2)

    # 2. the page reloads: the saved model and seq are used
    await page.reload()
    await page.wait_for_selector("#conn-status[data-state=online]")
    await page.wait_for_selector(".table-page[data-you='1']")
    await page.screenshot(path=screenshot_path("reconnected"))

    sent = joins(tab, table)
    # one join as the player at the start (never first as a spectator), then one join with since
    # per reconnect, always as the player
    assert [m["role"] for m in sent] == ["player", "player", "player"], sent
    assert "since" not in sent[0] and all("since" in m for m in sent[1:]) and sent[1]["since"] < sent[2]["since"]
    assert sent[0]["seed"] == sent[1]["seed"] == sent[2]["seed"]  # the client seed is kept too
    # welcome after each reconnect is the same player (token kept)
    welcomes = [f for f in tab.frames if f.get("type") == "welcome"]
    assert len(welcomes) == 3 and len({w["player"] for w in welcomes}) == 1

    await play_to_end(tab, "no_limit_holdem", timeout=90)
    await page.wait_for_selector(".fair .verdict[data-status=verified]")

    # one snapshot only (the first join); every event seq once, without a gap
    snapshots = [f for f in tab.frames if f.get("type") == "snapshot" and f.get("table") == table]
    assert len(snapshots) == 1
    seqs = [f["seq"] for f in tab.events(table)]
    assert seqs == list(range(snapshots[0]["seq"] + 1, snapshots[0]["seq"] + 1 + len(seqs))), seqs
    assert not tab.errors, tab.errors
    checked, problems = tab.schema_failures()
    assert not problems, problems[:5]
    await tab.close()


async def test_a_spectator_reload_watches_again(server: LiveServer, browser: Any) -> None:
    owner = await new_tab(browser, server.http)
    table = await create_table(owner, "loco_poker", 3, 2, {"points_to_win": 5}, {"bot_think": 0.05})
    watcher = await new_tab(browser, server.http, f"/#/t/{table}/watch")
    await watcher.page.wait_for_selector(".table-page[data-you='']")
    await watcher.page.reload()
    await watcher.page.wait_for_selector(".table-page[data-you='']")
    # the reloaded page draws its table at once; its join is seen sent once Playwright reports the frame
    await until(lambda: len(joins(watcher, table)) >= 2, 60, "the reloaded page's join")
    sent = joins(watcher, table)
    assert [m["role"] for m in sent] == ["spectator", "spectator"] and "since" in sent[1]
    # the owner is still the only player; the watcher never took a seat
    assert await owner.page.locator(".seat[data-seat='1'].me").count() == 1
    await watcher.close()
    await owner.close()
