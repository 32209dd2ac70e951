"""The table page's layout over a matrix: every viewport size of :data:`SIZES`, every game of the
live server's catalogue (``GET /api/games``), every seat count it allows, every recorded moment
(``tests/browser/layout/snapshots``, made by ``python -m tests.browser.layout.record``), drawn by
the real client from the recorded model with no live match (``tests/browser/layout/harness.py``).

Each case fails on what ``tests/browser/layout/checks.js`` finds: things of different seats, the
centre, the action panel or the own hand that overlap (the result banner may cover the felt, not the
panel); a seat, bet or the centre's content outside the viewport, or the page scrolling sideways;
at a turn, an action control out of sight without scrolling; at phone widths (up to 412 px) an
action control smaller than 44 px; a clock or badge text under WCAG AA contrast (4.5:1). Each
failing case keeps a screenshot (artifacts/screenshots/layout-matrix-*), and the failure lists every
problem with its size, game, seats and moment.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.browser.conftest import screenshot_path
from tests.browser.layout.harness import Harness, Snapshot, load_snapshots
from tests.games import GAMES
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

#: (width, height) in CSS px: phones, a tablet, laptops and desktops, then the three phones held sideways
SIZES = [(360, 640), (390, 844), (768, 1024), (1280, 800), (1366, 768), (1400, 900), (1920, 1080), (2560, 1440),
         (640, 360), (844, 390), (915, 412)]
#: the sizes the everyday suite checks (the smallest phone, a laptop, a phone held sideways); the rest
#: run with ``--runslow``, to keep the suite within its time
EVERYDAY = {(360, 640), (1366, 768), (844, 390)}
SNAPSHOTS = load_snapshots()
#: every seat count of a game has these moments recorded; the largest count has :data:`LARGEST` too
EVERY_COUNT = ("turn", "showdown")
LARGEST = ("waiting", "ended")


def seat_counts(server: LiveServer) -> dict[str, range]:
    """Game -> the seat counts its entry of the server's ``GET /api/games`` allows, for the built-in
    games (a test-only game registered elsewhere has no recording)."""
    with urllib.request.urlopen(server.http + "/api/games") as reply:
        games = json.load(reply)["games"]
    return {g["name"]: range(g["seats"]["min"], g["seats"]["max"] + 1) for g in games if g["name"] in GAMES}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def catalogue(server: LiveServer) -> dict[str, range]:
    return await asyncio.to_thread(seat_counts, server)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(server: LiveServer, browser: Any) -> AsyncIterator[Harness]:
    h = Harness(SNAPSHOTS)
    await h.open(browser, server.http)
    yield h
    await h.close()


def cases(catalogue: dict[str, range]) -> list[Snapshot]:
    """The snapshots of the catalogue's games and seat counts."""
    return [s for s in SNAPSHOTS if s.game in catalogue and s.seats in catalogue[s.game]]


async def test_every_game_and_seat_count_is_recorded(catalogue: dict[str, range]) -> None:
    held = {(s.game, s.seats, s.moment) for s in SNAPSHOTS}
    missing = [f"{game}-{n}-{moment}" for game, counts in catalogue.items() for n in counts
               for moment in (*EVERY_COUNT, *(LARGEST if n == counts[-1] else ())) if (game, n, moment) not in held]
    assert not missing, f"no recording (run python -m tests.browser.layout.record): {', '.join(missing)}"


@pytest.mark.parametrize("size", [pytest.param(s, id=f"{s[0]}x{s[1]}", marks=() if s in EVERYDAY else pytest.mark.slow)
                                  for s in SIZES])
async def test_layout_matrix(harness: Harness, catalogue: dict[str, range], size: tuple[int, int]) -> None:
    width, height = size
    await harness.size(width, height)
    failures: list[str] = []
    clocks: dict[str, int] = {}
    for snap in cases(catalogue):
        found = await harness.show_and_check(snap)
        clocks[snap.game] = clocks.get(snap.game, 0) + found["clocks"]
        if found["problems"]:
            await harness.screenshot(screenshot_path(f"layout-matrix-{width}x{height}-{snap.name}"))
            failures += [f"{width}x{height} {snap.name}: {p}" for p in found["problems"]]
    failures += [f"{width}x{height} {game}: no snapshot draws a clock (its contrast is unchecked)"
                 for game in catalogue if not clocks.get(game)]
    assert not harness.errors, harness.errors
    assert not failures, f"{len(failures)} layout problems:\n" + "\n".join(failures)


#: break the drawing on purpose: seat 2 moved onto the first seat, the first action button out of the
#: viewport, a badge drawn grey on grey, the clock's text as dark as the table
PLANT_JS = """() => {
  const seats = [...document.querySelectorAll('.felt > .seat')];
  const [a, b] = seats;
  const r = a.getBoundingClientRect();
  Object.assign(b.style, { position: 'fixed', left: `${r.left}px`, top: `${r.top}px`, transform: 'none', zoom: '1' });
  b.dataset.seat = 'planted';
  const button = document.querySelector('.action-panel button');
  Object.assign(button.style, { position: 'fixed', left: `${innerWidth + 50}px`, top: '10px' });
  const badge = document.querySelector('.felt .badge');
  Object.assign(badge.style, { color: '#777', background: '#666' });
  for (const text of document.querySelectorAll('.seat .clock-text')) text.style.color = '#0a1310';
}"""


async def test_the_checks_find_planted_faults(harness: Harness, catalogue: dict[str, range]) -> None:
    """The checks are not blind: an overlap, a button out of sight, a badge and a clock without
    contrast, planted into a drawn turn, are each reported (and a clean drawing of the same turn at a wide size is not
    reported for them)."""
    snap = next((s for s in cases(catalogue) if s.moment == "turn" and s.seats >= 3), None)
    assert snap is not None, "no recorded turn with three seats or more"
    await harness.size(1920, 1080)
    await harness.show(snap)
    before = (await harness.check("turn"))["problems"]
    assert not any("planted" in p for p in before), before
    await harness.page.evaluate(PLANT_JS)
    after = (await harness.check("turn"))["problems"]
    assert any(p.startswith("overlap: ") and "seat planted" in p for p in after), after
    assert any(p.startswith("outside the viewport: panel button") and "(right)" in p for p in after), after
    assert any(p.startswith("contrast ") and "badge" in p and "#777777 on #666666" in p for p in after), after
    assert any(p.startswith("contrast ") and "clock text on its track (#0a1310 on" in p for p in after), after
    await harness.size(360, 640)
    await harness.show(snap)
    small = (await harness.check("turn"))["problems"]
    await harness.page.evaluate("() => { const b = document.querySelector('.action-panel button');"
                                " Object.assign(b.style, {minHeight: '0', height: '20px', padding: '0'}); }")
    tiny = (await harness.check("turn"))["problems"]
    assert [p for p in tiny if p not in small and p.startswith("tap target under 44px")], (small, tiny)
