"""The browser's private tables and host panel (SPEC "Private tables", "The host's controls", 1.5):
the lobby form's privacy fields, the owner's invite link joining an unlisted table, a password
table's prompt (a wrong password shows the server's ``bad_password`` message), a seat asked for at
an ``approve_seats`` table and approved from the host panel, a kick (the kicked page watches), a
transfer (the panel moves to the new host) and a close (every page shows the table closed)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect

from tests.browser.pages import Frame, Tab, new_tab, set_field
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

#: generous: the machine is shared and loaded
WAIT = 20_000


async def create_private(tab: Tab, seats: int, privacy: dict[str, Any]) -> str:
    """Create a no-limit table of ``seats`` seats without bots from the lobby form, with the privacy
    fields ``privacy`` (name -> value) set as a person does; the table's id once the owner sits."""
    page = tab.page
    await page.select_option("#game", "no_limit_holdem")
    await page.fill("#seats", str(seats))
    await page.fill("#bots", "0")
    for name, value in privacy.items():
        await expect(page.locator(f"#t-{name}-help")).not_to_be_empty()  # each has its line of help
        await set_field(page.locator(f"#t-{name}"), value)
    await page.click("#create-button")
    await page.wait_for_selector(".table-page[data-you='1']", timeout=WAIT)
    return page.url.rsplit("/", 1)[-1]


def player_of(tab: Tab) -> str:
    """The public id of the page's player (its last welcome)."""
    return [f for f in tab.frames if f.get("type") == "welcome"][-1]["player"]


def joins(tab: Tab, table: str) -> list[Frame]:
    return [m for m in tab.sent if m.get("type") == "join" and m.get("table") == table]


def accept_dialogs(tab: Tab) -> None:
    """Confirm every confirm() the page asks (Ban, Make host, Close table)."""
    tab.page.on("dialog", lambda dialog: dialog.accept())


async def test_invite_link_joins_an_unlisted_table(server: LiveServer, browser: Any) -> None:
    host = await new_tab(browser, server.http)
    table = await create_private(host, 3, {"visibility": "unlisted"})
    link = host.page.locator(".host-panel .invite-link")
    await expect(link).to_be_visible(timeout=WAIT)
    value = await link.input_value()
    created = [f for f in host.frames if f.get("type") == "table_created"][-1]
    assert value == f"{server.http}/#table={table}&invite={created['invite']}"
    await expect(host.page.locator("[data-control=copy-invite]")).to_be_visible()

    # not in the lobby; the link opens it, seats the guest and leaves the address of the table
    guest = await new_tab(browser, server.http, value[len(server.http):])
    await guest.page.wait_for_selector(".table-page[data-you='2']", timeout=WAIT)
    assert joins(guest, table)[0]["invite"] == created["invite"]
    assert guest.page.url.endswith(f"#/t/{table}")
    assert not guest.errors and not host.errors, guest.errors + host.errors
    for tab in (host, guest):
        assert tab.schema_failures()[1] == []
        await tab.close()


async def test_password_prompt(server: LiveServer, browser: Any) -> None:
    host = await new_tab(browser, server.http)
    table = await create_private(host, 3, {"password": "open sesame"})
    guest = await new_tab(browser, server.http, f"/#/t/{table}")
    page = guest.page
    await page.click("[data-control=sit]", timeout=WAIT)
    await page.wait_for_selector(".password-form [data-error=bad_password]", timeout=WAIT)
    await page.fill("#table-password", "open sesame?")
    await page.click("#password-join")
    await expect(page.locator(".password-form [data-error=bad_password]")).to_be_visible(timeout=WAIT)
    assert [m.get("password") for m in joins(guest, table)][-1] == "open sesame?"
    await page.fill("#table-password", "open sesame")
    await page.click("#password-join")
    await page.wait_for_selector(".table-page[data-you='2']", timeout=WAIT)
    assert not guest.errors and not host.errors, guest.errors + host.errors
    for tab in (host, guest):
        await tab.close()


async def ask_and_approve(host: Tab, guest: Tab, seat: int) -> None:
    """``guest`` (watching) asks for a seat, sees it wait, and the host approves it from its panel."""
    page = guest.page
    await page.click("[data-control=sit]", timeout=WAIT)
    await expect(page.locator("[data-pending]")).to_have_text("Waiting for the host to let you sit…", timeout=WAIT)
    assert joins(guest, page.url.rsplit("/", 1)[-1])[-1]["ask"] is True
    request = host.page.locator(f".host-panel li[data-request='{player_of(guest)}']")
    await request.locator("[data-control=approve]").click(timeout=WAIT)
    await page.wait_for_selector(f".table-page[data-you='{seat}']", timeout=WAIT)
    await expect(page.locator("[data-pending]")).to_have_count(0)
    await expect(request).to_have_count(0)


