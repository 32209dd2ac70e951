"""The page rides out a table that is ``unavailable`` for a while (its store failing over, or the table
moving between nodes: SPEC "Resuming and reconnecting"): after a dropped websocket its ``join`` with
``since`` is answered ``unavailable`` three times, and the page asks again, backing off, instead of
showing an error; meanwhile it shows the table from its saved state with no action to send, and once
the join passes it plays on, every event once and in order.

While it joins again (after a drop, or after a reload while its join is on its way), every control
that sends a request for the table (the host's, Sit out, Leave, chat) is disabled and a click sends
nothing; they work again once the join passes. Joins refused past
the page's deadline (shortened here through localStorage ``cardhallRejoinFor``) stop: the page says
the table is not available, and its Try again joins again.

The refusals are made on the wire: Playwright routes the page's websocket to the real server and
answers the resuming joins itself (every other message goes to the server as it is)."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from playwright.async_api import expect

from tests.browser.pages import new_tab
from tests.browser.test_reconnect import TRACK_SOCKETS, decide, heads_up
from tests.conftest import until
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

REFUSALS = 3
#: the deadline of the page's joins again in the deadline's test (ms): three refusals (0.25 s, 0.5 s, then
#: a wait of 1 s would pass it)
SHORT_DEADLINE = "localStorage.setItem('cardhallRejoinFor', '1500');"
#: the page's controls that send a request for the table, as its owner seated in a running match sees
#: them: the host's (Pause, Close table, the spectators' chat switch), Sit out (Sit in once its clock
#: ran out), Leave, the chat's input
TABLE_CONTROLS = ("[data-control=pause]", "[data-control=close]", "[data-control=spectator-chat]",
                  "[data-control=sit_out], [data-control=sit_in]", "[data-control=leave]", ".chat-input")
#: the messages those controls send
TABLE_REQUESTS = ("act", "chat", "leave")


class Wire:
    """Routes a page's websocket to the server, keeping every message the page sends (``sent``), and
    answers the resuming joins of ``table`` (those with ``since``) itself with ``unavailable`` while
    ``refusing`` is true and fewer than ``limit`` were (``refused``: when each was answered); the other
    resuming joins go on to the server (``passed``). With ``holding`` set, the resuming joins wait
    unanswered (``held``) until :meth:`release` sends them on."""

    def __init__(self, table: str, limit: int | None = None, refusing: bool = True) -> None:
        self.table = table
        self.limit = limit
        self.refusing = refusing
        self.holding = False
        self.held: list[tuple[Any, str | bytes]] = []
        self.refused: list[float] = []
        self.passed: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []

    def release(self) -> None:
        """Stop holding: the joins held go on to the server."""
        self.holding = False
        for upstream, message in self.held:
            self.passed.append(json.loads(message))
            upstream.send(message)
        self.held = []

    def _resuming(self, msg: dict[str, Any]) -> bool:
        return msg.get("type") == "join" and msg.get("table") == self.table and "since" in msg

    def _refuses(self, msg: dict[str, Any]) -> bool:
        return self._resuming(msg) and self.refusing and (self.limit is None or len(self.refused) < self.limit)

    def route(self, ws: Any) -> None:
        upstream = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            msg = json.loads(message)
            self.sent.append(msg)
            resuming = self._resuming(msg)
            if resuming and self.holding:
                self.held.append((upstream, message))
                return
            if self._refuses(msg):
                self.refused.append(time.monotonic())
                ws.send(json.dumps({"type": "error", "code": "unavailable", "re": msg["id"],
                                    "message": "the table cannot save its state right now; retry shortly"}))
                return
            if resuming:
                self.passed.append(msg)
            upstream.send(message)

        ws.on_message(from_page)

    def requests(self) -> list[dict[str, Any]]:
        """The messages sent for the table by its controls (:data:`TABLE_REQUESTS`)."""
        return [m for m in self.sent if m.get("type") in TABLE_REQUESTS and m.get("table") == self.table]


async def click_where(page: Any, selector: str) -> None:
    """Click where ``selector``'s element is, as a person's pointer does (a disabled button takes no
    click); the page may draw the element again meanwhile: the click lands on what is there then."""
    box = await page.locator(selector).bounding_box()
    assert box is not None, selector
    await page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


async def refuse_after_a_drop(page: Any, wire: Wire) -> None:
    """Route the page's websocket through ``wire`` and drop it: the page reconnects through it."""
    await page.route_web_socket(re.compile(r"/ws$"), wire.route)
    sockets = await page.evaluate("window.__sockets.length")
    await page.evaluate("window.__sockets[window.__sockets.length - 1].close()")
    await page.wait_for_function(f"window.__sockets.length > {sockets} && window.__sockets.at(-1).readyState === 1")
    await page.wait_for_selector("#conn-status[data-state=online]")


async def test_a_join_answered_unavailable_is_asked_again(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http, init_script=TRACK_SOCKETS)
    table = await heads_up(tab)
    page = tab.page
    await decide(tab, 2)

    wire = Wire(table, REFUSALS)
    await refuse_after_a_drop(page, wire)
    # while the join is refused: the table from the page's saved state, no action to send, a notice
    await page.wait_for_selector(".action-panel [data-rejoining]")
    await page.wait_for_selector(".toast:has-text('busy for a moment')")
    await page.wait_for_selector(".table-page[data-you='1'][data-status=running] .action-panel [data-action]")
    await decide(tab, 2)  # the table plays on
    refused, passed = wire.refused, wire.passed
    assert len(refused) == REFUSALS and len(passed) == 1, (refused, passed)
    gaps = [b - a for a, b in zip(refused, refused[1:])]
    assert gaps[0] >= 0.2 and gaps[1] >= 0.45, gaps  # backing off: 0.25 s, then 0.5 s
    assert passed[0]["role"] == "player" and passed[0]["since"] > 0
    assert await page.locator("[data-error]").count() == 0  # no error notice was left on the page

    snapshots = [f for f in tab.frames if f.get("type") == "snapshot" and f.get("table") == table]
    assert len(snapshots) == 1  # resumed from the events since, never from a fresh snapshot
    seqs = [f["seq"] for f in tab.events(table)]
    assert seqs == list(range(snapshots[0]["seq"] + 1, snapshots[0]["seq"] + 1 + len(seqs))), seqs
    assert not tab.errors, tab.errors
    await tab.close()


