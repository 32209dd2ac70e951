"""SPEC wording a third-party client relies on, checked against a live server.

* A bots-only table starts its first match at ``create_table`` (G-9): a spectator
  joining with ``since: 0`` receives that match from its ``match_started`` (seq 1).
* Map keys are strings in msgpack frames too (every frame of a bots-only match of
  each game, read by a msgpack spectator).
* The SPEC states what the replay tests follow: a lone Alamo winner's winnings are
  shuffled like every winner's, a rematch's button or dealer is never drawn, the
  hand histories carry Hold'em's burns.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import until
from tests.games import GAMES, quick, seats
from tests.server.conftest import running_server

SPEC = (Path(__file__).resolve().parents[2] / "protocol" / "SPEC.md").read_text()


@pytest.fixture
async def live():
    async with running_server() as srv:
        yield srv


def _keys(value, where="frame"):
    """Every map key in ``value``, with where it was found."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, f"{where}.{key}"
            yield from _keys(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _keys(item, f"{where}[{i}]")


@pytest.mark.parametrize("game", GAMES)
async def test_a_bots_only_match_is_seen_from_its_start_with_since_0(live, game):
    owner = await live.client("owner", codec="json")
    n = seats(game, 3)
    table = await owner.create_table(game, seats=n, bots=n, options=quick(game, bot_think=0.02, pause=0))
    # the match is under way before anyone joins: past its match_started (seq 1) and a few more events
    await until(lambda: (live.hall.latest_seq(table) or 0) >= 5, 60, "the bots' match under way")
    late = await live.client("late")
    snapshot = await late.join(table, role="spectator")
    assert snapshot["info"]["status"] in ("running", "finished") and snapshot["seq"] >= 1
    eve = await live.client("eve")  # msgpack
    ok = await eve.join(table, role="spectator", since=0)
    assert ok["type"] == "ok"
    events = [f for f in eve.frames if f.get("type") == "event" and f["table"] == table]
    assert [f["seq"] for f in events] == list(range(1, ok["seq"] + 1))
    assert events[0]["event"]["type"] == "match_started" and events[0]["event"]["match"] == 1
    await eve.next_event(table, timeout=60, where=lambda f: f["event"]["type"] == "match_ended")
    for frame in eve.frames:
        for key, where in _keys(frame):
            assert isinstance(key, str), f"{game}: {where} has the integer key {key!r} in msgpack"
    for c in (owner, late, eve):
        await c.close()


@pytest.mark.parametrize(
    "text",
    [
        "Map keys are strings in both codecs",
        "join with\n  `since: 0`",
        "A rematch never draws it",
        "(a lone winner too) `shuffle`s\n     its winnings",
        "A winner's winnings are its shares\n       joined in pot order, main pot first",
        "`_cardhall_burns`",
        "`groups` maps each rank held to how many cards of it are in hand",
        "`last_hand` (how many cards it added, a count)",
        "within a rank, by the card string",
        "`fold` is legal on every turn, even when checking is free (AL-5",
    ],
)
def test_spec_says_it(text):
    assert text in SPEC
    assert "with\n     no draw" not in SPEC and "cards of that rank in hand}" not in SPEC
