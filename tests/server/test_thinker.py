"""Bots' thinking does not stall the node (server/thinker.py): a costly bot's
move is thought in the worker pool, so while it thinks the node answers a
person's ``ping`` and ``/healthz``; the move then lands at its table. And a
move thought in the pool is the one the bot makes at the table."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from cardhall.engine import plugins
from cardhall.engine.base import test_rng as seeded
from cardhall.engine.bots.registry import make_bot
from cardhall.engine.registry import engine_class
from cardhall.engine.rng import FairRandom
from cardhall.server.table.bots import choose, think, thought
from cardhall.server.table.occupant import Occupant
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, free_port, running_server


async def test_a_bot_thinking_in_the_pool_leaves_the_node_answering(tmp_path, monkeypatch):
    monkeypatch.setenv("CARDHALL_TEST_STALL", str(tmp_path))
    (toy,) = plugins.load_module("tests.toygame")
    spec = replace(toy, bots={**toy.bots, "stall": "tests.server.stall_bot:StallBot"}, default_bot="stall")
    with plugins.registered(spec):
        async with running_server(replace(TEST_SETTINGS, bot_workers=1)) as srv:
            ann = await srv.client("ann")
            table = await ann.create_table("high_card", seats=2, bots=2, options={"pause": 0, "bot_think": 0})
            await ann.join(table, role="spectator")
            await until(lambda: (tmp_path / "thinking").exists(), timeout=60, what="a bot thinks")
            assert (await ann.ping())["type"] == "pong"
            async with httpx.AsyncClient(base_url=srv.http) as http:
                assert (await http.get("/healthz")).status_code == 200
            assert not (tmp_path / "done").exists(), "the node answered only once the bot had finished thinking"
            (tmp_path / "go").touch()
            while True:  # the bot's move, thought in the pool, is played at its table
                event = (await ann.next_event(table, timeout=30))["event"]
                if event["type"] == "action":
                    assert event["action"] == "fold", event
                    break
            assert srv.hall.thinker.pooled >= 1
            await ann.close()


@pytest.mark.parametrize("game", ["no_limit_holdem", "fixed_limit_holdem", "loco_poker", "alamo"])
def test_a_move_thought_away_is_the_move_made_at_the_table(game):
    engine = engine_class(game).new([1, 2, 3], {}, seeded(f"thought {game}"))
    engine.start()
    checked = 0
    for n in range(40):
        seat = engine.to_act
        if engine.finished:
            break
        if seat is None:
            engine.advance()
            continue
        occ = Occupant(seat, None, "bot", bot=None)
        occ.brain = make_bot(game, None, FairRandom(f"bot {n}".encode()))
        legal = [a.to_data() for a in engine.legal_actions()]
        job = thought(occ, engine, seat, legal)
        assert job is not None, f"{game}'s default bot is costly"
        action, before, after = think(job)
        assert before == occ.bot_position()
        assert action == choose(occ, engine, seat, legal) and after == occ.bot_position()
        engine.apply(seat, action)
        checked += 1
    assert checked >= 5


def _pool_workers(node: int) -> list[int]:
    """The pids of ``node``'s bot worker processes (its ``multiprocessing`` spawn children)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            argv = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == node and b"multiprocessing.spawn" in argv:
            out.append(int(stat.parent.name))
    return out


async def _node_thinking(tmp_path: Path) -> tuple[subprocess.Popen[bytes], list[int]]:
    """A ``cardhall serve`` process (its own process group) whose equity bots think in its worker pool."""
    port = free_port()
    err = (tmp_path / "serve.err").open("wb")
    node = subprocess.Popen([sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(port),
                             "--log-level", "warning"], stderr=err, start_new_session=True)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
        async def up() -> bool:
            try:
                return (await http.get("/healthz")).status_code == 200
            except httpx.TransportError:
                return False

        await until(up, timeout=60, what="the node serves")
        made = await http.post("/api/tables", json={"game": "no_limit_holdem", "seats": 3, "bots": 3})
        assert made.status_code == 201, made.text
    workers: list[int] = []

    def started() -> bool:
        workers[:] = _pool_workers(node.pid)
        return bool(workers)

    await until(started, timeout=60, what="a bot worker process")
    return node, workers


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc (Linux)")
async def test_a_killed_nodes_bot_workers_exit(tmp_path):
    node, workers = await _node_thinking(tmp_path)
    node.kill()
    node.wait()
    await until(lambda: not any(Path(f"/proc/{w}").exists() for w in workers), timeout=30,
                what="the killed node's bot workers exit")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc (Linux)")
async def test_ctrl_c_stops_the_node_and_its_bot_workers_quietly(tmp_path):
    node, workers = await _node_thinking(tmp_path)
    os.killpg(node.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
    assert await asyncio.to_thread(node.wait, 60) == 0
    err = (tmp_path / "serve.err").read_text()
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    await until(lambda: not any(Path(f"/proc/{w}").exists() for w in workers), timeout=30,
                what="the node's bot workers exit")


class _Table:
    """A table as the thinker sees it: whether a person is in play, and the inputs posted to it."""

    def __init__(self, name: str, attended: bool, log: list[str]) -> None:
        self.name, self._attended, self.log, self.done = name, attended, log, []

    def attended(self) -> bool:
        return self._attended

    def bot_thought(self, due):
        return None  # a cheap strategy: thought at the table

    def post(self, inp, done=None):
        self.log.append(self.name)
        self.done.append(done)


async def test_bot_turns_are_taken_in_line_a_few_at_a_time_people_first():
    from cardhall.server.table.inputs import BotDue
    from cardhall.server.thinker import Thinker

    log: list[str] = []
    thinker = Thinker(workers=0, slots=2)
    bots = [_Table(f"bots{i}", False, log) for i in range(4)]
    person = _Table("person", True, log)
    for t in bots:
        thinker.submit(t, BotDue(1, 0.0))
    thinker.submit(person, BotDue(1, 0.0))
    assert log == ["bots0", "bots1"] and thinker.queued == 3 and thinker.busy == 2  # two under way at once
    bots[0].done[0]()  # bots0's move was applied, written and delivered: the next turn goes
    assert log[-1] == "person"  # a table with a person in play first
    bots[1].done[0]()
    person.done[0]()
    assert log == ["bots0", "bots1", "person", "bots2", "bots3"]  # then the rest in line
    for t in bots[2:]:
        t.done[0]()
    assert thinker.queued == 0 and thinker.busy == 0
