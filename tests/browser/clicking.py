"""Clicking the action panel without racing the table (the showdown and replayer tests).

A button is clicked as the element it was when looked at: if the table redrew its panel since (a
new turn), the click fails instead of landing on the next turn's button, so a Continue meant for a
street never starts the next hand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


async def click_first(page: Any, kinds: tuple[str, ...], done: str | None = None) -> bool:
    """Click the first of the action panel's buttons `kinds` (data-action values) it shows, unless
    `done` (a selector) shows first; True when a button was clicked or tried."""
    for kind in kinds:
        handle = await page.query_selector(f".action-panel [data-action={kind}]")
        if handle is None:
            continue
        if done and await page.locator(done).count():  # looked at after the button: no race
            return False
        try:
            await handle.click(timeout=2000)
            await handle.wait_for_element_state("hidden", timeout=5000)
        except Exception:  # redrawn meanwhile (the turn moved on): look again
            pass
        return True
    return False


async def press_until(page: Any, done: str, kinds: tuple[str, ...], until: Callable[[], bool] | None = None) -> None:
    """Click the first of `kinds` the panel offers, turn after turn, until `done` (a selector) shows
    or `until()` holds."""
    while True:
        await page.wait_for_selector(f".action-panel [data-action], {done}")
        if await page.locator(done).count() or (until and until()):
            return
        if not await click_first(page, kinds, done):
            await page.wait_for_timeout(20)


#: a button of the action panel that is a decision of ours (a game action), not Continue
DECISION = ".action-panel [data-action]:not([data-action=continue])"


async def my_decision(page: Any) -> None:
    """Press Continue until the page offers a decision of ours (a game action)."""
    while True:
        await page.wait_for_selector(".action-panel [data-action]")
        if await page.locator(DECISION).count():
            return
        try:
            await page.click(".action-panel [data-action=continue]", timeout=2000)
        except Exception:  # the step was taken meanwhile: look again
            pass
