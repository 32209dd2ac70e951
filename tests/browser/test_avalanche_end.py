"""Avalanche's end screen in Chromium (clients/web/js/games/avalanche.js): the winners marked as
winners, never OUT, and every other seat, all on 0 cards at the end, marked OUT (RULES AV-5, AV-6).

* Whole games played by the engine (3 and 4 seats, seeded), their events fed to the page's game
  module as a seat and as a spectator sees them (test_models_js's way): after every event, a seat
  is OUT exactly while it has dropped out (the engine's ``out`` events); at the end each winner's
  status is "wins" (a winner whose hand ran out first among them), every other seat's "out" (the
  last holder, who stored its hand, among them), and a page that joins from the final view says
  the same. The games include both cases the end used to get wrong.
* The replayer's last step of each game's record (GET /api/tables/{id}/hands): the same badges,
  and no card left in any hand (the last holder's stored).
* A bots-only game on a live server, watched: the seats' badges on the felt after the end.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from cardhall.engine.play import seat_bots
from cardhall.engine.registry import engine_class
from cardhall.engine.rng import FairRandom
from tests.browser.pages import new_tab
from tests.conftest import until
from tests.games import quick
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FAST = {"bot_think": 0, "pause": 0}


def play(seats: int, seed: int, viewer: int | None) -> dict[str, Any]:
    """A whole game by the engine's random bots: each step's events as ``viewer`` gets them, with the
    seats out after it; the final view; the result and the last holder."""
    engine = engine_class("avalanche").new(list(range(1, seats + 1)), {}, FairRandom(f"av-end/{seed}".encode()))
    bots = seat_bots("avalanche", seats, FairRandom(f"av-end-bots/{seed}".encode()), "random")
    steps = [{"events": [e.view(viewer) for e in engine.start()], "out": []}]
    last = None
    while not engine.finished:
        seat = engine.to_act
        if seat is None:
            events = engine.advance()
        else:
            events = engine.apply(seat, bots[seat].choose(engine.view(seat), [a.to_data() for a in engine.legal_actions()]))
        views = [e.view(viewer) for e in events]
        last = next((e["last"] for e in views if e["type"] == "game_end"), last)
        steps.append({"events": views, "out": sorted(engine.view(None)["out"])})
        assert len(steps) < 20_000
    return json.loads(json.dumps({"steps": steps, "final": engine.view(viewer), "result": engine.result(), "last": last,
                                  "seats": seats, "record": engine.hand_record()}))



STATUSES = """async ([games, you]) => {
  const g = (await import("/web/js/games/avalanche.js")).default;
  const ctx = { you, names: {} };
  const statuses = (s, n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [i + 1, g.seatView(s, i + 1, ctx).status]));
  return games.map((game) => {
    let s = null;
    const during = [];
    for (const step of game.steps) {
      for (const e of step.events) {
        if (e.type === g.firstEvent) s = g.init(e);
        if (s) g.reduce(s, e, you);
      }
      if (!s.finished) during.push(statuses(s, game.seats));
    }
    const { steps } = g.history.hand(game.record, (seat) => `seat ${seat}`);
    const replayed = Object.fromEntries(steps[steps.length - 1].scene.seats.map((x) => [x.seat, [x.status, x.cards.length]]));
    return { during, end: statuses(s, game.seats), joined: statuses(g.fromView(game.final), game.seats),
             centre: g.center(s, ctx).querySelector(".hand-result").textContent, replayed };
  });
}"""


@pytest.mark.parametrize("viewer", [1, None])
async def test_end_badges_follow_the_result(page: Any, viewer: int | None) -> None:
    games = [play(seats, seed, viewer) for seats in (3, 4) for seed in range(8)]
    got = await page.evaluate(STATUSES, [games, viewer])
    winner_ran_out = last_not_winner = 0
    for game, g in zip(games, got):
        seats = range(1, game["seats"] + 1)
        winners = game["result"]["winners"]
        for step, statuses in zip(game["steps"], g["during"]):
            assert {int(s) for s, v in statuses.items() if v == "out"} == set(step["out"]), (step, statuses)
            assert all(v in ("out", None) for v in statuses.values()), statuses
        assert all(n == 0 for n in game["final"]["hand_sizes"].values())  # at the end nobody holds a card
        want = {str(s): "wins" if s in winners else "out" for s in seats}
        assert g["end"] == want, (game["result"], game["last"], g["end"])
        assert g["joined"] == want, (game["result"], g["joined"])
        # the replayer's last step of the game's record: the same badges, every hand empty
        assert g["replayed"] == {s: [v, 0] for s, v in want.items()}, (game["result"], game["last"], g["replayed"])
        assert ("win " if len(winners) > 1 else "wins ") in g["centre"]
        winner_ran_out += any(w in game["steps"][-1]["out"] for w in winners)
        last_not_winner += game["last"] is not None and game["last"] not in winners
    # both cases of the end are played: a winner that had dropped out, a last holder that lost
    assert winner_ran_out and last_not_winner, (winner_ran_out, last_not_winner)


async def test_watched_bots_game_end_badges(server: LiveServer, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.http) as http:
        r = await http.post("/api/tables", json={"game": "avalanche", "seats": 3, "bots": 3, "options": quick("avalanche", **FAST)})
        assert r.status_code == 201, r.text
        table = r.json()["table"]

        async def finished() -> bool:
            return (await http.get(f"/api/tables/{table}")).json()["status"] == "finished"

        await until(finished, 120, "the end of the avalanche game")
    tab = await new_tab(browser, server.http, f"/#/t/{table}/watch")
    page = tab.page
    await page.wait_for_selector(".result-banner")
    state = next(f["state"] for f in tab.frames if f.get("type") == "snapshot" and f.get("state"))
    winners = state["result"]["winners"]
    assert state["finished"] and all(n == 0 for n in state["hand_sizes"].values())
    for seat in (1, 2, 3):
        box = page.locator(f".seat[data-seat='{seat}']")
        status = await box.locator(".seat-status").text_content()
        want = "wins" if seat in winners else "out"
        assert status == want, (seat, winners, status)
        assert await box.evaluate("(el, cls) => el.classList.contains(cls)", f"st-{want}")
        assert await box.locator("[data-hand]").get_attribute("data-hand") == "0"
    assert not tab.errors, tab.errors
    await tab.close()
