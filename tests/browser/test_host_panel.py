"""The browser's private tables and host panel (SPEC "Private tables", "The host's controls", 1.5):
the lobby form's privacy fields, the owner's invite link joining an unlisted table, a password
table's prompt (a wrong password shows the server's ``bad_password`` message), a seat asked for at
an ``approve_seats`` table and approved from the host panel, a kick (the kicked page watches), a
transfer (the panel moves to the new host) and a close (every page shows the table closed); the
requests waiting listed from the host's snapshot (``info.requests``), one denied (the requester is
told) and one that lapses; the Copy button putting the invite link on the clipboard, a spectator
known from the chat banned from the panel, and a new host shown the invite it never had."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from playwright.async_api import expect

from tests.browser.pages import WAIT_MS, Frame, Tab, new_tab, set_field
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

WAIT = WAIT_MS


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


def welcome(tab: Tab) -> Frame:
    """The page's last ``welcome`` (its player, name and token)."""
    return [f for f in tab.frames if f.get("type") == "welcome"][-1]


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


async def test_requests_listed_on_join_one_denied_one_lapsed(server: LiveServer, browser: Any) -> None:
    host, guest = await new_tab(browser, server.http), await new_tab(browser, server.http)
    tables = []
    async with httpx.AsyncClient(base_url=server.http) as http:  # the host's tables, made with its token
        for within in (120, 1):  # the second's requests lapse after a second (the least allowed)
            made = await http.post("/api/tables", headers={"Authorization": f"Bearer {welcome(host)['token']}"},
                                   json={"game": "no_limit_holdem", "seats": 3, "bots": 0,
                                         "options": {"approve_seats": True, "approve_within": within}})
            tables.append(made.json()["table"])
    denied, lapsing = tables
    # the guest asks before the host opens the table: the host's snapshot lists the request
    await guest.page.goto(f"{server.http}/#/t/{denied}")
    await guest.page.click("[data-control=sit]", timeout=WAIT)
    await expect(guest.page.locator("[data-pending]")).to_be_visible(timeout=WAIT)
    await host.page.goto(f"{server.http}/#/t/{denied}")
    request = host.page.locator(f".host-panel li[data-request='{player_of(guest)}']")
    await expect(request).to_contain_text(welcome(guest)["name"], timeout=WAIT)
    assert not [e for e in host.events(denied) if e["event"]["type"] == "seat_requested"]
    await request.locator("[data-control=deny]").click()
    await expect(guest.page.locator(".toast")).to_have_text("The host did not let you sit: watching", timeout=WAIT)
    await expect(guest.page.locator(".log li.ev-seat_denied")).to_have_text("The host turned down your request for a seat")
    await expect(guest.page.locator("[data-pending]")).to_have_count(0)
    await expect(request).to_have_count(0)
    # a request nobody answers lapses: the page is told when the event comes
    await guest.page.goto(f"{server.http}/#/t/{lapsing}")
    await guest.page.click("[data-control=sit]", timeout=WAIT)
    await expect(guest.page.locator(".log li.ev-seat_request_lapsed")).to_have_text(
        "Your request for a seat lapsed (timeout)", timeout=WAIT)
    await expect(guest.page.locator("[data-pending]")).to_have_count(0)
    for tab in (host, guest):
        assert not tab.errors, tab.errors
        assert tab.schema_failures()[1] == []
        await tab.close()


async def test_copy_ban_a_spectator_from_the_chat_and_the_new_host_gets_the_invite(
        server: LiveServer, browser: Any) -> None:
    host = await new_tab(browser, server.http)
    await host.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.http)
    accept_dialogs(host)
    table = await create_private(host, 3, {})  # a public table: nobody else is told its invite
    invite = [f for f in host.frames if f.get("type") == "table_created"][-1]["invite"]
    await host.page.click("[data-control=copy-invite]")
    await expect(host.page.locator(".invite .copy-status")).to_have_text("Copied", timeout=WAIT)
    copied = await host.page.evaluate("navigator.clipboard.readText()")
    assert copied == f"{server.http}/#table={table}&invite={invite}"

    # a spectator known from its chat message: the host bans it from the panel
    guest, watcher = [await new_tab(browser, server.http, f"/#/t/{table}") for _ in range(2)]
    await guest.page.click("[data-control=sit]", timeout=WAIT)
    await guest.page.wait_for_selector(".table-page[data-you='2']", timeout=WAIT)
    await watcher.page.fill(".chat-input", "just watching")
    await watcher.page.press(".chat-input", "Enter")
    spectator = host.page.locator(f".host-panel li[data-spectator='{player_of(watcher)}']")
    await expect(spectator).to_contain_text(welcome(watcher)["name"], timeout=WAIT)
    await expect(host.page.locator(f".host-panel li[data-spectator='{player_of(guest)}']")).to_have_count(0)
    await spectator.locator("[data-control=ban]").click()
    await expect(watcher.page.locator("[data-removed]")).to_be_visible(timeout=WAIT)
    await expect(spectator).to_have_count(0, timeout=WAIT)

    # the new host is sent the invite right after owner_changed, without joining again
    assert invite not in json.dumps(guest.frames)
    await host.page.locator(f".host-panel li[data-person='{player_of(guest)}'] [data-control=transfer]").click(timeout=WAIT)
    await expect(guest.page.locator(".host-panel .invite-link")).to_have_value(copied, timeout=WAIT)
    fresh = [f for f in guest.frames if f.get("type") == "snapshot" and "re" not in f]
    assert [f["info"]["invite"] for f in fresh] == [invite] and fresh[0]["you"] == 2
    await expect(guest.page.locator(".table-page")).to_have_attribute("data-you", "2")
    for tab in (host, guest, watcher):
        assert not tab.errors, tab.errors
        assert tab.schema_failures()[1] == []
        await tab.close()
