"""A hand's end on the felt in Chromium (showdown.js and the games' renderers).

* No-limit Hold'em, three seats with unequal small stacks (a main pot and a side pot, no bot
  decision: the blinds put both bots all in): each pot's winner and amount in the centre, the
  amount won beside each winner's seat, the winning five cards highlighted (checked against the
  server's evaluator) and the hand's name (its category as the server's `award` names it).
* Loco Poker: the point scored or the knock-out in the centre and beside the seat.
* Avalanche: who took the fallen avalanche, beside that seat.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from cardhall.engine.ranking import hand_value
from tests.browser.clicking import click_first, press_until
from tests.browser.conftest import screenshot_path
from tests.browser.pages import Tab, create_table, new_tab
from tests.conftest import until
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FAST = {"bot_think": 0, "pause": 0}
#: seconds for the page to receive what a step leads to (a busy machine is slow)
DEADLINE = 60
#: the server's hand categories (eval7) as the page's hand names begin
CATEGORY = {"High Card": "High card", "Pair": "Pair", "Two Pair": "Two pair", "Trips": "Three of a kind",
            "Straight": "Straight", "Flush": "Flush", "Full House": "Full house", "Quads": "Four of a kind",
            "Straight Flush": ("Straight flush", "Royal flush")}


def game_events(tab: Tab, table: str, kind: str) -> list[dict[str, Any]]:
    return [f["event"] for f in tab.events(table) if f["event"]["type"] == kind]


async def sit_at(browser: Any, server: LiveServer, body: dict[str, Any]) -> tuple[Tab, str]:
    """A table created over HTTP (per-seat stacks, which the lobby form has no field for), and a
    page that opens it and takes its free seat."""
    async with httpx.AsyncClient(base_url=server.http) as http:
        r = await http.post("/api/tables", json=body)
        assert r.status_code == 201, r.text
        table = r.json()["table"]
    tab = await new_tab(browser, server.http, f"/#/t/{table}")
    await tab.page.click("[data-control=sit]")
    await tab.page.wait_for_selector(".table-page[data-you='1']")
    return tab, table


async def test_side_pot_showdown(server: LiveServer, browser: Any) -> None:
    # seat 1 (us) has the button and 40 chips; seat 2 posts its whole 10 as the small blind, seat 3
    # its whole 20 as the big blind: our call makes a main pot of 30 and a side pot of 20
    tab, table = await sit_at(browser, server, {
        "game": "no_limit_holdem", "seats": 3, "bots": 2,
        "options": {"starting_stacks": [40, 10, 20], "small_blind": 10, "big_blind": 20, "button": 1, **FAST}})
    page = tab.page
    await page.wait_for_selector(".action-panel [data-action=call]")
    assert await click_first(page, ("call",))
    await press_until(page, ".center .hand-result", ("continue",))  # Continue through the streets
    await until(lambda: game_events(tab, table, "hand_end"), DEADLINE, "the hand is over")
    awards = game_events(tab, table, "award")
    assert [a["pot"] for a in awards] == [0, 1] and [a["amount"] for a in awards] == [30, 20], awards
    names = {o["seat"]: o["name"] for f in tab.frames if f.get("type") == "snapshot" for o in f["info"]["occupants"]}
    names.update({e["seat"]: e["name"] for f in tab.events(table) if (e := f["event"])["type"] == "seated"})

    # each pot in the centre, with its winners and hand; never "Pot 0"
    lines = await page.locator(".center .hand-result .pot-result").all_inner_texts()
    assert len(lines) == 2, lines
    for line, a, label in zip(lines, awards, ["Main pot", "Side pot 1"]):
        head = f"{label}: {a['amount']} to "
        assert line.startswith(head), (line, a)
        shown_winners = set(line[len(head):].split(" (", 1)[0].split(" & "))  # a split pot: in either order
        assert shown_winners == {names[int(s)] for s in a["winners"]}, (line, a)
        expected = CATEGORY[a["hand"]]
        assert line.split("(", 1)[1].startswith(expected), (line, a["hand"])
    assert await page.locator(".center .pot").count() == 0

    # beside each winner: what it took, its hand's name and its winning five highlighted
    board = game_events(tab, table, "board")[-1]["board"]
    shown = {e["seat"]: e["cards"] for e in game_events(tab, table, "show")}
    took: dict[int, int] = {}
    for a in awards:
        for s, chips in a["winners"].items():
            took[int(s)] = took.get(int(s), 0) + chips
    for seat, chips in took.items():
        box = page.locator(f".seat[data-seat='{seat}']")
        assert await box.locator(".won").inner_text() == f"wins {chips} chips"
        assert await box.locator(".hand-name").count() == 1
        hole_win = await box.locator(".card.win").evaluate_all("els => els.map(e => e.dataset.card)")
        assert set(hole_win) <= set(shown[seat])
    main_winner = int(next(iter(awards[0]["winners"])))
    board_win = await page.locator(".center .board .card.win").evaluate_all("els => els.map(e => e.dataset.card)")
    mine = await page.locator(f".seat[data-seat='{main_winner}'] .card.win").evaluate_all("els => els.map(e => e.dataset.card)")
    five = board_win + mine
    assert len(five) == 5 and set(board_win) <= set(board)
    assert hand_value(five) == hand_value(board + shown[main_winner])  # the best five, as the server ranks them
    for seat in {1, 2, 3} - set(took):
        assert await page.locator(f".seat[data-seat='{seat}'] .won").count() == 0
    await page.screenshot(path=screenshot_path("showdown-side-pot"))
    assert not tab.errors, tab.errors
    await tab.close()


async def test_loco_points_and_knockouts(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http)
    page = tab.page
    table = await create_table(tab, "loco_poker", 2, 1, {"points_to_win": 1}, FAST)
    # all in at once; call a bot's all-in; Continue between streets
    await press_until(page, ".center .hand-result[data-result]:not([data-result=push])", ("all_in", "call", "continue", "check"))
    await until(lambda: [e for e in game_events(tab, table, "hand_end") if e["result"] != "push"], DEADLINE,
                "a hand that is not a push is over")
    end = [e for e in game_events(tab, table, "hand_end") if e["result"] != "push"][-1]
    result = page.locator(".center .hand-result")
    text = await result.inner_text()
    names = {1: await page.locator(".seat[data-seat='1'] .seat-name").inner_text(), 2: "bot 2"}
    names[1] = names[1].removesuffix(" (you)")
    if end["scored"] is not None:
        assert f"{names[end['scored']]} scores a point: 1 of 1" in text
        assert await page.locator(f".seat[data-seat='{end['scored']}'] .won").inner_text() == "+1 point"
    for seat in end["knocked_out"]:
        assert f"Knocked out: {names[seat]}" in text
        assert await page.locator(f".seat[data-seat='{seat}'] .ko").count() == 1
    if game_events(tab, table, "showdown"):
        assert "Best hand:" in text
        assert await page.locator(".center .board .card.win").count() >= 1
    assert not tab.errors, tab.errors
    await tab.close()


async def test_avalanche_who_took_it(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http)
    page = tab.page
    table = await create_table(tab, "avalanche", 2, 1, {}, FAST)
    # start avalanches and answer the bot's with one low card: one of us lets it fall soon
    while not game_events(tab, table, "fallen"):
        await page.wait_for_selector(".action-panel [data-action=play]")
        if game_events(tab, table, "fallen"):
            break
        panel = page.locator(".action-panel")
        if await page.locator(".center .avalanche-plays").count():
            await panel.locator(".rank-pick").first.click()
            await panel.locator("input.count").fill("1")
        handle = await panel.locator("[data-action=play]").element_handle()
        await panel.locator("[data-action=play]").click()
        await handle.wait_for_element_state("hidden")
    fall = game_events(tab, table, "fallen")[0]
    # the fall stays shown until the next avalanche ends, which needs a play of ours
    took = page.locator(f".seat[data-seat='{fall['to']}'] .won")
    await took.wait_for()
    assert await took.inner_text() == f"took the avalanche: +{fall['count']} card{'s' if fall['count'] != 1 else ''}"
    assert await page.locator(".seat .won").count() == 1
    assert not tab.errors, tab.errors
    await tab.close()
