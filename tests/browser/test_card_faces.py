"""The joker's face is whole at every card size the client draws (cards.js, style.css).

A joker (``Xr``, ``Xb``) is drawn as a star over the word JOKER. In Chromium, with the page's own
stylesheet, a joker is put where each size of card is drawn, in the same elements and classes as
the client's modules make them: the felt's seat and board (wide and narrow windows), the own hand
under the table, the replayer's seats and board, an avalanche's plays, the generic renderer's lists,
a winning card; and the jokers of the real "How to play" pages. At each, the star and the whole word
lie inside the card's border (measured on the rendered text, not only on the label's box), and the
label's content does not overflow it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import screenshot_path
from tests.browser.pages import fresh_context
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

#: where cards are drawn: a name, and the HTML around the card ({card} is where it goes; a `small`
#: card is drawn with cardEl's "small" size class, as the replayer's seats draw theirs)
PLACES: dict[str, str] = {
    "felt seat": '<div class="felt"><div class="seat"><span class="cards hole">{card}</span></div></div>',
    "felt board": '<div class="felt"><div class="center"><div class="center-info"><div class="board">{card}</div></div></div></div>',
    "winning card": '<div class="felt"><div class="center"><div class="board">{card win}</div></div></div>',
    "my hand": '<div class="my-hand"><div class="cards hand">{card}</div></div>',
    "replayer seat": '<div class="replay-felt"><ul class="replay-seats"><li class="replay-seat"><span class="cards">{card small}</span></li></ul></div>',
    "replayer board": '<div class="replay-felt"><div class="board">{card}</div></div>',
    "replayer live seat": '<div class="replay-felt live"><ul class="replay-seats"><li class="replay-seat"><span class="cards hole">{card}</span></li></ul></div>',
    "avalanche plays": '<div class="center-info avalanche"><ol class="avalanche-plays"><li class="play"><span class="cards small">{card}</span></li></ol></div>',
    "generic list": '<dl class="kv-list"><dt>card</dt><dd>{card}</dd></dl>',
}

#: the measures of one joker element: its label's text, overflow, and whether the rendered star and
#: word lie within the card's border box less the border
MEASURE = """card => {
  const label = card.querySelector(".suit");
  const star = card.querySelector(".rank");
  const box = card.getBoundingClientRect();
  const inner = { left: box.left + card.clientLeft, right: box.left + card.clientLeft + card.clientWidth,
                  top: box.top + card.clientTop, bottom: box.top + card.clientTop + card.clientHeight };
  const textRect = (el) => { const r = document.createRange(); r.selectNodeContents(el); return r.getBoundingClientRect(); };
  const inside = (r) => r.width > 0 && r.left >= inner.left - 0.5 && r.right <= inner.right + 0.5
    && r.top >= inner.top - 0.5 && r.bottom <= inner.bottom + 0.5;
  const word = textRect(label);
  return { card: card.dataset.card, width: box.width, text: label.textContent, star: star.textContent,
           scrollWidth: label.scrollWidth, clientWidth: label.clientWidth,
           wordInside: inside(word), starInside: inside(textRect(star)), wordWidth: word.width, innerWidth: inner.right - inner.left,
           fontSize: parseFloat(getComputedStyle(label).fontSize) };
}"""


async def jokers_in_places(page: Any) -> list[dict[str, Any]]:
    """Draw a red and a black joker in each of :data:`PLACES` on ``page``; their measures, by place."""
    return await page.evaluate("""async ([places, measure]) => {
      const { cardEl } = await import("/web/js/cards.js");
      const measureCard = eval(measure);
      const root = document.createElement("div");
      root.id = "joker-sizes";
      root.style.cssText = "position:absolute;top:0;left:0;width:100%;z-index:100;background:#222;padding:8px";
      document.body.append(root);
      const out = [];
      for (const [name, html] of Object.entries(places)) {
        for (const code of ["Xr", "Xb"]) {
          const holder = document.createElement("div");
          holder.style.cssText = "position:relative;margin:4px 0;width:22rem";
          const m = html.match(/\\{card ?([a-z]*)\\}/);
          holder.innerHTML = html.replace(m[0], '<span id="slot"></span>');
          const slot = holder.querySelector("#slot");
          const card = m[1] === "small" ? cardEl(code, "small") : cardEl(code);
          if (m[1] === "win") card.classList.add("win");
          slot.replaceWith(card);
          root.append(holder);
          out.push({ place: name, ...measureCard(card) });
        }
      }
      return out;
    }""", [PLACES, MEASURE])


def assert_whole(m: dict[str, Any]) -> None:
    assert m["text"] == "JOKER" and m["star"] == "★", m
    assert m["scrollWidth"] <= m["clientWidth"], m  # the label's content overflows nothing
    assert m["wordInside"], m  # the whole word is drawn within the card
    assert m["starInside"], m
    assert m["fontSize"] >= 5, m  # a word, not a line of dots


@pytest.mark.parametrize("width", [1360, 600])
async def test_joker_whole_at_every_card_size(server: LiveServer, browser: Any, width: int) -> None:
    context = await fresh_context(browser, viewport={"width": width, "height": 900})
    page = await context.new_page()
    await page.goto(server.http + "/")
    measures = await jokers_in_places(page)
    assert {m["place"] for m in measures} == set(PLACES) and len(measures) == 2 * len(PLACES)
    for m in measures:
        assert_whole(m)
    # the sizes differ: the small replayer card and the large board card both checked
    widths = sorted({round(m["width"]) for m in measures})
    assert len(widths) >= 3, widths
    await page.locator("#joker-sizes").screenshot(path=screenshot_path(f"joker-sizes-{width}"))
    await context.close()


@pytest.mark.parametrize("game", ["alamo", "avalanche"])
async def test_joker_whole_on_rules_pages(server: LiveServer, browser: Any, game: str) -> None:
    context = await fresh_context(browser, viewport={"width": 1000, "height": 900})
    page = await context.new_page()
    await page.goto(f"{server.http}/rules/{game}")
    await page.wait_for_selector("body[data-cards-drawn=true]")
    jokers = page.locator(".rules-cards .card.joker")
    assert await jokers.count() >= 1
    for m in await jokers.evaluate_all(f"els => els.map({MEASURE})"):
        assert_whole(m)
    await context.close()
