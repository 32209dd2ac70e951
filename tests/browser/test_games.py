"""Each game in Chromium: a table with bots created from the lobby, a whole match (its quick options)
played by clicking, a second browser context watching from the lobby, and at the end the G-2 check
of every card the pages saw.

The spectator's frames and page must never show a card it may not see (hole cards, hands), and the
player's frames carry only its own private cards.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.browser.conftest import screenshot_path
from tests.browser.pages import Frame, Tab, create_table, go_from_lobby, new_tab, play_to_end
from tests.games import GAMES, everyday, quick
from tests.games import seats as seats_for
from tests.server.conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

FAST = {"bot_think": 0, "pause": 0}

#: private fields per event type (Event.private in the engines): never in a spectator's frame
PRIVATE = {"hole_cards": "cards", "deal": "cards", "snowfall": "card", "refill": "cards"}
#: fields of the engines' view() that only a seat gets
PRIVATE_VIEW = ("hole", "my_cards", "hand")


def check_spectator_frames(frames: list[Frame], table: str) -> int:
    """No private field, no legal actions, no hidden hand in any frame a spectator received."""
    checked = 0
    for f in frames:
        if f.get("table") != table:
            continue
        checked += 1
        assert "legal" not in f, f
        if f["type"] == "event":
            field = PRIVATE.get(f["event"]["type"])
            assert field is None or field not in f["event"], f
        elif f["type"] == "snapshot" and f.get("state"):
            state = f["state"]
            assert f["you"] is None
            for name in PRIVATE_VIEW:
                if name == "hand" and state.get("game") != "avalanche":
                    continue  # the Hold'em hand number
                assert state.get(name) in (None, []), (name, state)
            if state.get("game") == "loco_poker":
                assert state.get("hole_cards") is None
    return checked


def check_player_frames(frames: list[Frame], table: str, seat: int) -> None:
    """A seat's private fields only ever hold its own cards: the ones its page drew as its own."""
    for f in frames:
        if f.get("table") != table:
            continue
        if f["type"] == "event" and f["event"]["type"] == "hole_cards" and "cards" in f["event"]:
            ev = f["event"]
            dealt = ev.get("seats") or ev.get("players") or list(ev.get("counts", {}))
            assert str(seat) in map(str, dealt)
            assert len(ev["cards"]) == 2


async def seat_cards(tab: Tab, seat: int) -> list[str]:
    return await tab.page.locator(f".seat[data-seat='{seat}'] .card[data-card]").evaluate_all(
        "els => els.map(e => e.dataset.card)")


@pytest.mark.parametrize("game", everyday(GAMES, set(GAMES) - {"fixed_limit_holdem", "avalanche"}))
async def test_play_and_watch_a_match(server: LiveServer, browser: Any, game: str) -> None:
    seats = seats_for(game, 3)
    player = await new_tab(browser, server.http)
    await player.page.screenshot(path=screenshot_path("lobby"))
    table = await create_table(player, game, seats, seats - 1, quick(game), FAST)

    # a second person opens the lobby and watches this table
    watcher = await new_tab(browser, server.http)
    await go_from_lobby(watcher, table, "watch")
    await watcher.page.wait_for_selector(".table-page[data-you='']")

    spectator_saw_cards: list[list[str]] = []

    showdown: list[bool] = []

    async def look(clicks: int, kind: str) -> None:
        # at the player's decisions: the player sees its hand, the spectator no hidden card
        if kind == "continue":
            # the table waits between steps: keep one picture of a showdown (a full board, hands shown)
            if not showdown and game != "avalanche" and await player.page.locator(".board .card[data-card]").count() == 5 \
                    and await player.page.locator(".seat:not(.me) .card[data-card]").count():
                showdown.append(True)
                await player.page.screenshot(path=screenshot_path(f"{game}-showdown"))
            return
        if not spectator_saw_cards:
            await player.page.screenshot(path=screenshot_path(f"{game}-player"))
            await watcher.page.screenshot(path=screenshot_path(f"{game}-spectator"))
        if game == "avalanche" and not showdown and await player.page.locator(".avalanche-plays .play").count() >= 3:
            showdown.append(True)  # an avalanche on the table
            await player.page.screenshot(path=screenshot_path(f"{game}-avalanche"))
        mine = await seat_cards(player, 1) if game != "avalanche" else await player.page.locator(".my-hand .card").count()
        assert mine, "the player's own cards are drawn face up"
        for seat in range(1, seats + 1):
            spectator_saw_cards.append(await seat_cards(watcher, seat))

    clicks = await play_to_end(player, game, on_decision=look)
    assert clicks >= 1
    await player.page.wait_for_selector(".fair .verdict[data-status=verified]")
    await watcher.page.wait_for_selector(".result-banner")
    await watcher.page.wait_for_selector(".fair .verdict:not([data-status=checking])")
    await player.page.screenshot(path=screenshot_path(f"{game}-result"))

    # the spectator: no private frame field, and every face-up card at a seat was shown by a show event
    assert check_spectator_frames(watcher.frames, table) > 3
    shown = {c for f in watcher.events(table) for c in _shown_cards(f["event"])}
    assert {c for cards in spectator_saw_cards for c in cards} <= shown
    check_player_frames(player.frames, table, 1)
    verdict = watcher.page.locator(".fair .verdict")
    assert await verdict.get_attribute("data-status") in ("verified", "partial"), await verdict.inner_text()  # it came in after the start
    # the player's check covered the cards it was dealt
    checked = int(await player.page.locator(".fair .verdict").get_attribute("data-checked"))
    assert checked >= 2
    # the rematch button is offered to the seated player
    assert await player.page.locator("[data-control=rematch]").count() == 1
    assert not player.errors and not watcher.errors, (player.errors, watcher.errors)
    for tab in (player, watcher):  # every frame the browsers received and sent matches protocol/schemas
        checked, problems = tab.schema_failures()
        assert not problems, problems[:5]
        assert sum(n for kind, n in checked.items() if kind.startswith(f"event:{game}:")) > 5, checked
        assert checked["client:join"] >= 1 and checked[f"snapshot:{game}"] >= 1, checked
    await watcher.close()
    await player.close()