async def test_table_controls_are_inert_until_the_join_passes(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http, init_script=TRACK_SOCKETS)
    table = await heads_up(tab)
    page = tab.page
    for control in TABLE_CONTROLS:
        await expect(page.locator(control)).to_be_enabled()

    wire = Wire(table)  # every resuming join refused, until the test lets one pass
    await refuse_after_a_drop(page, wire)
    await page.wait_for_selector(".toast:has-text('busy for a moment')")
    await expect(page.locator(".action-panel [data-rejoining]")).to_have_text("Joining the table again…")
    for control in TABLE_CONTROLS:
        await expect(page.locator(control)).to_be_disabled()
    await expect(page.locator(".chat-input")).to_have_attribute("placeholder", "Joining the table again…")
    for control in TABLE_CONTROLS[:-1]:  # clicked as a person would: a disabled button takes no click
        await click_where(page, control)
    await expect(page.locator("[data-control=pause]")).to_be_disabled()  # still refused: nothing changed
    assert len(wire.refused) >= 1 and not wire.passed

    wire.refusing = False  # the next join passes: the controls work again
    for control in TABLE_CONTROLS:
        await expect(page.locator(control)).to_be_enabled()
    await expect(page.locator(".action-panel [data-rejoining]")).to_have_count(0)
    assert wire.requests() == [], wire.requests()  # the clicks while refused sent nothing
    assert len(wire.passed) == 1 and wire.passed[0]["role"] == "player"

    await page.click("[data-control=pause]")  # and a control sent now is the table's
    await page.wait_for_selector(".table-page[data-status=paused]")
    assert [m["action"] for m in wire.requests()] == [{"type": "pause"}]
    assert not [f for f in tab.frames if f.get("type") == "error" and f.get("code") != "unavailable"], tab.frames
    assert not tab.errors, tab.errors
    await tab.close()


async def test_joins_refused_past_the_deadline_stop_and_try_again(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http, init_script=TRACK_SOCKETS + SHORT_DEADLINE)
    table = await heads_up(tab)
    page = tab.page

    wire = Wire(table)  # every resuming join refused
    await refuse_after_a_drop(page, wire)
    stopped = page.locator(".action-panel [data-unavailable]")
    await expect(stopped).to_have_text(re.compile("The table is not available right now"))
    await expect(page.locator(".action-panel [data-rejoining]")).to_have_count(0)
    asked = len(wire.refused)
    assert asked >= 2, wire.refused  # asked again, backing off, until the deadline
    for control in TABLE_CONTROLS:  # still not joined: nothing can be sent
        await expect(page.locator(control)).to_be_disabled()

    # Try again starts afresh: joins again, refused again until a new deadline, then stops again
    await page.click(".action-panel [data-rejoin]")
    await until(lambda: len(wire.refused) > asked, 30, "the join of Try again")
    await expect(stopped).to_be_visible()
    assert len(wire.refused) >= asked + 2, wire.refused

    wire.refusing = False
    await page.click(".action-panel [data-rejoin]")
    await expect(stopped).to_have_count(0)
    for control in TABLE_CONTROLS:
        await expect(page.locator(control)).to_be_enabled()
    assert len(wire.passed) == 1 and wire.passed[0]["role"] == "player" and wire.passed[0]["since"] > 0
    snapshots = [f for f in tab.frames if f.get("type") == "snapshot" and f.get("table") == table]
    assert len(snapshots) == 1  # resumed with since, never from a fresh snapshot
    assert await page.locator("[data-error]").count() == 0
    assert not tab.errors, tab.errors
    await tab.close()


async def test_a_reloaded_page_sends_nothing_for_its_table_before_its_join_passes(server: LiveServer,
                                                                                  browser: Any) -> None:
    tab = await new_tab(browser, server.http, init_script=TRACK_SOCKETS)
    table = await heads_up(tab)
    page = tab.page
    wire = Wire(table, refusing=False)
    wire.holding = True  # the reloaded page's join waits unanswered, until the test lets it go
    await page.route_web_socket(re.compile(r"/ws$"), wire.route)

    async def after_the_welcome(route: Any) -> None:
        # the games' list is held until the websocket is online: the connection is ready before the
        # reloaded page makes its table, the order a slow network gives
        await page.wait_for_selector("#conn-status[data-state=online]")
        await route.continue_()

    await page.route(re.compile(r"/api/games$"), after_the_welcome)
    await page.reload()
    await expect(page.locator(".action-panel [data-rejoining]")).to_have_text("Joining the table again…")
    for control in TABLE_CONTROLS:
        await expect(page.locator(control)).to_be_disabled()
    await until(lambda: len(wire.held) == 1, 30, "the reloaded page's join")
    await click_where(page, "[data-control=pause]")
    assert wire.requests() == [], wire.requests()

    wire.release()
    for control in TABLE_CONTROLS:
        await expect(page.locator(control)).to_be_enabled()
    assert len(wire.passed) == 1 and wire.passed[0]["since"] > 0
    assert wire.requests() == [], wire.requests()
    assert not tab.errors, tab.errors
    await tab.close()
