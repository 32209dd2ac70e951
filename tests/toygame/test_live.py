"""A sixth game that touches only its own files: High Card (``tests/toygame``), registered from
outside the package, is served, listed, played, watched and validated like a built-in game.

(a) In this process (registered through :func:`cardhall.engine.plugins.registered`): a person
plays whole matches through :class:`cardhall.clients.client.Client` against the game's own bot,
a spectator watches, every frame is checked against the schemas with the toy's own document
(``tests/conftest.py``'s validator), and the revealed seeds replay every card the person saw.
(b) A separate ``cardhall serve`` process started with ``CARDHALL_GAMES=tests.toygame`` lists it
in ``GET /api/games`` and a client creates and plays it there.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from cardhall.clients.bots import BotPlayer
from cardhall.clients.client import Client
from cardhall.engine.cards import standard_deck
from cardhall.engine.rng import FairRandom
from cardhall.protocol.schemas import FrameValidator, game_document
from tests.conftest import until
from tests.server.conftest import free_port, running_server
from tests.toygame.conftest import play_matches

ROOT = Path(__file__).resolve().parents[2]
FAST = {"pause": 0, "bot_think": 0}


def deal_of(ended: dict, hands: int, seats: list[int]) -> list[dict[int, str]]:
    """Each hand's cards as the match's revealed seeds deal them (tests/toygame/engine.py: one
    shuffle per hand, hand k in seat order from the (k-1)-th seat, G-2)."""
    client_seeds = ended["client_seeds"]
    rng = FairRandom(bytes.fromhex(ended["server_seed"]), [client_seeds[k].encode() for k in sorted(client_seeds, key=int)])
    out = []
    for hand in range(1, hands + 1):
        deck = standard_deck()
        rng.shuffle(deck)
        first = (hand - 1) % len(seats)
        order = seats[first:] + seats[:first]
        out.append({seat: deck[i] for i, seat in enumerate(order)})
    return out


async def test_a_person_plays_the_toy_against_its_bot_while_someone_watches(toy, frame_validator):
    async with running_server() as live:
        async with httpx.AsyncClient(base_url=live.http) as http:
            catalogue = (await http.get("/api/games")).json()
        FrameValidator().check_catalogue(catalogue)
        entry = next(g for g in catalogue["games"] if g["name"] == "high_card")
        assert entry["bots"] == ["bold", "random"] and entry["default_bot"] == "bold"
        assert [o["name"] for o in entry["options"]] == ["hands", "max_bet"]
        assert entry["renderer"] == "/games/high_card/web.js"  # its own module (tests/toygame/web.js)
        assert [g["name"] for g in catalogue["games"]][:5] == ["fixed_limit_holdem", "no_limit_holdem", "alamo",
                                                               "loco_poker", "avalanche"]

        ann = await live.client("ann", codec="json")
        eve = await live.client("eve")
        try:
            table = await ann.create_table("high_card", seats=2, bots=1, options={"hands": 3, "max_bet": 4, **FAST})
            watched = await eve.join(table, role="spectator")
            assert watched["you"] is None
            joined = await ann.join(table, role="player", seed="ann's seed")
            assert joined["you"] == 1
            ended = await play_matches(ann, table, seat=1, matches=2)
            # the spectator saw the same matches end
            for match in ended:
                seen = await eve.next_event(table, timeout=30, where=lambda f, m=match: f["event"]["type"] == "match_ended"
                                            and f["event"]["match"] == m["match"])
                assert seen["event"]["result"] == match["result"]
            # both hold every event the table has sent (what is checked below is all there)
            await until(lambda: ann.seqs.get(table) == eve.seqs.get(table) == live.hall.latest_seq(table), 60,
                        "ann and eve have every event of the table")
        finally:
            await ann.close()
            await eve.close()

    for match in ended:
        result = match["result"]
        assert sum(result["points"].values()) == 0 and result["hands"] == 3  # every point won is a point lost
        assert result["winners"] == result["ranking"][0]
    occupants = {o["seat"]: o for o in mine_snapshot(ann, table)["info"]["occupants"]}
    assert occupants[2]["bot"] == "bold" and occupants[1]["player"] == ann.player  # the game's own bot, by default

    # ann was dealt her card, and only hers, in each hand; eve never got a card not shown to all
    for who, client in (("ann", ann), ("eve", eve)):
        for f in client.frames:
            if f.get("type") != "event" or f["table"] != table:
                continue
            e = f["event"]
            if e["type"] == "deal":
                assert ("card" in e) == (who == "ann"), (who, e)
            assert "legal" not in f or (who == "ann" and f["turn"]["seat"] == 1), (who, f)
    # the revealed seeds deal exactly the cards ann saw, and the cards shown (G-2)
    for match in ended:
        frames = [f["event"] for f in ann.frames if f.get("type") == "event" and f["table"] == table
                  and f["seq"] <= match_seq(ann, table, match["match"])]
        match_events = frames[last_index(frames, "match_started"):]
        dealt = deal_of(match, 3, [1, 2])
        dealt_to_ann = [e["card"] for e in match_events if e["type"] == "deal"]
        assert dealt_to_ann == [hand[1] for hand in dealt]
        for e in match_events:
            if e["type"] == "showdown":
                assert e["cards"] == {str(s): dealt[e["hand"] - 1][s] for s in (1, 2)}
    # the frames were checked against the toy's own document, and it is strict
    checked = frame_validator.checked
    assert checked["event:high_card:deal"] >= 12 and checked["snapshot:high_card"] >= 2, checked
    assert game_document("high_card") == "high_card.json"
    deal = next(f for f in ann.frames if f.get("type") == "event" and f["event"]["type"] == "deal")
    validator = FrameValidator()
    validator.check_server(mine_snapshot(ann, table))
    assert validator.server_errors(deal) == []
    assert validator.server_errors({**deal, "event": {**deal["event"], "cards": ["Ah"]}})
    assert validator.client_errors({"type": "act", "table": table, "action": {"type": "bet", "amount": 0}})
    assert validator.client_errors({"type": "act", "table": table, "action": {"type": "bet", "amount": 2}}) == []


async def test_the_reference_bot_plays_the_toy_with_the_toys_own_strategy(toy):
    """:class:`cardhall.clients.bots.BotPlayer` (the third-party bot's template) finds the toy's
    default strategy through its registration and plays a seat to the match's end."""
    async with running_server() as live:
        c = await live.client("robo")
        try:
            table = await c.create_table("high_card", seats=2, bots=1, options={**toy.quick_options, **FAST})
            player = BotPlayer(c, table, bot_seed=b"toy")
            results = await player.play(timeout=120)
        finally:
            await c.close()
    assert player.strategy == toy.default_bot == "bold" and type(player.bot).__name__ == "BoldBot"
    assert player.seat == 1 and player.actions > 0
    assert len(results) == 1 and results[0]["hands"] == toy.quick_options["hands"] and results[0]["winners"]


def match_seq(client: Client, table: str, match: int) -> int:
    """The seq of ``match``'s match_ended event in ``client``'s frames."""
    return next(f["seq"] for f in client.frames if f.get("type") == "event" and f["table"] == table
                and f["event"]["type"] == "match_ended" and f["event"]["match"] == match)


def last_index(events: list[dict], kind: str) -> int:
    return max(i for i, e in enumerate(events) if e["type"] == kind)


def mine_snapshot(client: Client, table: str) -> dict:
    return next(f for f in client.frames if f.get("type") == "snapshot" and f["table"] == table)


def test_a_bad_game_module_is_named_and_skipped(monkeypatch, caplog):
    """A module in CARDHALL_GAMES that does not import, or declares no game, is logged by name and
    skipped; the built-in games and the good module still load."""
    from cardhall.engine import plugins

    monkeypatch.setenv(plugins.ENV, "tests.no_such_module, tests.toygame.bot ,tests.toygame")
    try:
        with caplog.at_level("ERROR", logger="cardhall.plugins"):
            found = plugins.rediscover()
        assert "high_card" in found and found["high_card"].source == "tests.toygame"
        assert {"loco_poker", "avalanche"} <= set(found)
        messages = [r.getMessage() for r in caplog.records]
        assert any("tests.no_such_module" in m and "ModuleNotFoundError" in m for m in messages), messages
        assert any("tests.toygame.bot" in m and "declares no GAME" in m for m in messages), messages
    finally:
        monkeypatch.delenv(plugins.ENV)
        plugins.rediscover()
    assert "high_card" not in plugins.games()


async def test_a_separate_serve_process_finds_the_toy_through_the_environment(toy, tmp_path):
    """``cardhall serve`` in its own process, with CARDHALL_GAMES=tests.toygame and the repository
    on PYTHONPATH (as the README says), lists High Card and plays it with a client. (This process
    registers the toy too, so the client's validator checks the frames against its document.)"""
    port = free_port()
    # the README's command: the installed ``cardhall`` script, the repository on PYTHONPATH
    env = {**os.environ, "CARDHALL_GAMES": "tests.toygame", "PYTHONPATH": str(ROOT)}
    cardhall = str(Path(sys.executable).with_name("cardhall"))
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        proc = await asyncio.create_subprocess_exec(cardhall, "serve", "--port", str(port),
                                                    cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}"
            answers: list[httpx.Response] = []
            async with httpx.AsyncClient(base_url=base) as http:
                async def answered() -> bool:
                    try:
                        answers.append(await http.get("/api/games"))
                    except httpx.TransportError:  # not listening yet
                        assert proc.returncode is None, log_path.read_text()
                        return False
                    return True

                await until(answered, 120, "cardhall serve answering GET /api/games")
            names = [g["name"] for g in answers[-1].json()["games"]]
            assert names[-1] == "high_card" and len(names) == 6, names
            ann = await Client(f"ws://127.0.0.1:{port}/ws", codec="msgpack").connect()
            try:
                await ann.hello("ann")
                assert "high_card" in [g["name"] for g in (await ann.games())["games"]]
                table = await ann.create_table("high_card", seats=3, bots=["random", None], options={"hands": 2, **FAST})
                snap = await ann.join(table, role="player")
                assert snap["you"] == 1
                (ended,) = await play_matches(ann, table, seat=1, matches=1)
                ranked = sorted(s for group in ended["result"]["ranking"] for s in group)
                assert ended["result"]["hands"] == 2 and ranked == [1, 2, 3]
                assert sorted(o.get("bot", "-") for o in snap["info"]["occupants"]) == ["-", "bold", "random"]
            finally:
                await ann.close()
        finally:
            if proc.returncode is None:
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 20)
            except TimeoutError:
                proc.kill()
                await proc.wait()
    assert "Application shutdown complete" in log_path.read_text()
    assert "Traceback" not in log_path.read_text()


@pytest.mark.parametrize("module", ["tests.toygame.engine", "tests.toygame.bot", "cardhall.engine.plugins"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0
