"""The browser's "Your name" field renames the player in place (``rename``, protocol 1.4, SPEC "Names"):
seated mid-hand on its own turn, the page keeps its websocket, token, seat and turn, its buttons
still act, the seat shows the new name on its own page and on a spectator's (the ``renamed``
event), chat goes out under it, a reload keeps all of it, and a refused name ("bot 2") shows the
server's reason beside the field and keeps the old name. Against a server older than 1.4 the name is
only kept for the next new player: nothing is sent, the token and the seat stay."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.async_api import expect

from tests.browser.clicking import DECISION, my_decision
from tests.browser.conftest import screenshot_path
from tests.browser.pages import Frame, Tab, create_table, new_tab
from tests.conftest import until
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

#: a game action of ours is offered (not the solo player's Continue)
#: heads-up no-limit against one bot, deep stacks, a long clock: the hand waits for us, never times out
GAME_OPTIONS = {"starting_stacks": 5000, "blind_levels": 0}
TABLE_OPTIONS = {"bot_think": 0, "pause": 0, "action_clock": 600, "time_bank": 0}
NEW_NAME = "Annie Oakley"

#: makes the page believe the server speaks protocol 1.3 (before `rename`): every welcome it reads
#: says minor 3; the server and the frames on the wire are untouched (instrumentation only)
OLD_SERVER = """
(() => {
  const Native = window.WebSocket;
  const older = (f) => (f.type === "welcome" ? { ...f, minor: 3 } : f.type === "batch" ? { ...f, frames: f.frames.map(older) } : f);
  window.WebSocket = class extends Native {
    set onmessage(fn) { super.onmessage = (msg) => fn({ data: JSON.stringify(older(JSON.parse(msg.data))) }); }
  };
})();
"""




async def rename(page: Any, name: str) -> None:
    """Type ``name`` into the top bar's name field as a person does: fill it, press Enter (a change)."""
    await page.fill("#player-name", name)
    await page.press("#player-name", "Enter")


def sent(tab: Tab, kind: str) -> list[Frame]:
    return [m for m in tab.sent if m.get("type") == kind]


def welcomes(tab: Tab) -> list[Frame]:
    return [f for f in tab.frames if f.get("type") == "welcome"]


