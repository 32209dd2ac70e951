"""A game's "How to play" page in Chromium (``server/rules.py``, ``clients/web/js/rules.js``).

* The lobby's form links the chosen game's page, and each listed table its game's; the form shows
  each option's meaning from the catalogue as a line of help under its field.
* The link opens the page in a new tab: its title and sections, and every card of its ``cards``
  blocks drawn by ``cards.js`` as the table draws its cards (the same element: ``span.card`` with
  its rank and suit, ``data-card``, the colour and suit classes; a face-down card as the table's
  back), no code left undrawn, and a way back to the lobby. Without scripts the codes are text.
* The table page links its game's page too, and it opens the same way.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from markdown_it import MarkdownIt

from cardhall.engine import plugins
from tests.browser.conftest import screenshot_path
from tests.browser.pages import create_table, fresh_context, new_tab
from tests.games import GAMES, quick
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

#: the element a card is drawn as (its tag, its classes but colour, suit and the table's passing
#: animation classes, its children's classes)
SHAPE = """el => ({tag: el.tagName, role: el.getAttribute("role"),
  classes: [...el.classList].filter(c => !["red", "black"].includes(c) && !c.startsWith("suit-")
                                         && !c.startsWith("motion")).sort(),
  children: [...el.children].map(c => c.className), card: el.dataset.card})"""


def _cards_rows(game: str) -> list[list[str]]:
    """The card codes of each row of each ``cards`` block of ``game``'s rules file."""
    rules = plugins.spec(game).rules
    assert rules is not None
    rows = []
    for token in MarkdownIt("commonmark").parse(rules.read_text(encoding="utf-8")):
        if token.type == "fence" and token.info.strip() == "cards":
            rows += [line.partition(":")[2].split() for line in token.content.splitlines() if line.strip()]
    return rows


async def _opened(page: Any, link: Any) -> Any:
    """Click ``link`` (a locator) and return the page it opens in a new tab, loaded."""
    assert await link.get_attribute("target") == "_blank"
    async with page.context.expect_page() as opened:
        await link.click()
    popup = await opened.value
    await popup.wait_for_load_state()
    return popup


async def _check_rules_page(popup: Any, game: str) -> list[dict[str, Any]]:
    """The rules page of ``game`` as a person sees it: title, sections, every card drawn; returns
    the shape (:data:`SHAPE`) of each card drawn."""
    rules = plugins.spec(game).rules
    assert rules is not None
    title = rules.read_text(encoding="utf-8").splitlines()[0].removeprefix("# ")
    assert popup.url.endswith(f"/rules/{game}")
    await popup.wait_for_selector("body[data-cards-drawn=true]")
    assert await popup.locator(".rules-page h1").inner_text() == title
    assert await popup.title() == f"{title} · cardhall"
    sections = [line.removeprefix("## ") for line in rules.read_text(encoding="utf-8").splitlines() if line.startswith("## ")]
    assert await popup.locator(".rules-page h2").all_inner_texts() == sections
    rows = _cards_rows(game)
    assert await popup.locator(".rules-cards .cards-row").count() == len(rows)
    assert await popup.locator("code.cards-codes").count() == 0, "a row left as codes"
    drawn = await popup.locator(".rules-cards .card").evaluate_all(f"els => els.map({SHAPE})")
    codes = [c for row in rows for c in row]
    assert len(drawn) == len(codes)
    for shape, code in zip(drawn, codes):
        if code == "??":
            assert shape["classes"] == ["back", "card"] and shape["card"] is None, shape
        else:
            assert shape["card"] == code, (shape, code)
    assert await popup.locator("a#back-to-lobby").get_attribute("href") == "/#/"
    return [s for s, c in zip(drawn, codes) if c != "??"]


async def test_the_lobby_links_each_games_rules_and_shows_each_options_meaning(server: LiveServer, browser: Any) -> None:
    game = GAMES[1]
    async with httpx.AsyncClient(base_url=server.http) as http:
        catalogue = (await http.get("/api/games")).json()
    bob = await server.client("bob", codec="json")
    try:
        listed = await bob.create_table(game, 2, quick(game), 0)
        tab = await new_tab(browser, server.http)
        page = tab.page
        await page.wait_for_selector(f"#game option[value={game}]", state="attached")
        await page.select_option("#game", game)
        entry = next(g for g in catalogue["games"] if g["name"] == game)
        for option in entry["options"]:  # the meaning under each field, the field described by it
            help_line = page.locator(f"#g-{option['name']}-help")
            assert option["meaning"] in await help_line.text_content(), option["name"]
            assert await page.locator(f"#g-{option['name']}").get_attribute("aria-describedby") == f"g-{option['name']}-help"
        for g in catalogue["games"]:  # the form's link follows the game chosen
            await page.select_option("#game", g["name"])
            link = page.locator("#rules-create")
            assert await link.get_attribute("href") == g["rules"] == f"/rules/{g['name']}"
            assert await link.inner_text() == f"How to play {g['title']}"
        await page.select_option("#game", game)
        popup = await _opened(page, page.locator("#rules-create"))
        await _check_rules_page(popup, game)
        await popup.screenshot(path=screenshot_path(f"rules-{game}"), full_page=True)
        await popup.close()

        row_link = page.locator(f".table-row[data-table='{listed}'] a.how-to-play")
        assert await row_link.get_attribute("href") == f"/rules/{game}"
        popup = await _opened(page, row_link)
        await _check_rules_page(popup, game)
        await popup.locator("a#back-to-lobby").click()  # back to the lobby, in that tab
        await popup.wait_for_selector("#create-button")
        await popup.close()
        assert not tab.errors, tab.errors
        await tab.close()
    finally:
        await bob.close()


async def test_the_tables_link_opens_the_rules_with_the_tables_own_card_faces(server: LiveServer, browser: Any) -> None:
    game = GAMES[0]
    tab = await new_tab(browser, server.http)
    page = tab.page
    await create_table(tab, game, 2, 1, quick(game), {"bot_think": 5})
    table_card = page.locator(".table-page .card[data-card]").first
    await table_card.wait_for()
    table_shape = await table_card.evaluate(SHAPE)
    popup = await _opened(page, page.locator("#rules-table"))
    drawn = await _check_rules_page(popup, game)
    # a card of the page is the element the table draws a card as
    assert drawn and all({**s, "card": None} == {**table_shape, "card": None} for s in drawn), (drawn[0], table_shape)
    assert all(re.fullmatch(r"[2-9TJQKA][cdhs]|X[rb]", s["card"]) for s in drawn)
    await popup.close()
    assert not tab.errors, tab.errors
    await tab.close()


async def test_without_scripts_the_page_shows_the_codes(server: LiveServer, browser: Any) -> None:
    game = GAMES[-1]
    context = await fresh_context(browser, java_script_enabled=False)
    try:
        page = await context.new_page()
        await page.goto(f"{server.http}/rules/{game}")
        rows = _cards_rows(game)
        codes = await page.locator("code.cards-codes").all_inner_texts()
        assert codes == [" ".join(row) for row in rows]
        assert await page.locator(".card").count() == 0
    finally:
        await context.close()