async def test_host_approves_kicks_transfers_and_closes(server: LiveServer, browser: Any) -> None:
    host = await new_tab(browser, server.http)
    table = await create_private(host, 4, {"approve_seats": True})
    first = await new_tab(browser, server.http, f"/#/t/{table}")
    second = await new_tab(browser, server.http, f"/#/t/{table}")
    third = await new_tab(browser, server.http, f"/#/t/{table}")
    for tab in (host, first, second, third):
        accept_dialogs(tab)
    await ask_and_approve(host, first, 2)
    await ask_and_approve(host, second, 3)
    await expect(first.page.locator(".host-panel")).to_have_count(0)

    # kick: the first guest's seat is freed (between matches) and its page watches
    person = host.page.locator(f".host-panel li[data-person='{player_of(first)}']")
    await person.locator("[data-control=kick]").click(timeout=WAIT)
    await first.page.wait_for_selector(".table-page[data-you='']", timeout=WAIT)
    await expect(first.page.locator(".log li.ev-kicked")).to_have_text("The host removed you from seat 2: now watching")
    await expect(first.page.locator(".pills")).to_contain_text("watching")
    await expect(host.page.locator(".log li.ev-kicked")).to_contain_text("from seat 2")

    # ban: the third guest, seated in the freed seat, is removed from the table
    await ask_and_approve(host, third, 2)
    await host.page.locator(f".host-panel li[data-person='{player_of(third)}'] [data-control=ban]").click(timeout=WAIT)
    await expect(third.page.locator("[data-removed]")).to_contain_text("The host removed you from this table", timeout=WAIT)
    await expect(host.page.locator(".log li.ev-banned")).to_have_count(1, timeout=WAIT)

    # transfer: the panel moves to the second guest
    await host.page.locator(f".host-panel li[data-person='{player_of(second)}'] [data-control=transfer]").click(timeout=WAIT)
    await expect(second.page.locator(".host-panel")).to_be_visible(timeout=WAIT)
    await expect(host.page.locator(".host-panel")).to_have_count(0, timeout=WAIT)
    await expect(host.page.locator(".log li.ev-owner_changed")).to_have_count(1)

    # close: every page shows the table closed
    await second.page.locator(".host-panel [data-control=close]").click(timeout=WAIT)
    for tab in (host, first, second):
        await tab.page.wait_for_selector(".table-page[data-status=closed]", timeout=WAIT)
        await expect(tab.page.locator(".log li.ev-closed")).to_have_text("The host closed the table")
    for tab in (host, first, second, third):
        assert not tab.errors, tab.errors
        assert tab.schema_failures()[1] == []
        await tab.close()


async def test_lobby_filters_and_own_tables_first(server: LiveServer, browser: Any) -> None:
    other = await new_tab(browser, server.http)
    theirs = await create_private(other, 3, {})  # people only, someone else's
    me = await new_tab(browser, server.http)
    page = me.page
    await page.select_option("#game", "no_limit_holdem")
    await page.fill("#seats", "3")
    await page.fill("#bots", "1")
    await page.click("#create-button")
    await page.wait_for_selector(".table-page[data-you='1']", timeout=WAIT)
    mine = page.url.rsplit("/", 1)[-1]
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if "/api/tables?" in request.url else None)
    await page.goto(f"{server.http}/#/")
    rows = page.locator("#table-list li.table-row")
    await expect(rows.first).to_have_attribute("data-table", mine, timeout=WAIT)  # own tables first
    await expect(rows.first.locator(".pill.host")).to_have_text("you host")
    await page.select_option("#filter-bots", "false")
    await expect(page.locator(f"#table-list li[data-table='{theirs}']")).to_have_count(1, timeout=WAIT)
    await expect(page.locator(f"#table-list li[data-table='{mine}']")).to_have_count(0, timeout=WAIT)
    await page.select_option("#filter-bots", "true")
    await expect(page.locator(f"#table-list li[data-table='{theirs}']")).to_have_count(0, timeout=WAIT)
    await expect(page.locator(f"#table-list li[data-table='{mine}']")).to_have_count(1)
    await page.select_option("#filter-bots", "")
    await page.select_option("#filter-free", "3")  # neither has three free seats
    await expect(rows).to_have_count(0, timeout=WAIT)
    assert any(f"player={player_of(me)}" in url and "bots=true" in url for url in asked), asked
    assert not me.errors and not other.errors, me.errors + other.errors
    for tab in (me, other):
        await tab.close()
