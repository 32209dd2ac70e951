"""The hand replayer in Chromium (history.js, hands.js, each game module's ``history``).

* A finished no-limit match (small stacks: all in by the blinds): the replayer reads the PHH of
  GET /api/tables/{id}/hands, steps forward and back with the board and every hand as dealt, and
  the PHH download sits beside it; at an unlisted table, whose hands answer only with the invite
  in a header, both the replayer and the download send it.
* A finished Loco Poker match (its JSON history): the hands and the outcome step by step.
* During a match: the hands already played as this page saw them, from its own events: never a
  card it was not sent (no opponent's hole cards unless shown).
* Every registered game (its ``quick_options``): a finished bots-only match's hands, as many as the
  server serves, each stepped through to its end.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from cardhall.engine import plugins
from tests.browser.clicking import press_until
from tests.browser.conftest import screenshot_path
from tests.browser.pages import create_table, new_tab
from tests.conftest import until
from tests.games import everyday
from tests.server.conftest import LiveServer
from tests.server.play import cards_in

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FAST = {"bot_think": 0, "pause": 0}


async def stage_cards(page: Any, where: str = "") -> list[str]:
    return await page.locator(f"dialog.replayer .replay-stage {where} .card[data-card]").evaluate_all(
        "els => els.map(e => e.dataset.card)")


async def step_text(page: Any) -> str:
    return await page.locator("dialog.replayer .replay-text").inner_text()


async def test_finished_holdem_replay_and_phh(server: LiveServer, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.http) as http:
        r = await http.post("/api/tables", json={"game": "no_limit_holdem", "seats": 2, "bots": 1, "options": {
            "starting_stacks": 10, "small_blind": 10, "big_blind": 20, "button": 1, **FAST}})
        table = r.json()["table"]
    tab = await new_tab(browser, server.http, f"/#/t/{table}")
    page = tab.page
    await page.click("[data-control=sit]")
    await press_until(page, ".result-banner", ("continue",))
    await page.wait_for_selector(".fair .verdict:not([data-status=checking])")

    history = page.locator(".history")
    link = history.locator("a.phh-download")
    assert await link.get_attribute("href") == f"/api/tables/{table}/hands"
    assert (await link.get_attribute("download")).endswith(".phhs")
    phh = await (await page.request.get(f"{server.http}/api/tables/{table}/hands")).text()
    assert phh.startswith("[1]") and 'variant = "NT"' in phh

    await history.locator("[data-control=replay]").click()
    dlg = page.locator("dialog.replayer[data-source=server]")
    await dlg.locator(".replay-stage").wait_for()
    hands = len(re.findall(r"^\[\d+\]$", phh, re.M))
    assert await dlg.locator(".hand-pick option").count() == hands
    await dlg.locator(".hand-pick").select_option("0")
    assert (await step_text(page)).startswith("Hand 1: ")
    assert await stage_cards(page, ".board") == []
    dealt = [e["event"]["cards"] for e in tab.events(table) if e["event"]["type"] == "hole_cards"][0]
    forward = dlg.locator("[data-step=forward]")
    while not (await step_text(page)).startswith("Flop"):
        await forward.click()
    assert len(await stage_cards(page, ".board")) == 3
    assert await stage_cards(page, "[data-seat='1']") == dealt  # our cards, as dealt
    assert len(await stage_cards(page, "[data-seat='2']")) == 2  # a finished match shows every hand
    await page.screenshot(path=screenshot_path("replayer"))
    await dlg.locator("[data-step=back]").click()
    assert len(await stage_cards(page, ".board")) == 0
    await dlg.locator("[data-step=last]").click()
    assert re.search(r"wins \d+", await step_text(page)), await step_text(page)
    assert len(await stage_cards(page, ".board")) == 5
    assert await forward.is_disabled()
    await dlg.locator(".close").click()
    await dlg.wait_for(state="detached")


async def test_an_unlisted_tables_hands_are_read_with_its_invite(server: LiveServer, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.http) as http:
        r = await http.post("/api/tables", json={"game": "no_limit_holdem", "seats": 2, "bots": 1, "options": {
            "starting_stacks": 10, "small_blind": 10, "big_blind": 20, "visibility": "unlisted", **FAST}})
        table, invite = r.json()["table"], r.json()["invite"]
        assert (await http.get(f"/api/tables/{table}/hands")).status_code == 404  # without the invite
    tab = await new_tab(browser, server.http, f"/#table={table}&invite={invite}")  # the invite link
    page = tab.page
    await press_until(page, ".result-banner", ("continue",))

    history = page.locator(".history")
    async with page.expect_download() as saving:
        await history.locator("a.phh-download").click()
    saved = await (await saving.value).path()
    with open(saved, encoding="utf-8") as f:
        phh = f.read()
    assert phh.startswith("[1]") and 'variant = "NT"' in phh

    await history.locator("[data-control=replay]").click()
    dlg = page.locator("dialog.replayer[data-source=server]")
    await dlg.locator(".replay-stage").wait_for()
    assert await dlg.locator(".hand-pick option").count() == len(re.findall(r"^\[\d+\]$", phh, re.M)) > 0
    assert not tab.errors, tab.errors
    await tab.close()


async def test_finished_loco_replay(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http)
    page = tab.page
    await create_table(tab, "loco_poker", 2, 1, {"points_to_win": 1}, FAST)
    await press_until(page, ".result-banner", ("all_in", "call", "continue", "check"))
    await page.click(".history [data-control=replay]")
    dlg = page.locator("dialog.replayer[data-source=server]")
    await dlg.locator(".replay-stage").wait_for()
    await dlg.locator(".hand-pick").select_option("0")
    assert (await step_text(page)).startswith("Hand 1: ")
    await dlg.locator("[data-step=forward]").click()
    assert (await step_text(page)) == "Hole cards are dealt"
    assert len(await stage_cards(page, "[data-seat='1']")) == 2 and len(await stage_cards(page, "[data-seat='2']")) == 2
    await page.keyboard.press("ArrowLeft")  # the keys step too
    assert (await step_text(page)).startswith("Hand 1: ")
    await dlg.locator(".hand-pick").select_option(str(await dlg.locator(".hand-pick option").count() - 1))
    await dlg.locator("[data-step=last]").click()
    assert re.search(r"point|knocked out|push", await step_text(page)), await step_text(page)
    assert "Points:" in await dlg.locator(".replay-note").inner_text()
    assert not tab.errors, tab.errors
    await tab.close()


async def test_live_replay_shows_only_what_this_viewer_saw(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http)
    page = tab.page
    table = await create_table(tab, "no_limit_holdem", 2, 1, {"starting_stacks": 400}, FAST)
    # fold at once when facing a bet (no showdown, most often), until hand 2 is dealt
    def seen_hand(n: int) -> bool:
        return any(f["event"]["type"] == "hand_start" and f["event"]["hand"] == n for f in tab.events(table))

    await press_until(page, ".result-banner", ("fold", "check", "call", "continue"), until=lambda: seen_hand(2))
    await page.click(".history [data-control=replay]")
    dlg = page.locator("dialog.replayer[data-source=live]")
    await dlg.locator(".replay-stage").wait_for()
    labels = await dlg.locator(".hand-pick option").all_inner_texts()
    assert labels[:2] == ["Hand 1", "Hand 2"], labels
    await dlg.locator(".hand-pick").select_option("0")
    assert (await step_text(page)).startswith("Match starts")

    # every card drawn at every step of hand 1 is one this page was sent; the bot's only if shown
    events = [f["event"] for f in tab.events(table)]
    hand1 = events[:next(i for i, e in enumerate(events) if e["type"] == "hand_start" and e["hand"] == 2)]
    sent = cards_in(hand1)
    bot_shown = cards_in([e for e in hand1 if e["type"] == "show" and e["seat"] == 2])
    mine = next(e["cards"] for e in hand1 if e["type"] == "hole_cards")
    steps = await dlg.locator(".replay-steps li").count()
    seen_mine = False
    for i in range(steps):
        if i:
            await dlg.locator("[data-step=forward]").click()
        assert await dlg.locator(".replay-stage").get_attribute("data-step-index") == str(i)
        drawn = await stage_cards(page)
        assert set(drawn) <= sent, (drawn, sent)
        assert set(await stage_cards(page, "[data-seat='2']")) <= bot_shown
        seen_mine = seen_mine or await stage_cards(page, "[data-seat='1']") == mine
    assert seen_mine
    await page.screenshot(path=screenshot_path("replayer-live"))
    assert re.search(r"wins \d+", await step_text(page)), await step_text(page)
    await dlg.locator("[data-step=first]").click()
    assert (await step_text(page)).startswith("Match starts")
    assert not tab.errors, tab.errors
    await tab.close()


@pytest.mark.parametrize("game", everyday(sorted(plugins.games()), set(plugins.games()) - {"avalanche", "fixed_limit_holdem"}))
async def test_every_games_finished_hands_replay(server: LiveServer, browser: Any, game: str) -> None:
    async with httpx.AsyncClient(base_url=server.http) as http:
        r = await http.post("/api/tables", json={"game": game, "seats": 2, "bots": 2,
                                                  "options": {**plugins.spec(game).quick_options, **FAST}})
        table = r.json()["table"]

        async def finished() -> bool:
            return (await http.get(f"/api/tables/{table}")).json()["status"] == "finished"

        await until(finished, 120, f"the end of the {game} match")
        body = (await http.get(f"/api/tables/{table}/hands")).text
    phh = body.startswith("[1]")
    served = len(re.findall(r"^\[\d+\]$", body, re.M)) if phh else len(json.loads(body)["hands"])
    assert served > 0
    tab = await new_tab(browser, server.http, f"/#/t/{table}/watch")
    page = tab.page
    await page.wait_for_selector(".result-banner")
    assert await page.locator(".history a.phh-download").count() == int(phh)
    await page.click(".history [data-control=replay]")
    dlg = page.locator("dialog.replayer[data-source=server]")
    await dlg.locator(".replay-stage").wait_for()
    labels = await dlg.locator(".hand-pick option").all_inner_texts()
    assert len(labels) == served and all(label.startswith("Match 1 · ") for label in labels), labels
    drew = False  # some step draws the hand's cards (a finished match shows them all)
    for i in (0, served - 1):
        await dlg.locator(".hand-pick").select_option(str(i))
        steps = await dlg.locator(".replay-steps li").count()
        assert steps >= 2, (game, i, steps)
        for _ in range(steps - 1):
            drew = drew or bool(await stage_cards(page))
            await dlg.locator("[data-step=forward]").click()
        assert await dlg.locator("[data-step=forward]").is_disabled()
        assert await dlg.locator(".replay-pos").inner_text() == f"Step {steps} of {steps}"
        assert await dlg.locator(".replay-stage .replay-felt").count() == 1
    assert drew, game
    assert not tab.errors, tab.errors
    await tab.close()
