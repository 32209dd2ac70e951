"""Driving the browser client like a person: the lobby form, the action buttons.

Every websocket frame a page receives is kept (``Page.frames``, batches
unwrapped) so the tests can check what the browser was sent, not only what it
drew.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from cardhall.protocol.schemas import FrameValidator

Frame = dict[str, Any]

#: how long any wait of a page, a locator or an ``expect`` may take (ms): generous, so that a
#: busy, shared machine is slow and never red; a test that passes waits only as long as it must
WAIT_MS = 90_000


async def fresh_context(browser: Any, **options: Any) -> Any:
    """A new browser context (``browser.new_context(**options)``) whose waits take :data:`WAIT_MS`."""
    context = await browser.new_context(**options)
    context.set_default_timeout(WAIT_MS)
    return context


@dataclass
class Tab:
    """A browser context with one page and the frames its websockets received."""

    context: Any
    page: Any
    frames: list[Frame] = field(default_factory=list)
    sent: list[Frame] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    raw: list[Frame] = field(default_factory=list)

    def schema_failures(self) -> tuple[Any, list[str]]:
        """Every frame received (batches as sent) and message sent, checked against
        ``protocol/schemas``: (the validator's count of frames checked by kind, the problems found)."""
        validator = FrameValidator()
        problems: list[str] = []
        for frame in self.raw:
            problems += [f"{frame.get('type')}: {p}" for p in validator.server_errors(frame)[:1]]
        for message in self.sent:
            problems += [f"sent {message.get('type')}: {p}" for p in validator.client_errors(message)[:1]]
        return validator.checked, problems

    def events(self, table: str) -> list[Frame]:
        return [f for f in self.frames if f.get("type") == "event" and f.get("table") == table]

    async def close(self) -> None:
        await self.context.close()


def _received(payload: str | bytes, tab: Tab) -> None:
    frame = json.loads(payload)
    tab.raw.append(frame)
    if frame.get("type") == "batch":
        tab.frames.extend(frame["frames"])
    else:
        tab.frames.append(frame)


async def new_tab(browser: Any, base: str, path: str = "/", width: int = 1360, height: int = 860,
                  init_script: str | None = None, touch: bool = False) -> Tab:
    """A fresh context (its own localStorage: another person) showing ``base + path``;
    ``init_script`` runs in every page before the page's own scripts; ``touch``: a phone's
    browser (a touch screen, the mobile viewport: ``Locator.tap`` works)."""
    phone = {"has_touch": True, "is_mobile": True} if touch else {}
    context = await fresh_context(browser, viewport={"width": width, "height": height}, **phone)
    if init_script:
        await context.add_init_script(init_script)
    page = await context.new_page()
    tab = Tab(context, page)

    def on_ws(ws: Any) -> None:
        ws.on("framereceived", lambda payload: _received(payload, tab))
        ws.on("framesent", lambda payload: tab.sent.append(json.loads(payload)))

    page.on("websocket", on_ws)
    page.on("pageerror", lambda exc: tab.errors.append(str(exc)))
    page.on("console", lambda msg: tab.errors.append(msg.text) if msg.type == "error" else None)
    await page.goto(base + path)
    await page.wait_for_selector("#conn-status[data-state=online]")
    return tab


async def set_field(el: Any, value: Any) -> None:
    """Set the form field ``el`` (a locator) to ``value`` as a person does: tick a checkbox, choose an
    option of a select, type into anything else."""
    kind = await el.evaluate("e => e.type")
    if kind == "checkbox":
        await el.set_checked(bool(value))
    elif kind.startswith("select"):
        await el.select_option(str(value))
    else:
        await el.fill(str(value))


async def go_from_lobby(tab: Tab, table: str, go: str) -> None:
    """Press the lobby row's ``go`` control (``play`` or ``watch``, its ``data-go``) of ``table``.

    The lobby redraws its rows every 2.5 s and rows move as tables come and go, so a click at the
    place the control was a moment ago can land on another row's control; the click is dispatched to
    the control itself, once the row is listed."""
    control = tab.page.locator(f".table-row[data-table='{table}'] [data-go={go}]")
    await control.wait_for()
    await control.dispatch_event("click")


async def create_table(tab: Tab, game: str, seats: int, bots: int, options: dict[str, Any],
                       table_options: dict[str, Any]) -> str:
    """Fill the lobby form and create the table; returns its id once the table page shows a seat."""
    page = tab.page
    await page.select_option("#game", game)
    await page.fill("#seats", str(seats))
    await page.fill("#bots", str(bots))
    for name, value in options.items():
        await set_field(page.locator(f"#g-{name}"), value)
    if table_options:
        await page.click("details.more summary")
        for name, value in table_options.items():
            await page.fill(f"#t-{name}", str(value))
    await page.click("#create-button")
    await page.wait_for_selector(".table-page[data-you='1']")
    return page.url.rsplit("/", 1)[-1]


#: the action buttons clicked, the first present (after Continue): short matches push the chips in,
#: and a game's own kinds come last; the same for every game (the panel shows the legal actions)
POLICY: tuple[str, ...] = ("all_in", "raise", "bet", "call", "check", "play")


async def play_to_end(tab: Tab, game: str, timeout: float = 300.0, on_decision: Any = None,
                      tap: bool = False) -> int:
    """Click through the match: Continue when the table waits, else the first button of
    :data:`POLICY` (``game`` names the match in a failure); returns the number of clicks once the
    result banner shows. ``on_decision(clicks, kind)`` is awaited before each click; ``tap``
    taps the buttons (a touch screen: ``new_tab(touch=True)``) instead of clicking them."""
    page = tab.page
    clicks = 0
    deadline = time.monotonic() + timeout
    selector = ".result-banner, .action-panel [data-action]"
    while True:
        assert time.monotonic() < deadline, f"{game}: the match did not end in {timeout}s ({clicks} clicks)"
        assert not tab.errors, tab.errors
        await page.wait_for_selector(selector, timeout=timeout * 1000)
        if await page.locator(".result-banner").count():
            return clicks
        panel = page.locator(".action-panel")
        button = None
        for kind in ("continue", *POLICY):
            candidate = panel.locator(f"button[data-action='{kind}']")
            if await candidate.count():
                button = candidate.first
                break
        else:
            kind = None
        if button is None:
            await page.wait_for_timeout(20)
            continue
        if on_decision is not None:
            await on_decision(clicks, kind)
        handle = await button.element_handle()
        try:
            await (button.tap(timeout=2000) if tap else button.click(timeout=2000))
        except Exception:  # the turn moved on while we looked (a bot or the clock): look again
            continue
        clicks += 1
        if handle is not None:
            try:
                await handle.wait_for_element_state("hidden", timeout=5000)
            except Exception:
                pass
