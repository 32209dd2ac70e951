"""Nothing covers the table's text: the bottom seat and its bet stay off the centre line
("Hand 1 · preflop · Blinds 10/20"), and the result banner's Rematch button sits below the verdict,
on a wide and on a narrow screen; at six seats the side seats do not run into each other while one
of them acts with its cards (the tallest a seat gets)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import screenshot_path
from tests.browser.pages import create_table, new_tab, play_to_end
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


async def overlap(page: Any, a: str, b: str) -> bool:
    boxes = [await page.locator(s).bounding_box() for s in (a, b)]
    assert all(boxes), (a, b, boxes)
    x, y = boxes
    return x["x"] < y["x"] + y["width"] and y["x"] < x["x"] + x["width"] and x["y"] < y["y"] + y["height"] and y["y"] < x["y"] + x["height"]


@pytest.mark.parametrize("width", [1360, 400])
async def test_nothing_covers_the_centre_or_the_verdict(server: LiveServer, browser: Any, width: int) -> None:
    tab = await new_tab(browser, server.http, width=width)
    page = tab.page
    # the bot thinks a little: acting at once as the small blind it could fold the first hand before the
    # page drew it, and the solo table would then wait for a continue with no blind on the table
    await create_table(tab, "no_limit_holdem", 2, 1, {"starting_stacks": 60}, {"bot_think": 0.5, "pause": 0})
    # our blind is out (heads-up: both seats post one) and the table waits for us: nothing moves
    # while the boxes are measured (on the bot's turn the hand could end and take the bet away)
    await page.wait_for_function("document.querySelector('.seat.me .bet')"
                                 " && document.querySelector('.action-panel [data-action]:not([data-action=continue])')")
    await page.screenshot(path=screenshot_path(f"layout-{width}-centre"))
    assert not await overlap(page, ".seat.me .bet", ".center .meta")
    assert not await overlap(page, ".seat.me", ".center .meta")
    await play_to_end(tab, "no_limit_holdem")
    await page.wait_for_selector(".result-banner .verdict:not([data-status=checking])")
    await page.screenshot(path=screenshot_path(f"layout-{width}-result"))
    if await page.locator(".result-banner [data-control=rematch-banner]").count():
        assert not await overlap(page, ".result-banner .verdict", ".result-banner [data-control=rematch-banner]")
    assert not tab.errors, tab.errors
    await tab.close()


#: at the moment a right-hand seat (5 or 6, seen from seat 1) is to act with its cards: the pairs of
#: seat boxes closer than 8 px (null before that moment)
SIDE_SEAT_ACTS = """() => {
  const acting = document.querySelector(".seat.to-act[data-seat='5'], .seat.to-act[data-seat='6']");
  if (!acting || !acting.querySelector('.seat-cards .card')) return null;
  const boxes = [...document.querySelectorAll('.felt > .seat')].map((e) => [e.dataset.seat, e.getBoundingClientRect()]);
  const out = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, b] = [boxes[i][1], boxes[j][1]];
    const m = 8;
    if (a.left < b.right + m && b.left < a.right + m && a.top < b.bottom + m && b.top < a.bottom + m) out.push(boxes[i][0] + '/' + boxes[j][0]);
  }
  return out;
}"""


async def test_six_seats_do_not_overlap_while_a_side_seat_acts(server: LiveServer, browser: Any) -> None:
    tab = await new_tab(browser, server.http)
    page = tab.page
    await create_table(tab, "no_limit_holdem", 6, 5, {}, {"bot_think": 0.4, "pause": 0})
    mine = ".action-panel [data-action=continue], .action-panel [data-action=check], .action-panel [data-action=call]"
    for _ in range(40):
        handle = await page.wait_for_function(f"() => ({SIDE_SEAT_ACTS})() || (document.querySelector({mine!r}) && 'mine')",
                                              timeout=60_000)
        found = await handle.json_value()
        if found != "mine":
            break
        try:  # our own decision or a Continue: check or call, so the hand goes on
            await page.locator(mine).first.click(timeout=1000)
        except Exception:
            pass
    else:
        pytest.fail("seats 5 and 6 never acted")
    await page.screenshot(path=screenshot_path("layout-six-seats"))
    assert found == [], found
    assert not tab.errors, tab.errors
    await tab.close()
