"""G-4 (amended) through the protocol: a solo player is waited for (``continue``)
only while still in the match. Once busted (Hold'em) or knocked out (Loco
Poker) the bots play on at the table's ``pause`` and the match ends by itself,
with no further ``continue`` turn for that player."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from cardhall.clients.client import Client, ServerError
from tests.server.conftest import LiveServer

Frame = dict[str, Any]

#: tries per game: the player may, by luck, win the match before busting
TRIES = 6


def _choose(legal: list[Frame], prefer: tuple[str, ...]) -> Frame:
    """The first of ``prefer`` that is legal (the quickest way out of the match)."""
    kinds = {a["type"]: a for a in legal}
    for kind in prefer:
        if kind in kinds:
            return {"type": kind}
    return {"type": legal[0]["type"]}


def _is_out(event: Frame, seat: int) -> bool:
    """Does ``event`` say ``seat`` left the match (Hold'em ``bust``, Loco ``knocked_out``)?"""
    return event["type"] in ("bust", "knocked_out") and seat in event["seats"]


async def _play_until_end(client: Client, table: str, seat: int,
                          prefer: tuple[str, ...]) -> tuple[list[Frame], list[Frame]]:
    """Play ``seat`` (``prefer``'s actions, answering ``continue``) until the match ends;
    returns the event frames before and after the player went out."""
    before: list[Frame] = []
    after: list[Frame] = []
    out = False
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    while True:
        frame = await client.next_event(table, timeout=max(0.01, deadline - loop.time()))
        (after if out else before).append(frame)
        event = frame["event"]
        if event["type"] == "match_ended":
            return before, after
        if _is_out(event, seat):
            out = True
        turn = frame.get("turn")
        if out or turn is None or turn["seat"] != seat:
            continue  # after going out, nothing is answered: the table must go on by itself
        action = _choose(frame["legal"], prefer) if "legal" in frame else {"type": "continue"}
        try:
            await client.act(table, action, turn=turn["id"])
        except ServerError as exc:  # a later frame may already have moved on
            if exc.code != "stale_turn":
                raise


async def _solo_bust(live: LiveServer, game: str, options: Frame, prefer: tuple[str, ...]) -> None:
    for attempt in range(TRIES):
        ann = await live.client(f"ann{attempt}")
        table = await ann.create_table(game, seats=4, bots=["random"] * 3,
                                       options={"pause": 0, "bot_think": 0, **options})
        assert (await ann.join(table, seat=1))["you"] == 1
        before, after = await _play_until_end(ann, table, 1, prefer)
        await ann.close()
        assert any(f.get("turn", {}).get("continue") for f in before)  # waited for while in the match
        if not after:
            continue  # the player won, or went out in the match's last hand: try again
        hands_after = [f for f in after if f["event"]["type"] == "hand_start"]
        if not hands_after:
            continue
        assert not [f for f in after if f.get("turn", {}).get("seat") == 1]  # no continue, no turn
        assert after[-1]["event"]["type"] == "match_ended"
        return
    pytest.fail(f"{game}: the solo player never went out before the match's last hand in {TRIES} tries")


async def test_a_busted_solo_player_watches_the_bots_finish_no_limit(live: LiveServer) -> None:
    await _solo_bust(live, "no_limit_holdem", {"starting_stacks": [20, 300, 300, 300]}, ("all_in", "call", "check"))


async def test_a_knocked_out_solo_player_watches_the_bots_finish_loco(live: LiveServer) -> None:
    await _solo_bust(live, "loco_poker", {"points_to_win": 4}, ("call", "check"))  # the caller who loses is out (LO-4)


def test_alamo_says_who_is_out_between_hands() -> None:
    """AL-7 without a live table: between hands a player who cannot ante and pull two cards is out
    already (the next hand eliminates them), so the table does not wait for their ``continue``."""
    from cardhall.engine.base import test_rng
    from cardhall.engine.games.alamo import Alamo

    engine = Alamo.new([1, 2, 3], None, test_rng("al7"))
    engine.start()
    assert all(engine.in_match(s) for s in (1, 2, 3))
    engine.pending_step = "hand"  # as at a hand's end
    engine.piles[1].extend(engine.piles[3][2:])
    del engine.piles[3][2:]  # two cards: less than the ante (1 card with three players) and two hole cards
    assert [engine.in_match(s) for s in (1, 2, 3)] == [True, True, False]
    engine.pending_step = None  # during a hand nobody is out before the elimination check
    assert engine.in_match(3)
