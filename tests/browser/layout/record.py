"""Record the table snapshots the layout matrix draws (``tests/browser/test_layout_matrix.py``).

Run by hand, from the repository's root, when the client's drawing of a game changes what a table
holds (the snapshots are the page's own saved model, so a change of the model's shape needs new ones)::

    .venv/bin/python -m tests.browser.layout.record [--games alamo,avalanche] [--seats 2,5,9]
                                                    [--budget 60] [--out tests/browser/layout/snapshots]

It starts a real cardhall server (in memory, on 127.0.0.1) and Chromium (``/usr/bin/chromium``), and
for every built-in game of ``GET /api/games`` (test-only games are skipped) and every seat count its
entry allows (``seats.min`` to ``seats.max``; ``--seats`` keeps only the counts named) plays a live
match in the browser as seat 1 with fast bots in the other seats (the game's quick options). While
it plays, ``recorder.js`` watches the page's drawing and keeps the table's saved model
(localStorage ``cardhall.table.<id>``, table.js) at the best moment of each kind:

* ``turn``: this player's decision with the action panel showing its legal actions (an amount field
  and presets when the game has them), the seats as tall as seen (cards, bets, badges) and the
  action clock running;
* ``showdown``: a hand's end with the most cards shown and amounts won in the centre (Avalanche:
  the most plays on the table);
* ``waiting``: another seat to act, the action panel waiting for it (with the pre-action boxes in
  the betting games), for the largest seat count of each game only;
* ``ended``: the match's end with its result banner and the fair-deal verdict; for the largest seat
  count of each game only (once the other moments are kept, it plays all-in to the end).

Each moment goes to ``<out>/<game>-<seats>-<moment>.json``: ``{"game", "seats", "moment", "table",
"welcome": {"player", "name", "protocol", "minor"}, "stored"}`` where ``stored`` is the localStorage
value as the page wrote it, trimmed of what the drawing does not use (the recorded events of the
match, kept for the G-2 check and the live replayer only, and the log beyond its last
:data:`LOG_KEPT` lines, more than its box shows). Exit status 1 when a game or seat count got no
moment it should have in its time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.browser.pages import POLICY, Tab, create_table, new_tab
from tests.games import GAMES, quick
from tests.server.conftest import TEST_SETTINGS, running_server

HERE = Path(__file__).resolve().parent
SNAPSHOTS = HERE / "snapshots"
RECORDER_JS = (HERE / "recorder.js").read_text()
#: log lines kept in a snapshot: the log's box shows about fifteen, and scrolls to the last
LOG_KEPT = 40
#: table options of the recorded matches: bots act at once, no pause between streets and hands (a
#: solo player's table still waits for its Continue after each hand), the default action clock
FAST = {"bot_think": 0, "pause": 0}
#: while looking for the moments: keep players in the hand (more seats with cards and bets, more
#: cards shown at the showdown); a game's own kinds last
EXPLORE: tuple[str, ...] = ("call", "check", "play", "bet", "raise", "all_in", "snowfall")
#: own decisions seen before the search for the tallest ``turn`` may stop
TURNS_WANTED = 30


def catalogue(base: str) -> list[dict[str, Any]]:
    """The entries of ``GET /api/games`` at ``base`` that are built-in games (:data:`tests.games.GAMES`)."""
    with urllib.request.urlopen(base + "/api/games") as reply:
        games = json.load(reply)["games"]
    return [g for g in games if g["name"] in GAMES]


def trimmed(stored: str) -> dict[str, Any]:
    """The localStorage value ``stored`` (table.js ``_save``) without what the drawing leaves unused:
    the match record's events and snapshot (its presence and commitments stay: the history and
    fairness panels read them), the log beyond :data:`LOG_KEPT` lines."""
    value = json.loads(stored)
    model = value["model"]
    if model.get("record"):
        model["record"] = {**model["record"], "events": [], "snapshot": None}
    model["log"] = model["log"][-LOG_KEPT:]
    return dict(value)


async def click_one(tab: Tab, kinds: tuple[str, ...]) -> bool:
    """Click Continue, else the first action button of ``kinds`` the panel shows; whether one was clicked."""
    panel = tab.page.locator(".action-panel")
    for kind in ("continue", *kinds):
        button = panel.locator(f"button[data-action='{kind}']")
        if await button.count():
            try:
                await button.first.click(timeout=2000)
            except Exception:  # the turn moved on while we looked
                return False
            return True
    return False


async def record_one(browser: Any, base: str, game: str, seats: int, end: bool, budget: float) -> dict[str, str]:
    """Play ``game`` with ``seats`` seats (one human, bots) until the moments are kept or ``budget``
    seconds pass (and, with ``end``, on to the match's end); returns moment -> the saved value."""
    tab = await new_tab(browser, base)
    page = tab.page
    try:
        table = await create_table(tab, game, seats, seats - 1, quick(game), FAST)
        welcome = next(f for f in tab.frames if f.get("type") == "welcome")
        await page.evaluate(RECORDER_JS, game)
        start = time.monotonic()
        while True:
            assert not tab.errors, tab.errors
            await page.wait_for_selector(".result-banner, .action-panel [data-action]")
            state = await page.evaluate("() => ({turns: window.__rec.turns, kept: Object.keys(window.__rec.best),"
                                        " banner: !!document.querySelector('.result-banner')})")
            have = {"turn", "showdown"} <= set(state["kept"]) and state["turns"] >= TURNS_WANTED
            late = time.monotonic() - start > budget
            if state["banner"]:
                if end and (have or late):
                    await page.wait_for_function("() => 'ended' in window.__rec.best")
                    break
                if have or late:
                    break
                await page.click("[data-control=rematch-banner]")  # the match ended early: another one
                await page.wait_for_selector(".result-banner", state="detached")
                continue
            if (have or late) and not end:
                break
            if not await click_one(tab, POLICY if (have or late) else EXPLORE):
                await page.wait_for_timeout(20)
        best = await page.evaluate("() => Object.fromEntries(Object.entries(window.__rec.best).map(([k, v]) => [k, v.stored]))")
        who = {k: welcome[k] for k in ("player", "name", "protocol", "minor")}
        return {moment: json.dumps({"game": game, "seats": seats, "moment": moment, "table": table, "welcome": who,
                                    "stored": trimmed(stored)}, separators=(",", ":"))
                for moment, stored in best.items()}
    finally:
        await tab.close()


async def record(games: list[str] | None, counts: list[int] | None, budget: float, out: Path) -> int:
    """Record every game and seat count (see the module's docstring); the exit status."""
    from playwright.async_api import async_playwright

    if CHROMIUM is None:
        print("Chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    missing = []
    began = time.monotonic()
    async with running_server(replace(TEST_SETTINGS, max_tables_per_player=1000)) as srv, async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            entries = await asyncio.to_thread(catalogue, srv.http)
            for entry in entries:
                game = entry["name"]
                if games and game not in games:
                    continue
                top = entry["seats"]["max"]
                for seats in range(entry["seats"]["min"], top + 1):
                    if counts and seats not in counts:
                        continue
                    t0 = time.monotonic()
                    files = await record_one(browser, srv.http, game, seats, seats == top, budget)
                    if seats != top:  # drawn at the largest count only
                        files.pop("ended", None)
                        files.pop("waiting", None)
                    for moment, text in files.items():
                        (out / f"{game}-{seats}-{moment}.json").write_text(text + "\n")
                    lacking = {"turn", "showdown", *(["waiting", "ended"] if seats == top else [])} - set(files)
                    if lacking:
                        missing.append(f"{game}-{seats}: {sorted(lacking)}")
                    print(f"{game} {seats} seats: {sorted(files)} in {time.monotonic() - t0:.1f}s", flush=True)
        finally:
            await browser.close()
    print(f"recorded in {time.monotonic() - began:.0f}s", flush=True)
    for line in missing:
        print("missing", line, file=sys.stderr)
    return 1 if missing else 0


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module's docstring); returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", help="comma-separated game names (default: every built-in game)")
    parser.add_argument("--seats", help="comma-separated seat counts (default: every count a game allows)")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds of play per game and seat count before it settles")
    parser.add_argument("--out", type=Path, default=SNAPSHOTS)
    args = parser.parse_args(argv)
    games = args.games.split(",") if args.games else None
    counts = [int(n) for n in args.seats.split(",")] if args.seats else None
    return asyncio.run(record(games, counts, args.budget, args.out))


if __name__ == "__main__":
    sys.exit(main())