async def test_renaming_mid_hand_keeps_the_seat_and_the_turn(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http)
    page = tab.page
    table = await create_table(tab, "no_limit_holdem", 2, 1, GAME_OPTIONS, TABLE_OPTIONS)
    old = await page.input_value("#player-name")
    watcher = await new_tab(browser, server.http, f"/#/t/{table}/watch")
    seat_on_watcher = watcher.page.locator(".seat[data-seat='1']")
    await expect(seat_on_watcher.locator(".seat-name")).to_have_text(old)

    # our turn, mid-hand: every toast the page shows from now on is kept
    await my_decision(page)
    await page.evaluate("""() => { window.toasts = []; new MutationObserver(() => {
        for (const t of document.querySelectorAll('.toast')) window.toasts.push(t.textContent); })
        .observe(document.body, { childList: true, subtree: true }); }""")
    seat = page.locator(".seat[data-seat='1']")
    await rename(page, NEW_NAME)

    # the same player, seat and turn, under the new name
    await expect(seat.locator(".seat-name")).to_have_text(f"{NEW_NAME} (you)")
    await expect(page.locator("#player-name")).to_have_value(NEW_NAME)
    await expect(page.locator(".log li.ev-renamed")).to_have_text(f"{old} is now {NEW_NAME}")
    await expect(page.locator(".table-page")).to_have_attribute("data-you", "1")
    await expect(page.locator(DECISION).first).to_be_visible()
    await expect(page.locator("#name-status")).to_be_hidden()
    assert await page.evaluate("localStorage.getItem('cardhall.name')") == NEW_NAME
    await page.screenshot(path=screenshot_path("rename-mid-hand"))
    [asked] = sent(tab, "rename")
    assert asked["name"] == NEW_NAME
    await until(lambda: any(f.get("re") == asked["id"] for f in tab.frames), 30, "the rename's reply")
    assert next(f for f in tab.frames if f.get("re") == asked["id"]) == {"type": "ok", "re": asked["id"], "name": NEW_NAME}
    assert len(sent(tab, "hello")) == 1 and len(welcomes(tab)) == 1  # no reconnect, no new player

    # the spectator's page follows without a reload: the seat's name, the log, still online
    await expect(seat_on_watcher.locator(".seat-name")).to_have_text(NEW_NAME)
    await expect(watcher.page.locator(".log li.ev-renamed")).to_have_text(f"{old} is now {NEW_NAME}")
    await expect(seat_on_watcher.locator(".badge.away")).to_have_count(0)
    renamed = [f["event"] for f in watcher.events(table) if f["event"]["type"] == "renamed"]
    assert renamed == [{"type": "renamed", "player": welcomes(tab)[0]["player"], "seat": 1, "name": NEW_NAME}]

    # the buttons still act: check or call, and the hand goes on under the new name
    for kind in ("check", "call", "all_in"):
        button = page.locator(f".action-panel button[data-action={kind}]")
        if await button.count():
            await button.click()
            break
    else:
        pytest.fail("neither check nor call offered")
    await expect(page.locator(".log li.ev-action", has_text=re.compile(f"^{NEW_NAME} ")).first).to_be_visible()
    await expect(watcher.page.locator(".log li.ev-action", has_text=re.compile(f"^{NEW_NAME} ")).first).to_be_visible()

    # chat goes out under the new name
    await page.fill(".chat-input", "hello again")
    await page.press(".chat-input", "Enter")
    await expect(watcher.page.locator(".chat-line", has_text="hello again").locator(".chat-name")).to_have_text(NEW_NAME)

    # a name the server refuses: its reason beside the field, the field back to the name kept
    await rename(page, "bot 2")
    refused = next(m for m in sent(tab, "rename") if m["name"] == "bot 2")
    await until(lambda: any(f.get("re") == refused["id"] for f in tab.frames), 30, "the refusal")
    error = next(f for f in tab.frames if f.get("re") == refused["id"])
    assert error["type"] == "error" and error["code"] == "bad_request", error
    status = page.locator("#name-status")
    await expect(status).to_have_text(error["message"])
    await expect(status).to_have_attribute("data-kind", "error")
    await expect(page.locator("#player-name")).to_have_value(NEW_NAME)
    await page.screenshot(path=screenshot_path("rename-refused"))
    await expect(seat.locator(".seat-name")).to_have_text(f"{NEW_NAME} (you)")
    await expect(seat_on_watcher.locator(".seat-name")).to_have_text(NEW_NAME)
    assert await page.evaluate("localStorage.getItem('cardhall.name')") == NEW_NAME

    # a reload: the same player (token kept), the same seat, the new name
    await page.reload()
    await page.wait_for_selector(".table-page[data-you='1']")
    await expect(page.locator(".seat[data-seat='1'] .seat-name")).to_have_text(f"{NEW_NAME} (you)")
    await expect(page.locator("#player-name")).to_have_value(NEW_NAME)
    await expect(seat_on_watcher.locator(".badge.away")).to_have_count(0)
    assert len({w["player"] for w in welcomes(tab)}) == 1 and len(welcomes(tab)) == 2
    assert welcomes(tab)[-1]["name"] == NEW_NAME
    hellos = sent(tab, "hello")
    assert "token" not in hellos[0] and hellos[1]["token"] == welcomes(tab)[0]["token"]
    assert all(m["role"] == "player" for m in sent(tab, "join") if m.get("table") == table)

    # never a spectator, never refused an action, never told to watch instead
    assert not [t for t in await page.evaluate("window.toasts || []") if "watching instead" in t]
    assert [f for f in tab.frames if f.get("type") == "error"] == [error]
    assert not tab.errors and not watcher.errors, (tab.errors, watcher.errors)
    for t in (tab, watcher):
        _, problems = t.schema_failures()
        assert not problems, problems[:5]
    await watcher.close()
    await tab.close()


async def test_an_older_server_keeps_the_name_for_the_next_new_player(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http, init_script=OLD_SERVER)
    page = tab.page
    await create_table(tab, "no_limit_holdem", 2, 1, GAME_OPTIONS, TABLE_OPTIONS)
    old = await page.input_value("#player-name")
    token = await page.evaluate("localStorage.getItem('cardhall.token')")
    await my_decision(page)
    await rename(page, "Calamity Jane")

    status = page.locator("#name-status")
    await expect(status).to_have_attribute("data-kind", "note")
    await expect(status).to_contain_text("“Calamity Jane” is kept for your next new player")
    await expect(page.locator("#player-name")).to_have_value(old)
    assert await page.evaluate("localStorage.getItem('cardhall.name')") == "Calamity Jane"
    # the token, the websocket, the seat and the turn stay; nothing was asked of the server
    assert await page.evaluate("localStorage.getItem('cardhall.token')") == token
    await expect(page.locator(".seat[data-seat='1'] .seat-name")).to_have_text(f"{old} (you)")
    await expect(page.locator(DECISION).first).to_be_visible()
    assert not sent(tab, "rename") and len(sent(tab, "hello")) == 1 and len(welcomes(tab)) == 1
    assert not tab.errors, tab.errors
    await tab.close()
