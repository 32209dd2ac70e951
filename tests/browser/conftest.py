"""Fixtures for the browser tests: one live server and one Chromium per test module.

Chromium comes from Debian (``/usr/bin/chromium``; ``.ci/run`` installs it):
Playwright drives it with ``executable_path`` and never downloads a browser.
Without Chromium the tests skip locally and fail under ``CI=true``
(:func:`tests.conftest.require`). Screenshots go to ``artifacts/screenshots/``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.browser.pages import WAIT_MS, fresh_context
from tests.conftest import require
from tests.server.conftest import TEST_SETTINGS, LiveServer, running_server

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-quic"]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[LiveServer]:
    """A live server (in-memory store) for the module's tests."""
    async with running_server(replace(TEST_SETTINGS, max_tables_per_player=100)) as srv:
        yield srv


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    """Chromium, headless, through Playwright."""
    require(CHROMIUM is not None, "Chromium is not installed (apt-get install chromium)")
    from playwright.async_api import async_playwright, expect

    expect.set_options(timeout=WAIT_MS)
    async with async_playwright() as p:
        chromium = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def page(server: LiveServer, browser: Any) -> AsyncIterator[Any]:
    """A page of the module's server's origin (a secure context with WebCrypto, where the client's
    modules import as the page's do), for tests that evaluate the client's modules."""
    context = await fresh_context(browser)
    page = await context.new_page()
    await page.goto(server.http + "/healthz")
    yield page
    await context.close()


def screenshot_path(name: str) -> str:
    """Where a test keeps its screenshot ``name`` (a PNG under artifacts/screenshots/)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return str(SCREENSHOTS / f"{name}.png")


@pytest.fixture
def shots() -> Any:
    return screenshot_path
