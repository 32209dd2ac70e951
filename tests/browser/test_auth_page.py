"""The browser page signs in through its operator's site (protocol/SPEC.md "Identity",
``clients/web/js/signin.js``), against a live server started with a key and ``--require-auth``.

Opened with ``#auth=<JWT>`` (a guest's token kept from before beside it), the page says ``hello``
with ``auth`` and no token, takes the fragment out of the address bar at once, shows the claim's
name, keeps the resume token, creates a table and sits down; a reload without the fragment resumes
the same player (``hello`` with that token) at its seat. Without a JWT (a fresh browser, or one
holding a token the server does not know) the page shows that the server admits only players
signed in through its operator's site; an expired JWT shows the server's refusal with its reason.
A refusal opens one websocket and no other: the page's clock is Playwright's, run a minute ahead
to let any retry fire, never a wait of real time.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import jwt
import pytest
import pytest_asyncio
from playwright.async_api import expect

from cardhall.server.auth import public_id
from tests.browser.conftest import screenshot_path
from tests.browser.pages import Frame, Tab, create_table, fresh_context, new_tab
from tests.server.conftest import TEST_SETTINGS, LiveServer, running_server

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

SECRET = b"0123456789abcdef0123456789abcdef-browser-secret"
ISS = "https://accounts.example"
AUD = "cardhall-browser"
REQUIRED = "This server admits only players signed in through its operator's site."
#: counts the websockets a page opens (instrumentation only: the sockets are the browser's own)
COUNT_SOCKETS = """
(() => {
  const Native = window.WebSocket;
  window.socketsOpened = 0;
  window.WebSocket = class extends Native {
    constructor(...args) { super(...args); window.socketsOpened += 1; }
  };
})();
"""
#: a guest's token kept by this browser from before (the server does not know it); set once
KEPT_GUEST = "localStorage.getItem('cardhall.token') || localStorage.setItem('cardhall.token', 'guest-token-kept-from-before');"
#: the length of the tab's history before the page's own scripts run
HISTORY_AT_START = "window.historyAtStart = history.length;"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LiveServer]:
    """A live server that admits only players its operator identifies (an HS256 secret, an issuer
    and an audience): this module's own, in place of tests/browser/conftest.py's guest server."""
    key = tmp_path_factory.mktemp("jwt") / "jwt.key"
    key.write_bytes(SECRET + b"\n")
    settings = replace(TEST_SETTINGS, max_tables_per_player=100, jwt_key=str(key), jwt_issuer=ISS,
                       jwt_audience=AUD, require_auth=True)
    async with running_server(settings) as srv:
        yield srv


def mint(sub: str, name: str, expires_in: int = 600) -> str:
    """A JWT of the operator's site for account ``sub``, valid ``expires_in`` seconds from now
    (negative: expired that long ago)."""
    now = int(time.time())
    claims = {"iss": ISS, "aud": AUD, "sub": sub, "name": name, "iat": now - 3600, "exp": now + expires_in}
    return jwt.encode(claims, SECRET, algorithm="HS256")


def sent(tab: Tab, kind: str) -> list[Frame]:
    return [m for m in tab.sent if m.get("type") == kind]


def welcomes(tab: Tab) -> list[Frame]:
    return [f for f in tab.frames if f.get("type") == "welcome"]


async def open_refused(browser: Any, base: str, path: str, init_script: str = "") -> Tab:
    """A fresh context showing ``base + path`` on a clock Playwright drives, its frames kept as
    :func:`tests.browser.pages.new_tab` keeps them; returns once the page says it is not signed in
    (``#conn-status[data-state=refused]``: the server refused its hello)."""
    context = await fresh_context(browser, viewport={"width": 1360, "height": 860})
    await context.add_init_script(COUNT_SOCKETS + init_script)
    page = await context.new_page()
    await page.clock.install()
    tab = Tab(context, page)

    def on_ws(ws: Any) -> None:
        ws.on("framereceived", lambda payload: tab.frames.append(json.loads(payload)))
        ws.on("framesent", lambda payload: tab.sent.append(json.loads(payload)))

    page.on("websocket", on_ws)
    page.on("pageerror", lambda exc: tab.errors.append(str(exc)))
    await page.goto(base + path)
    await page.wait_for_selector("#conn-status[data-state=refused]")
    return tab


async def never_retries(tab: Tab) -> None:
    """The page's clock run a minute ahead (every reconnect timer it could have set fires): still
    one websocket, still refused."""
    await tab.page.clock.run_for(60_000)
    assert await tab.page.evaluate("window.socketsOpened") == 1
    await expect(tab.page.locator("#conn-status")).to_have_attribute("data-state", "refused")


async def test_a_jwt_in_the_fragment_signs_in_and_a_reload_resumes(server: LiveServer, browser: Any) -> None:
    token = mint("ann@example.com", "Ann")
    tab = await new_tab(browser, server.http, f"/#auth={token}", init_script=KEPT_GUEST + HISTORY_AT_START)
    page = tab.page
    ann = public_id(ISS, "ann@example.com")

    # hello with the JWT and not the guest's token kept from before; the fragment is gone at once
    [hello] = sent(tab, "hello")
    assert hello["auth"] == token and "token" not in hello
    [welcome] = welcomes(tab)
    assert welcome["player"] == ann and welcome["name"] == "Ann"
    href = await page.evaluate("location.href")
    assert href == server.http + "/" and token not in href, href
    assert await page.evaluate("history.length === window.historyAtStart")  # replaced, no entry added
    assert token not in await page.evaluate("JSON.stringify(localStorage)")  # only the resume token is kept
    assert await page.evaluate("localStorage.getItem('cardhall.token')") == welcome["token"]
    await expect(page.locator("#player-name")).to_have_value("Ann")
    await expect(page.locator("#conn-status")).to_have_text("online")

    # an identified player plays like any other: a table, seat 1 under the claim's name
    table = await create_table(tab, "no_limit_holdem", 2, 1, {"starting_stacks": 5000, "blind_levels": 0},
                               {"bot_think": 0, "pause": 0, "action_clock": 600, "time_bank": 0})
    seat = page.locator(".seat[data-seat='1'] .seat-name")
    await expect(seat).to_have_text("Ann (you)")
    await page.screenshot(path=screenshot_path("auth-signed-in"))

    # a reload without the fragment: hello with the resume token, the same player back at its seat
    await page.reload()
    await page.wait_for_selector(".table-page[data-you='1']")
    await expect(seat).to_have_text("Ann (you)")
    assert await page.evaluate("location.href") == f"{server.http}/#/t/{table}"
    hellos = sent(tab, "hello")
    assert len(hellos) == 2 and hellos[1]["token"] == welcome["token"] and "auth" not in hellos[1]
    assert [w["player"] for w in welcomes(tab)] == [ann, ann]
    assert not [f for f in tab.frames if f.get("type") == "error"]
    assert not tab.errors, tab.errors
    _, problems = tab.schema_failures()
    assert not problems, problems[:5]
    await tab.close()


@pytest.mark.parametrize("kept", [None, "guest-token-kept-from-before"], ids=["fresh", "kept-token"])
async def test_without_a_jwt_the_page_says_who_may_play(server: LiveServer, browser: Any, kept: str | None) -> None:
    """A fresh browser says hello as a new guest; one holding a token the server does not know
    tries it, then a new guest: both get ``auth_required``, shown as a sentence, never retried."""
    tab = await open_refused(browser, server.http, "/", KEPT_GUEST if kept else "")
    page = tab.page
    notice = page.locator(".signin")
    await expect(notice).to_have_attribute("data-code", "auth_required")
    await expect(notice.locator("h1")).to_have_text(REQUIRED)
    await expect(page.locator("#conn-status")).to_have_text("not signed in")
    await expect(page.locator(".lobby, .table-page")).to_have_count(0)
    await never_retries(tab)
    hellos = sent(tab, "hello")
    assert ["token" in m for m in hellos] == ([True, False] if kept else [False]), hellos
    assert "auth" not in str(hellos)
    [error] = [f for f in tab.frames if f.get("type") == "error" and f["code"] != "unknown_token"]
    assert error["code"] == "auth_required" and error["re"] == hellos[-1]["id"]
    await expect(notice).to_contain_text(error["message"])  # the server's own words beside the sentence
    if kept is None:
        await page.screenshot(path=screenshot_path("auth-required"))
    assert not tab.errors, tab.errors
    await tab.close()


async def test_an_expired_jwt_shows_the_refusal_and_its_reason(server: LiveServer, browser: Any) -> None:
    token = mint("bob@example.com", "Bob", expires_in=-3600)
    tab = await open_refused(browser, server.http, f"/#auth={token}")
    page = tab.page
    notice = page.locator(".signin")
    await expect(notice).to_have_attribute("data-code", "bad_auth")
    await expect(notice).to_have_attribute("data-reason", "expired")
    [hello] = sent(tab, "hello")
    assert hello["auth"] == token
    [error] = [f for f in tab.frames if f.get("type") == "error"]
    assert (error["code"], error["reason"]) == ("bad_auth", "expired")
    await expect(notice.locator("h1")).to_have_text("Your sign-in was refused.")
    await expect(notice.locator(".signin-detail")).to_have_text(f"{error['message']} (reason: expired)")
    assert token not in await page.evaluate("location.href")
    await page.screenshot(path=screenshot_path("auth-refused"))
    await never_retries(tab)

    # going on without signing in: a reload, no JWT any more; this server admits no guests
    await page.click(".signin-guest")
    await expect(notice).to_have_attribute("data-code", "auth_required")
    assert [("auth" in m, "token" in m) for m in sent(tab, "hello")] == [(True, False), (False, False)]
    assert not tab.errors, tab.errors
    await tab.close()

