"""Table chat in Chromium (SPEC "Chat"): a message typed on one page shows on the other with its
sender's name, both exactly as typed (markup in a name or a message is shown, never run); the
length counter; a player muted on one page disappears there, and comes back when unmuted; the
owner's switch stops spectators' chat, whose input then says so, and allows it again.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.async_api import expect

from tests.browser.conftest import screenshot_path
from tests.browser.pages import create_table, go_from_lobby, new_tab
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


def named(name: str) -> str:
    """An init script giving the page's player ``name`` (conn.js keeps it in localStorage)."""
    return f"localStorage.getItem('cardhall.name') || localStorage.setItem('cardhall.name', {json.dumps(name)})"


async def test_chat_between_two_pages_mute_and_the_owners_switch(server: LiveServer, browser: Any) -> None:
    owner = await new_tab(browser, server.http, init_script=named("<i>Ann</i>"))
    table = await create_table(owner, "loco_poker", 3, 1, {"points_to_win": 1}, {"bot_think": 0, "pause": 0})
    guest = await new_tab(browser, server.http, init_script=named("Bob & co"))
    await go_from_lobby(guest, table, "watch")
    await guest.page.wait_for_selector(".table-page[data-you='']")
    ann, bob = owner.page, guest.page

    # the owner writes: markup is text, the counter counts, Enter sends and empties the field
    typed = "<b>hello</b> & [red]x[/]"
    await ann.fill(".chat-input", typed)
    await expect(ann.locator(".chat-count")).to_have_text(f"{len(typed)}/200")
    await ann.press(".chat-input", "Enter")
    await expect(ann.locator(".chat-input")).to_have_value("")
    line = bob.locator(".chat-line").first
    await expect(line.locator(".chat-name")).to_have_text("<i>Ann</i>")
    await expect(line.locator(".chat-text")).to_have_text(typed)
    assert await bob.locator(".chat b, .chat i").count() == 0  # nothing was parsed as HTML

    # the spectator answers; the owner's page shows who is watching
    await bob.fill(".chat-input", "nice table")
    await bob.press(".chat-input", "Enter")
    theirs = ann.locator(".chat-line", has_text="nice table")
    await expect(theirs.locator(".chat-name")).to_have_text("Bob & co (watching)")
    await ann.screenshot(path=screenshot_path("chat"))

    # mute, on the owner's page only: the spectator's lines go, the owner's stay; unmute brings them back
    await theirs.hover()
    await theirs.locator(".chat-mute").click()
    await expect(ann.locator(".chat-line", has_text="nice table")).to_have_count(0)
    await expect(ann.locator(".chat-line")).to_have_count(1)
    await expect(ann.locator(".chat-muted")).to_contain_text("Bob & co")
    await expect(bob.locator(".chat-line")).to_have_count(2)
    await ann.locator(".chat-unmute").click()
    await expect(ann.locator(".chat-line")).to_have_count(2)

    # the owner's switch: spectators' chat off, then on again
    assert await bob.locator("[data-control=spectator-chat]").is_hidden()
    await ann.locator("[data-control=spectator-chat]").uncheck()
    await expect(bob.locator(".chat-input")).to_be_disabled()
    await expect(bob.locator(".chat-input")).to_have_attribute("placeholder", "The owner turned spectators' chat off")
    await expect(bob.locator(".log li").last).to_have_text("The owner turned spectators' chat off")
    await expect(ann.locator(".chat-input")).to_be_enabled()  # players still talk
    await ann.locator("[data-control=spectator-chat]").check()
    await expect(bob.locator(".chat-input")).to_be_enabled()

    assert not owner.errors and not guest.errors, (owner.errors, guest.errors)
    for tab in (owner, guest):
        _, problems = tab.schema_failures()
        assert not problems, problems[:5]
    await guest.close()
    await owner.close()
