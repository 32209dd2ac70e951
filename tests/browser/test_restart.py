"""The page rides out a restart of the service: the server stops (closing the websocket with
1001), a new one starts on the same address and store, and the page reconnects by itself, says
hello with its saved token, joins with ``since`` and plays the match to a verified end, every event
received once and in order."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest

from server.app import build_server
from server.store import MemoryStore, Store
from tests.browser.pages import create_table, new_tab, play_to_end
from tests.browser.test_reconnect import decide, joins
from tests.server.conftest import TEST_SETTINGS

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


@contextlib.asynccontextmanager
async def serve_on(port: int, store: Store) -> AsyncIterator[str]:
    """The service on a fixed loopback ``port`` (the page's address must survive the restart,
    which ``running_server``'s free port does not); yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    server = build_server(replace(TEST_SETTINGS, port=port), store)
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 15)
        sock.close()


async def test_the_page_resumes_after_a_server_restart(browser: Any) -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    store = MemoryStore(1024, keep_states=True)  # kept by both servers, as Redis would be
    async with serve_on(port, store) as base:
        tab = await new_tab(browser, base)
        table = await create_table(tab, "no_limit_holdem", 2, 1, {"starting_stacks": 200, "blind_levels": 0},
                                   {"bot_think": 0, "pause": 0})
        await decide(tab, 3)
    await tab.page.wait_for_selector("#conn-status[data-state=reconnecting]")
    async with serve_on(port, store):
        await tab.page.wait_for_selector("#conn-status[data-state=online]", timeout=15000)
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
