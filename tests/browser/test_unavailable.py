"""The page rides out a table that is ``unavailable`` for a while (its store failing over, or the table
moving between nodes: SPEC "Resuming and reconnecting"): after a dropped websocket its ``join`` with
``since`` is answered ``unavailable`` three times, and the page asks again, backing off, instead of
showing an error; meanwhile it shows the table from its saved state with no action to send, and once
the join passes it plays on, every event once and in order.

The refusals are made on the wire: Playwright routes the page's websocket to the real server and
answers the first three resuming joins itself (every other message goes to the server as it is)."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from tests.browser.pages import new_tab
from tests.browser.test_reconnect import TRACK_SOCKETS, decide, heads_up
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

REFUSALS = 3


async def test_a_join_answered_unavailable_is_asked_again(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http, init_script=TRACK_SOCKETS)
    table = await heads_up(tab)
    page = tab.page
    await decide(tab, 2)

    refused: list[float] = []  # when each resuming join was answered unavailable
    passed: list[dict[str, Any]] = []  # the resuming joins sent on to the server

    def route(ws: Any) -> None:
        upstream = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            msg = json.loads(message)
            if msg.get("type") == "join" and msg.get("table") == table and "since" in msg:
                if len(refused) < REFUSALS:
                    refused.append(time.monotonic())
                    ws.send(json.dumps({"type": "error", "code": "unavailable", "re": msg["id"],
                                        "message": "the table cannot save its state right now; retry shortly"}))
                    return
                passed.append(msg)
            upstream.send(message)

        ws.on_message(from_page)

    await page.route_web_socket(re.compile(r"/ws$"), route)
    sockets = await page.evaluate("window.__sockets.length")
    await page.evaluate("window.__sockets[window.__sockets.length - 1].close()")
    await page.wait_for_function(f"window.__sockets.length > {sockets} && window.__sockets.at(-1).readyState === 1")
    await page.wait_for_selector("#conn-status[data-state=online]")
    # while the join is refused: the table from the page's saved state, no action to send, a notice
    await page.wait_for_selector(".action-panel [data-rejoining]")
    await page.wait_for_selector(".toast:has-text('busy for a moment')")
    await page.wait_for_selector(".table-page[data-you='1'][data-status=running] .action-panel [data-action]")
    await decide(tab, 2)  # the table plays on
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
