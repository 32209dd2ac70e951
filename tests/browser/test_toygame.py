"""High Card (tests/toygame) in Chromium with its own browser module, ``tests/toygame/web.js``:
everything the page knows of the game beyond the catalogue comes from that file, served from the
game's registration (``GameSpec.web_renderer``).

* A person creates a table against the game's bot from the lobby form (the module's labels and
  blurb), plays the match to the end, and the G-2 check (the module's ``fairness``) verifies every
  card the page saw; the hand replayer (the module's ``history``) steps through every hand of the
  finished match with the cards the server recorded.
* The module's replay accepts whole matches the Python engine dealt, as a seat and as a
  spectator sees them (each card counted once), and rejects a changed card or another client seed.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from cardhall.engine import plugins
from tests.browser.conftest import screenshot_path
from tests.browser.pages import create_table, new_tab, play_to_end
from tests.browser.test_fairness_js import play, verify
from tests.server.conftest import TEST_SETTINGS, LiveServer, running_server

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

GAME = "high_card"
FAST = {"bot_think": 0, "pause": 0}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[LiveServer]:
    """A live server that knows High Card, registered in this process as ``CARDHALL_GAMES=tests.toygame``
    would register it, for the module's tests."""
    (toy,) = plugins.load_module("tests.toygame")
    with plugins.registered(toy):
        async with running_server(dataclasses.replace(TEST_SETTINGS, max_tables_per_player=100)) as srv:
            yield srv



async def stage_cards(page: Any, where: str = "") -> list[str]:
    return await page.locator(f"dialog.replayer .replay-stage {where} .card[data-card]").evaluate_all(
        "els => els.map(e => e.dataset.card)")


async def test_a_match_against_the_bot_is_verified_and_replayed(server: LiveServer, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.http) as http:
        entry = next(g for g in (await http.get("/api/games")).json()["games"] if g["name"] == GAME)
    assert entry["renderer"] == f"/games/{GAME}/web.js"
    options = dict(plugins.spec(GAME).quick_options)
    hands = options.get("hands", 3)

    tab = await new_tab(browser, server.http)
    page = tab.page
    await page.wait_for_selector(f"#game option[value={GAME}]", state="attached")
    await page.select_option("#game", GAME)
    # the lobby's words are the module's
    assert await page.locator("label[for=g-max_bet]").inner_text() == "Largest bet (points)"
    assert "highest card" in await page.locator(".blurb").inner_text()
    table = await create_table(tab, GAME, 2, 1, options, FAST)
    await page.wait_for_selector(".generic-view")  # the table: the generic renderer the module reuses
    await play_to_end(tab, GAME)

    verdict = page.locator(".fair .verdict[data-status=verified]")
    await verdict.wait_for()
    assert int(await verdict.get_attribute("data-checked")) >= hands  # at least the player's card of each hand
    await page.screenshot(path=screenshot_path("toygame-result"))

    # the replayer: every hand of the finished match, every card as the server recorded it
    async with httpx.AsyncClient(base_url=server.http) as http:
        body = (await http.get(f"/api/tables/{table}/hands")).json()
    records = [r["hand"] for r in body["hands"]]
    assert [r["hand"] for r in records] == list(range(1, hands + 1))
    dealt = [f["event"]["card"] for f in tab.events(table) if f["event"]["type"] == "deal"]
    assert dealt == [r["cards"]["1"] for r in records]  # what the page was dealt is what was recorded

    await page.click(".history [data-control=replay]")
    dlg = page.locator("dialog.replayer[data-source=server]")
    await dlg.locator(".replay-stage").wait_for()
    labels = await dlg.locator(".hand-pick option").all_inner_texts()
    assert labels == [f"Match 1 · hand {r['hand']}" for r in records], labels
    text = dlg.locator(".replay-text")
    for i, record in enumerate(records):
        await dlg.locator(".hand-pick").select_option(str(i))
        assert (await text.inner_text()).startswith(f"Hand {record['hand']}: one card each")
        for seat in record["order"]:
            assert await stage_cards(page, f"[data-seat='{seat}']") == [record["cards"][str(seat)]]
        steps = await dlg.locator(".replay-steps li").count()
        assert steps == 2 + len(record["order"])  # the deal, each decision, the outcome
        await dlg.locator("[data-step=forward]").click()
        first = record["order"][0]
        assert (await text.inner_text()).endswith("folds" if first in record["folded"] else f"bets {record['bets'][str(first)]}")
        await dlg.locator("[data-step=last]").click()
        last = await text.inner_text()
        if record["winner"] is None:
            assert last.startswith("Nobody scores"), last
        else:
            assert last.endswith(f"wins with {await card_text(page, record['cards'][str(record['winner'])])}"), last
        assert "Points:" in await dlg.locator(".replay-note").inner_text()
    await page.screenshot(path=screenshot_path("toygame-replayer"))
    assert not tab.errors, tab.errors
    await tab.close()


async def card_text(page: Any, card: str) -> str:
    """The client's words for ``card`` (cards.js cardText)."""
    return await page.evaluate("async (c) => (await import('/web/js/cards.js')).cardText(c)", card)


@pytest.mark.parametrize("viewer", [1, None])
async def test_the_modules_replay_checks_whole_matches(page: Any, viewer: int | None) -> None:
    record, ended = play(GAME, viewer, f"bots/{GAME}")
    events = record["events"]
    assert len([e for e in events if e["type"] == "deal"]) == plugins.spec(GAME).quick_options.get("hands", 3)
    # the cards this viewer saw, one per (hand, seat): its own of each hand, and those shown
    seen = {(e["hand"], viewer) for e in events if e["type"] == "deal" and "card" in e}
    seen |= {(e["hand"], int(seat)) for e in events if e["type"] == "showdown" for seat in e["cards"]}
    assert seen, "the match shows no card to this viewer: choose another bots' seed"
    result = await verify(page, record, ended)
    assert result["status"] == "verified" and result["checked"] == len(seen), result

    # one card changed: a mismatch naming it
    tampered = json.loads(json.dumps(record))
    event = next(e for e in tampered["events"] if e["type"] in ("deal", "showdown") and ("card" in e or "cards" in e))
    cards = event["cards"] if "cards" in event else event
    field = next(iter(cards)) if "cards" in event else "card"
    cards[field] = "2c" if cards[field] != "2c" else "3d"
    bad = await verify(page, tampered, ended)
    assert bad["status"] == "mismatch" and any("the seed deals" in m for m in bad["mismatches"]), bad

    # the same server seed with another client seed shuffles other decks
    other = {**ended, "client_seeds": {**ended["client_seeds"], "3": "d"}}
    assert (await verify(page, record, other))["status"] == "mismatch"
