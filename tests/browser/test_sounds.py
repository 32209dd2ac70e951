"""The table's sounds in Chromium (sounds.js): a tone for this viewer's turn, one for a bet or raise,
one for a pot this viewer won, only while the page's sound switch is on.

Two people heads-up at one no-limit table (two browser contexts, no bots): every turn waits for a
click, so who bets and who wins is the test's choice. Both pages keep the log of the sounds they
started (localStorage ``cardhallSoundLog``, set by an init script: window.__cardhallSounds). The
owner turns the sound on; the guest leaves it off (the default). First the owner bets and the guest
folds until the owner has had its turn, seen a bet and won a pot; then the other way round: the
guest's page had the same moments and started no sound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.browser.clicking import click_first
from tests.browser.pages import Tab, create_table, new_tab
from tests.conftest import until
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

LOG = "localStorage.setItem('cardhallSoundLog', '1');"
MINE = ".action-panel.mine button[data-action]"
NL = {"starting_stacks": 1000, "small_blind": 10, "big_blind": 20}
TABLE = {"pause": 0, "action_clock": 60}
#: seconds for a page to show what a step leads to (a busy machine is slow)
DEADLINE = 60


async def sounds(tab: Tab) -> list[str]:
    return await tab.page.evaluate("() => window.__cardhallSounds || []")


def awards_to(tab: Tab, table: str, seat: int) -> list[int]:
    """The seqs of the award events this page received that gave `seat` a pot."""
    return [f["seq"] for f in tab.events(table) if f["event"]["type"] == "award" and str(seat) in f["event"]["winners"]]


def bet_seen(tab: Tab, table: str, seat: int) -> bool:
    """Has `seat` bet or raised (an action event this page received)?"""
    return any(e["type"] == "action" and e["action"] in ("bet", "raise") and e["seat"] == seat
               for e in (f["event"] for f in tab.events(table)))


async def play(better: Tab, folder: Tab, done: Callable[[], Any]) -> None:
    """Hands where `better` bets or raises (else calls or checks) and `folder` folds (else checks),
    until `done()` holds."""
    async def step() -> bool:
        if await done():
            return True
        for tab, kinds in ((better, ("raise", "bet", "call", "check")), (folder, ("fold", "check"))):
            if await tab.page.locator(MINE).count():
                await click_first(tab.page, ("continue", *kinds))
        return False

    await until(step, DEADLINE * 3, "the hands played as the test chose")


async def test_turn_bet_and_win_sounds_only_with_the_switch_on(server: LiveServer, browser: Any) -> None:
    owner = await new_tab(browser, server.http, init_script=LOG)
    await owner.page.check("#pref-sound")  # a click: the page may make sounds from now on
    table = await create_table(owner, "no_limit_holdem", 2, 0, NL, TABLE)
    guest = await new_tab(browser, server.http, f"/#/t/{table}/watch", init_script=LOG)
    assert not await guest.page.is_checked("#pref-sound")  # off by default
    await guest.page.click("[data-control=sit]")
    await guest.page.wait_for_selector(".table-page[data-you='2']")

    # the owner bets, the guest folds: the owner's page sounds its turn, the bet and the pot it won
    async def owner_heard() -> bool:
        return {"turn", "bet", "win"} <= set(await sounds(owner))

    await play(owner, guest, owner_heard)
    assert awards_to(owner, table, 1) and bet_seen(owner, table, 1)
    heard = await sounds(owner)
    assert set(heard) <= {"turn", "bet", "win"}, heard

    # the other way round: the guest has its turns, a bet of its own and a pot, with its switch off
    async def guest_had_all() -> bool:
        return bool(awards_to(guest, table, 2)) and bet_seen(guest, table, 2)

    await play(guest, owner, guest_had_all)
    # the guest's page took in the pot it won (its log says so), and made no sound at any of it
    await guest.page.wait_for_selector(f".log li.ev-award[data-seq='{awards_to(guest, table, 2)[0]}']", state="attached")
    assert await sounds(guest) == []
    assert await guest.page.evaluate("() => document.body.dataset.alertSounds") is None  # no turn tone asked for
    assert not owner.errors and not guest.errors, (owner.errors, guest.errors)
    await owner.close()
    await guest.close()