def _shown_cards(event: Frame) -> list[str]:
    if event["type"] == "show":
        return list(event["cards"])
    if event["type"] == "showdown":
        return [c for h in event["hands"] for c in h["cards"]]
    return []


async def test_two_people_and_a_bot(server: LiveServer, browser: Any) -> None:
    """The owner waits at a table with a bot; a second person takes the free seat from the lobby
    (Play), the match starts when every seat is taken (G-9), and both play it to the end."""
    owner = await new_tab(browser, server.http)
    table = await create_table(owner, "loco_poker", 3, 1, {"points_to_win": 1}, FAST)
    await owner.page.wait_for_selector(".table-page[data-status=waiting]")
    assert "2 of 3 seated" in await owner.page.locator(".action-panel").inner_text()

    guest = await new_tab(browser, server.http)
    await go_from_lobby(guest, table, "play")
    await guest.page.wait_for_selector(".table-page[data-you='2']")
    await owner.page.wait_for_selector(".table-page[data-status=running]")

    await asyncio.gather(play_to_end(owner, "loco_poker"), play_to_end(guest, "loco_poker"))
    for tab in (owner, guest):
        await tab.page.wait_for_selector(".fair .verdict[data-status=verified]")
        checked, problems = tab.schema_failures()
        assert not problems, problems[:5]
        assert not tab.errors, tab.errors
    # two people: the table paces itself (no Continue asked of anyone)
    assert not [m for tab in (owner, guest) for m in tab.sent
                if m.get("type") == "act" and m["action"]["type"] == "continue"]
    await guest.close()
    await owner.close()


async def test_rematch_is_verified_too(server: LiveServer, browser: Any) -> None:
    """Rematch (G-7): the next match starts with the commitment the page saw when the last one
    ended, its button comes from the table (no draw), and its deal is verified as well."""
    tab = await new_tab(browser, server.http)
    table = await create_table(tab, "no_limit_holdem", 2, 1, {"starting_stacks": 40}, FAST)
    await play_to_end(tab, "no_limit_holdem")
    await tab.page.wait_for_selector(".fair .verdict[data-status=verified]")
    ended = [f["event"] for f in tab.events(table) if f["event"]["type"] == "match_ended"]
    await tab.page.click("[data-control=rematch]")
    await tab.page.wait_for_selector(".table-page[data-status=running]")
    await play_to_end(tab, "no_limit_holdem")
    verdict = tab.page.locator(".fair .verdict[data-status=verified]")
    await verdict.wait_for()
    assert "joined after" not in await verdict.inner_text()
    started = [f["event"] for f in tab.events(table) if f["event"]["type"] == "match_started"]
    assert started[-1]["match"] == 2 and started[-1]["commitment"] == ended[0]["next_commitment"]
    assert "match 2" in await tab.page.locator(".pills").inner_text()
    assert not tab.errors, tab.errors
    await tab.close()
