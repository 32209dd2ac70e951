"""The number of spectators a table page shows, and how the page joins.

A seated player's page joins once, as a player (never first as a spectator: it would count
itself among the watchers and log "Joined as a spectator"); the "N watching" pill follows the
server's count (``GET /api/tables/{id}``) when people come, go or sit down.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.pages import create_table, go_from_lobby, new_tab
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

WATCHING = ".pills .pill[title=spectators]"


async def spectators(server: LiveServer, page: Any, table: str) -> int:
    return await page.evaluate("async (u) => (await (await fetch(u)).json()).spectators", f"{server.http}/api/tables/{table}")


async def test_a_player_is_not_counted_as_watching(server: LiveServer, browser: Any) -> None:
    owner = await new_tab(browser, server.http)
    table = await create_table(owner, "loco_poker", 3, 1, {"points_to_win": 1}, {"bot_think": 0, "pause": 0})
    page = owner.page
    assert await spectators(server, page, table) == 0
    assert await page.locator(WATCHING).inner_text() == "0 watching"
    log = await page.locator(".log li").all_inner_texts()
    assert log[0] == "Joined at seat 1" and not [line for line in log if "spectator" in line], log
    assert [m["role"] for m in owner.sent if m.get("type") == "join"] == ["player"]

    # someone watches: the server and that page count one; once they take the free seat, none
    guest = await new_tab(browser, server.http)
    await go_from_lobby(guest, table, "watch")
    await guest.page.wait_for_selector(".table-page[data-you='']")
    assert await spectators(server, guest.page, table) == 1
    assert await guest.page.locator(WATCHING).inner_text() == "1 watching"
    assert "Joined as a spectator" in await guest.page.locator(".log li").first.inner_text()
    await guest.page.click("[data-control=sit]")
    await guest.page.wait_for_selector(".table-page:not([data-you=''])")
    await guest.page.wait_for_function(f"document.querySelector('{WATCHING}').textContent === '0 watching'")
    assert await spectators(server, guest.page, table) == 0
    assert not owner.errors and not guest.errors, (owner.errors, guest.errors)
    for tab in (owner, guest):
        _, problems = tab.schema_failures()
        assert not problems, problems[:5]
    await guest.close()
    await owner.close()
