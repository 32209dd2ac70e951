"""The page rides out a restart of the service: the server stops (closing the websocket with
1001), a new one starts on the same address and store, and the page reconnects by itself, says
hello with its saved token, joins with ``since`` and plays the match to a verified end, every event
received once and in order."""

from __future__ import annotations

from typing import Any

import pytest

from cardhall.clients.load.probe import free_port
from cardhall.server.store.memory import MemoryStore
from tests.browser.pages import new_tab, play_to_end
from tests.browser.test_reconnect import decide, heads_up, joins
from tests.server.conftest import TEST_SETTINGS, running_server

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


async def test_the_page_resumes_after_a_server_restart(browser: Any) -> None:
    port = free_port()  # the page's address must survive the restart: both servers listen on it
    store = MemoryStore(1024, keep_states=True)  # kept by both servers, as Redis would be
    async with running_server(TEST_SETTINGS, store, port) as first:
        tab = await new_tab(browser, first.http)
        table = await heads_up(tab)
        await decide(tab, 3)
    await tab.page.wait_for_selector("#conn-status[data-state=reconnecting]")
    async with running_server(TEST_SETTINGS, store, port):
        await tab.page.wait_for_selector("#conn-status[data-state=online]", timeout=60_000)
        # the only console errors allowed: Chromium's own report of each reconnect attempt refused while no
        # server listened (the page retries, as it should); any other error still fails the test
        refused = (f"WebSocket connection to 'ws://127.0.0.1:{port}/ws' failed: "
                   "Error in connection establishment: net::ERR_CONNECTION_REFUSED")
        tab.errors[:] = [e for e in tab.errors if e != refused]
        await tab.page.wait_for_selector(".table-page[data-you='1'][data-status=running]")
        await play_to_end(tab, "no_limit_holdem", timeout=90)
        await tab.page.wait_for_selector(".fair .verdict[data-status=verified]")
        welcomes = [f for f in tab.frames if f.get("type") == "welcome"]
        assert len(welcomes) == 2 and welcomes[0]["player"] == welcomes[1]["player"]  # the token was kept
        sent = joins(tab, table)
        assert sent[-1]["role"] == "player" and "since" in sent[-1]
        snapshots = [f for f in tab.frames if f.get("type") == "snapshot" and f.get("table") == table]
        assert len(snapshots) == 1  # resumed from the store's events, not from a fresh snapshot
        seqs = [f["seq"] for f in tab.events(table)]
        assert seqs == list(range(snapshots[0]["seq"] + 1, snapshots[0]["seq"] + 1 + len(seqs)))
        assert not tab.errors, tab.errors
        await tab.close()
