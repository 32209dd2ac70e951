"""Motion at the table in Chromium (motion.js, style.css's motion block): cards dealt and turned,
chips bet and won, the pot and each amount won counted out; none of it with
``prefers-reduced-motion: reduce``.

A recorder (an init script's MutationObserver) notes what each drawing of the table gave the page,
as the drawing happened: the animation of every card and chip element added, the classes motion.js
set, whether the pot's ``data-value`` was already its exact amount, and the numbers a count showed.
The tests play a short heads-up match against a bot (calling and checking) until the page has
shown what they look for, and read the record.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.browser.clicking import click_first
from tests.browser.pages import Tab, create_table, new_tab
from tests.games import quick
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FAST = {"bot_think": 0, "pause": 0}
#: seconds for the page to show what playing on leads to (a busy machine is slow)
DEADLINE = 120

#: notes in window.__motion what each drawing added: per kind ("card", "bet", "won", "pot") the
#: computed animation names, the motion classes seen, the pots whose data-value was not their exact
#: amount when drawn, and the counts shown over the amounts (data-count of .count-face)
RECORDER = """
(() => {
  const rec = window.__motion = { card: [], bet: [], won: [], pot: [], classes: {}, inexact: [], counted: [], boardCards: 0 };
  const KINDS = [["card", ".card:not(.slot)"], ["bet", ".bet"], ["won", ".won"], ["pot", ".pot[data-pot]"]];
  const look = (el) => {
    if (!(el instanceof Element) || !el.isConnected || !el.closest(".felt, .play-area") || el.closest(".action-panel")) return;
    for (const [kind, sel] of KINDS) {
      if (!el.matches(sel)) continue;
      rec[kind].push(getComputedStyle(el).animationName);
      if (kind === "card" && el.closest(".center")) rec.boardCards++;
      if (kind === "pot" && el.dataset.value !== el.dataset.pot) rec.inexact.push([el.dataset.pot, el.dataset.value]);
    }
    for (const c of el.classList) if (c.startsWith("motion-") || c === "counting") rec.classes[c] = (rec.classes[c] || 0) + 1;
    if (el.matches(".count-face")) rec.counted.push(el.dataset.count);
  };
  new MutationObserver((list) => {
    for (const m of list) {
      if (m.type === "attributes") { if (m.target.matches(".count-face")) rec.counted.push(m.target.dataset.count); continue; }
      for (const n of m.addedNodes) {
        if (!(n instanceof Element)) continue;
        look(n);
        for (const el of n.querySelectorAll("*")) look(el);
      }
    }
  }).observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-count"] });
})();
"""

#: every pot and amount won shown: its text holds its exact amount, no count is running over it
SETTLED = """() => [...document.querySelectorAll('.felt .pot[data-pot], .felt .won[data-won]')].every((el) => {
  const exact = Number(el.dataset.pot ?? el.dataset.won);
  return !el.classList.contains('counting') && !el.querySelector('.count-face')
    && el.dataset.value === String(exact) && el.textContent.includes(exact.toLocaleString('en-US'));
})"""

#: the names of the CSS animations and transitions running on the table's elements now
TABLE_ANIMATIONS = """() => document.getAnimations()
  .filter((a) => a.playState === 'running' && a.effect && a.effect.target && a.effect.target.closest('.table-page'))
  .map((a) => a.animationName || a.transitionProperty)"""


async def record(tab: Tab) -> dict[str, Any]:
    return await tab.page.evaluate("() => window.__motion")


async def play_until(tab: Tab, done: Any) -> dict[str, Any]:
    """Call, check and Continue (a new match when one ends) until ``done(record)`` holds; the record."""
    page = tab.page
    deadline = time.monotonic() + DEADLINE
    while True:
        rec = await record(tab)
        if done(rec):
            return rec
        assert time.monotonic() < deadline, f"not shown within {DEADLINE} s: {rec['classes']}, {len(rec['card'])} cards"
        assert not tab.errors, tab.errors
        if await page.locator(".result-banner [data-control=rematch-banner]").count():  # the next match
            await page.click(".result-banner [data-control=rematch-banner]")
            await page.wait_for_selector(".result-banner", state="detached")
        elif not await click_first(page, ("continue", "check", "call", "all_in")):
            await page.wait_for_selector(".action-panel [data-action], .result-banner [data-control=rematch-banner]")


async def table_tab(server: LiveServer, browser: Any, reduced: bool) -> Tab:
    tab = await new_tab(browser, server.http, init_script=RECORDER)
    if reduced:
        await tab.page.emulate_media(reduced_motion="reduce")
    await create_table(tab, "no_limit_holdem", 2, 1, quick("no_limit_holdem"), FAST)
    return tab


async def test_cards_and_chips_move_and_amounts_count(server: LiveServer, browser: Any) -> None:
    tab = await table_tab(server, browser, reduced=False)
    page = tab.page
    wanted = ("motion-deal", "motion-turn", "motion-bet", "motion-win", "counting")
    rec = await play_until(tab, lambda r: all(r["classes"].get(c) for c in wanted))
    # a card dealt or turned, a bet and an amount won were drawn with their keyframes running
    assert "motion-deal" in rec["card"] and "motion-turn" in rec["card"], set(rec["card"])
    assert "motion-bet" in rec["bet"] and "motion-win" in rec["won"], (set(rec["bet"]), set(rec["won"]))
    # the pot's data-value was its exact amount in the very drawing that showed it
    assert rec["pot"] and not rec["inexact"], rec["inexact"]
    # counts were drawn over the amounts, and they end on the exact amount with the text shown again
    assert rec["counted"], rec["classes"]
    await page.wait_for_function(SETTLED)
    # and the animations end (the classes may stay on the elements; their keyframes do not run again)
    await page.wait_for_function(f"() => !({TABLE_ANIMATIONS})().some((name) => name.startsWith('motion'))")
    assert not tab.errors, tab.errors
    await tab.close()


async def test_reduced_motion_moves_and_counts_nothing(server: LiveServer, browser: Any) -> None:
    tab = await table_tab(server, browser, reduced=True)
    page = tab.page
    assert await page.evaluate("() => matchMedia('(prefers-reduced-motion: reduce)').matches")
    # play until board cards were turned, a pot grew (several amounts) and an amount was won
    rec = await play_until(tab, lambda r: r["boardCards"] >= 3 and len(r["won"]) >= 1 and len(r["pot"]) >= 3)
    # no element drawn had an animation, no motion class was set, nothing was counted
    for kind in ("card", "bet", "won", "pot"):
        assert set(rec[kind]) <= {"none"}, (kind, set(rec[kind]))
    assert rec["classes"] == {} and rec["counted"] == [], (rec["classes"], rec["counted"][:5])
    # the amounts were exact at once: data-value in the drawing that showed them, the text as well
    assert not rec["inexact"], rec["inexact"]
    assert await page.evaluate(SETTLED)
    assert await page.evaluate(f"() => ({TABLE_ANIMATIONS})()") == []
    assert not tab.errors, tab.errors
    await tab.close()
