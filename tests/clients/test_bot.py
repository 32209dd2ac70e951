"""The example third-party bot plays real tables to the end through the public
protocol: ``cardhall bot`` as a separate process, and :class:`BotPlayer` with
each game's default strategy (which decides from a fresh snapshot state)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from cardhall.clients.bots import BotPlayer
from cardhall.clients.client import Client
from tests.games import GAMES, quick
from tests.server.conftest import running_server


@pytest.fixture
async def live():
    async with running_server() as srv:
        yield srv


async def test_cardhall_bot_command_plays_a_match_to_the_end(live):
    owner = await live.client("owner", codec="json")
    table = await owner.create_table("loco_poker", seats=2, bots=1, options=quick("loco_poker", pause=0, bot_think=0))
    await owner.join(table, role="spectator")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cardhall.clients.cli", "bot", "--server", live.url, "--table", table, "--seat", "1",
        "--strategy", "threshold", "--name", "robo", "--json",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    assert proc.returncode == 0, err.decode()
    assert "seat 1 (loco_poker, threshold)" in out.decode() and "match 1: winners" in out.decode()
    ended = await owner.next_event(table, timeout=10, where=lambda f: f["event"]["type"] == "match_ended")
    seated = [f["event"] for f in owner.frames if f.get("type") == "event" and f["event"]["type"] == "seated"]
    assert seated[0]["seat"] == 1 and seated[0]["name"] == "robo"
    acted = [f for f in owner.frames if f.get("type") == "event" and f["event"].get("seat") == 1
             and f["event"]["type"] == "action"]
    assert acted and ended["event"]["result"]["winners"]
    await owner.close()


@pytest.mark.parametrize("game", GAMES)
async def test_default_strategy_plays_through_the_protocol(live, game):
    c = await Client(live.url, codec="msgpack", reconnect=True).connect()
    await c.hello("bot")
    table = await c.create_table(game, seats=2, bots=1, options=quick(game, pause=0, bot_think=0))
    player = BotPlayer(c, table, bot_seed=game.encode())
    results = await player.play(timeout=120)
    assert player.strategy != "random" and player.actions > 0
    assert len(results) == 1 and results[0]["winners"]
    await c.close()
