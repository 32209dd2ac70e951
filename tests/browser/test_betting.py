"""Betting as online players know it, in Chromium: bet-size presets beside the amount field (clamped
to the legal range, the pot counted as NL-2 counts it), the typed amount kept across a reload, Enter
and R to bet, one button for a call that is all in; and acting in advance: pre-action boxes while
the other player acts, dropped when a raise changes the call, sent as a normal `act` on the turn.

Two people heads-up at one no-limit table (two browser contexts, no bots, no pauses): every turn
waits for a click, so nothing depends on timing.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import screenshot_path
from tests.browser.pages import Tab, create_table, new_tab
from tests.conftest import until
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

MINE = ".action-panel.mine button[data-action]"
NL = {"starting_stacks": 1000, "small_blind": 10, "big_blind": 20}
TABLE = {"pause": 0, "action_clock": 60}


def acts(tab: Tab) -> list[dict[str, Any]]:
    """The `act` messages the page sent: {type, table, action, turn, ...}."""
    return [m for m in tab.sent if m.get("type") == "act"]


#: seconds for a page to show or send what a step leads to (a busy machine is slow)
DEADLINE = 60


async def to_act(a: Tab, b: Tab) -> tuple[Tab, Tab]:
    """(the tab whose turn it is, the other one), once one has its action buttons."""
    found: list[tuple[Tab, Tab]] = []

    async def someone() -> bool:
        for me, other in ((a, b), (b, a)):
            if await me.page.locator(MINE).count():
                found.append((me, other))
                return True
        return False

    await until(someone, DEADLINE, "somebody's turn")
    return found[-1]


async def labels(tab: Tab, selector: str) -> list[str]:
    """The visible labels of the elements ``selector`` (a button's key badge left out)."""
    return await tab.page.locator(selector).evaluate_all(
        "els => els.map((e) => [...e.childNodes].filter((n) => n.nodeName !== 'KBD').map((n) => n.textContent).join('').trim())")


def offered(tab: Tab, message: dict[str, Any]) -> list[str]:
    """The legal action types of the turn a sent `act` names (as this page received them)."""
    return [a["type"] for f in tab.frames if f.get("legal") and f["turn"]["id"] == message.get("turn") for a in f["legal"]]


async def test_presets_keys_all_in_and_preactions(server: LiveServer, browser: Any) -> None:
    owner = await new_tab(browser, server.http)
    table = await create_table(owner, "no_limit_holdem", 2, 0, NL, TABLE)
    guest = await new_tab(browser, server.http, f"/#/t/{table}/watch")
    await guest.page.click("[data-control=sit]")
    await guest.page.wait_for_selector(".table-page[data-you='2']")

    # hand 1, preflop: the small blind (10 in, 10 to call) acts; the big blind may act in advance
    sb, bb = await to_act(owner, guest)
    await bb.page.wait_for_selector(".preactions")
    assert await labels(bb, ".preaction") == ["Check/fold", "Check", "Call any"]
    await bb.page.check("[data-preaction=check]")

    # presets: raise-to totals, the pot (30) counted after the call (10): top bet 20 + f × 40
    panel = sb.page.locator(".action-panel.mine")
    assert await labels(sb, ".presets .preset") == ["Min", "½ pot", "¾ pot", "Pot", "All-in"]
    amounts = [int(await b.get_attribute("data-amount")) for b in await panel.locator(".preset").all()]
    assert amounts == [40, 40, 50, 60, 1000]
    raise_button = panel.locator("button[data-action=raise]")
    assert await raise_button.get_attribute("aria-keyshortcuts") == "R"
    assert await raise_button.locator("kbd").inner_text() == "R"
    for name, value in (("pot", "60"), ("max", "1000"), ("three_quarters", "50")):
        await panel.locator(f".preset[data-preset={name}]").click()
        assert await panel.locator("#amount-raise").input_value() == value
        assert (await raise_button.inner_text()).startswith(f"Raise to {int(value):,}")

    # a typed amount survives a redraw of the whole page (a reload), and Enter in the field bets it
    await panel.locator("#amount-raise").fill("75")
    assert (await raise_button.inner_text()).startswith("Raise to 75")
    await sb.page.reload()
    await sb.page.wait_for_selector(MINE)
    assert await panel.locator("#amount-raise").input_value() == "75"
    assert (await raise_button.inner_text()).startswith("Raise to 75")
    await bb.page.screenshot(path=screenshot_path("betting-preactions"))
    await sb.page.screenshot(path=screenshot_path("betting-presets"))
    await panel.locator("#amount-raise").press("Enter")
    await until(lambda: bool(acts(sb)), DEADLINE, "Enter sent nothing")
    assert acts(sb)[-1]["action"] == {"type": "raise", "amount": 75}

    # the raise changed the call: the big blind's "Check" is dropped, its own turn shows the buttons
    await bb.page.wait_for_selector(MINE)
    bb_panel = bb.page.locator(".action-panel.mine")
    assert "Call 55" in await labels(bb, ".action-panel.mine button.act")
    # ½ pot: 75 + (95 + 55) / 2 = 150; R raises what the field holds (the preset keeps the focus)
    await bb_panel.locator(".preset[data-preset=half]").click()
    assert await bb_panel.locator("#amount-raise").input_value() == "150"
    await bb.page.keyboard.press("r")
    await until(lambda: bool(acts(bb)), DEADLINE, "R sent nothing")
    assert [m["action"] for m in acts(bb)] == [{"type": "raise", "amount": 150}]  # no pre-action went first

    # the small blind moves all in (A); calling 850 of an 850 stack is one button, not two
    await sb.page.wait_for_selector(MINE)
    await sb.page.keyboard.press("a")
    await bb.page.wait_for_selector(MINE)
    assert await labels(bb, ".action-panel.mine button.act") == ["Fold", "Call 850 (all in)"]
    assert await bb_panel.locator("button[data-action=call]").get_attribute("aria-keyshortcuts") == "C A"
    await bb.page.keyboard.press("f")
    # the fold is taken: hand 1's last buttons are gone (the next hand may give this tab the first turn)
    await bb.page.wait_for_selector(".action-panel.mine button[data-action=call]:has-text('850')", state="detached")

    # hand 2: the button moved; the waiting big blind picks "Call any" (one box at most)
    sb, bb = await to_act(owner, guest)
    assert sb is not bb and await sb.page.locator(".preset").count()
    await bb.page.check("[data-preaction=check]")
    await bb.page.check("[data-preaction=call_any]")
    assert not await bb.page.is_checked("[data-preaction=check]")
    sent = len(acts(bb))
    await sb.page.locator(".action-panel.mine .preset[data-preset=min]").press("Enter")  # Enter on a preset bets it
    await until(lambda: len(acts(bb)) > sent, DEADLINE, "Call any was not sent on the turn")
    assert acts(bb)[-1]["action"] == {"type": "call"} and "call" in offered(bb, acts(bb)[-1])
    assert acts(sb)[-1]["action"] == {"type": "raise", "amount": 40}

    # the flop: the big blind acts first; the button's "Check" goes on its turn
    await bb.page.wait_for_selector(MINE)
    await sb.page.wait_for_selector(".preactions")
    await sb.page.check("[data-preaction=check]")
    sent = len(acts(sb))
    await bb.page.keyboard.press("c")
    await until(lambda: len(acts(sb)) > sent, DEADLINE, "Check was not sent on the turn")
    assert acts(sb)[-1]["action"] == {"type": "check"} and "check" in offered(sb, acts(sb)[-1])

    # the turn card: "Check/fold" facing a bet folds
    await bb.page.wait_for_selector(MINE)
    await sb.page.wait_for_selector(".preactions")
    await sb.page.check("[data-preaction=check_fold]")
    sent = len(acts(sb))
    await bb.page.locator(".action-panel.mine .preset[data-preset=pot]").click()
    await bb.page.keyboard.press("r")
    await until(lambda: len(acts(sb)) > sent, DEADLINE, "Check/fold was not sent on the turn")
    assert acts(sb)[-1]["action"] == {"type": "fold"} and "bet" not in offered(sb, acts(sb)[-1])
    assert acts(bb)[-1]["action"] == {"type": "bet", "amount": 80}  # the pot: 40 + 40

    for tab in (owner, guest):
        assert not tab.errors, tab.errors
        _, problems = tab.schema_failures()
        assert not problems, problems[:5]
    await guest.close()
    await owner.close()


async def test_preaction_rules(server: LiveServer, browser: Any) -> None:
    """The rules of preactions.js and presets.js, run in the page: what drops a choice, what it sends."""
    tab = await new_tab(browser, server.http)
    out = await tab.page.evaluate("""async () => {
      const p = await import("/web/js/preactions.js");
      const b = await import("/web/js/presets.js");
      const s = { hand: 3, street: "flop", players: [1, 2], folded: [], stacks: { 1: 100, 2: 30 }, bets: { 1: 50, 2: 0 } };
      const now = p.situation(s, 2);
      const call = { kind: "call", ...now }, any = { kind: "call_any", ...now };
      const raised = { ...now, toCall: 80 }, turned = { ...now, street: "turn" };
      return {
        now, call: [p.stillValid(call, now), p.stillValid(call, raised), p.stillValid(any, raised), p.stillValid(any, turned)],
        folded: p.situation({ ...s, folded: [2] }, 2),
        sends: [p.actionFor({ kind: "check_fold" }, [{ type: "fold" }, { type: "call", min: 30, max: 30 }]),
          p.actionFor({ kind: "call_any" }, [{ type: "check" }]), p.actionFor({ kind: "call", toCall: 30 }, [{ type: "call", min: 40, max: 40 }])],
        clamped: b.betPresets({ type: "raise", min: 160, max: 200 }, { pot: 150, bets: { 1: 50, 2: 0 }, call: 50 }).map((x) => x.amount),
      };
    }""")
    assert out["now"] == {"hand": 3, "street": "flop", "toCall": 30}  # capped at the stack
    assert out["call"] == [True, False, True, False]
    assert out["folded"] is None
    assert out["sends"] == [{"type": "fold"}, {"type": "check"}, None]
    assert out["clamped"] == [160, 160, 200, 200, 200]  # ½ pot 150 up to the min, ¾ 200, pot 250 down to the max
    assert not tab.errors, tab.errors
    await tab.close()
