"""The service around the tables: HTTP lobby and operations, metrics,
checkpoint ordering, restoring a table from its stored state, fault
containment, and SIGTERM (a real subprocess)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace

import httpx
import pytest

from cardhall.clients.client import Client, ServerError
from cardhall.server.store.memory import MemoryStore
from cardhall.server.table.actor import now
from cardhall.server.table.machine import TableMachine
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, free_port, running_server


async def test_lobby_hands_health_metrics_and_operator_endpoints():
    async with running_server(replace(TEST_SETTINGS, operator_key="sesame")) as live:
        ann = await live.client("ann")
        async with httpx.AsyncClient(base_url=live.http) as http:
            r = await http.post("/api/tables", json={"game": "loco_poker", "seats": 3, "bots": 3,
                                                     "options": {"pause": 0, "bot_think": 0, "points_to_win": 1}},
                                headers={"Authorization": f"Bearer {ann.token}"})
            assert r.status_code == 201
            table = r.json()["table"]
            assert r.json()["info"]["owner"] == ann.player and len(r.json()["commitment"]) == 64
            assert (await http.post("/api/tables", json={"game": "chess"})).status_code == 400
            assert (await http.post("/api/tables", content=b"{")).status_code == 400
            assert (await http.post("/api/tables", json={"game": "loco_poker"},
                                    headers={"Authorization": "Bearer wrong"})).status_code == 401
            await ann.join(table, role="spectator")
            await until(lambda: live.hall.tables[table].machine.status == "finished", 60, "the bots' match ending")
            lobby = (await http.get("/api/tables")).json()
            entry = next(e for e in lobby if e["id"] == table)
            assert entry["game"] == "loco_poker" and entry["seats"] == 3 and entry["taken"] == 3
            assert entry["spectators"] == 1 and entry["status"] == "finished"
            assert entry["options"]["points_to_win"] == 1
            hands = (await http.get(f"/api/tables/{table}/hands")).json()
            assert hands["hands"] and {"hole", "board"} <= set(hands["hands"][0]["hand"])
            assert (await http.get("/api/tables/t_nope/hands")).status_code == 404
            assert (await http.get("/healthz")).json()["status"] == "ok"
            metrics = (await http.get("/metrics")).text
            for name in ("cardhall_tables ", "cardhall_connections ", "cardhall_actions_total",
                         "cardhall_events_total", "cardhall_action_latency_seconds_bucket",
                         "cardhall_errors_total{code=\"unknown_game\"}", "process_resident_memory_bytes"):
                assert name in metrics, name
            # operators: the key is required; inspect shows the full state; close ends the table
            assert (await http.get(f"/api/ops/tables/{table}")).status_code == 403
            assert (await http.get(f"/api/ops/tables/{table}", headers={"x-operator-key": "nope"})).status_code == 403
            r = await http.get(f"/api/ops/tables/{table}", headers={"x-operator-key": "sesame"})
            assert r.status_code == 200 and r.json()["state"]["engine"] is not None
            r = await http.post(f"/api/ops/tables/{table}/close", headers={"x-operator-key": "sesame"})
            assert r.status_code == 202
            ev = await ann.next_event(table, where=lambda f: f["event"]["type"] == "closed")
            assert ev["event"]["reason"] == "operator"
            await until(lambda: table not in live.hall.tables, 30, "the hall forgetting the closed table")
            assert (await http.get(f"/api/tables/{table}")).status_code == 404
            assert (await http.get(f"/api/tables/{table}/hands")).status_code == 200  # G-9: still exportable
            with pytest.raises(ServerError) as err:
                await ann.join(table)
            assert err.value.code == "unknown_table"
        await ann.close()


async def test_idle_finished_table_closes_G9(live):
    ann = await live.client("ann")
    table = await ann.create_table("loco_poker", seats=2, bots=2,
                                   options={"pause": 0, "bot_think": 0, "points_to_win": 1, "close_after": 1})
    await ann.join(table, role="spectator")
    # the bots may finish before the join is answered
    await until(lambda: live.hall.tables[table].machine.status == "finished", 60, "the bots' match ending")
    await ann.leave(table)
    await until(lambda: table not in live.hall.tables, 30, "the idle finished table closing")
    await ann.close()


class SlowStore(MemoryStore):
    """A memory store whose commits take 50 ms and remember when each seq was written."""

    def __init__(self) -> None:
        super().__init__(keep_states=True)
        self.written: dict[int, float] = {}

    def commit_now(self, batch):
        return False  # like a networked store: every commit is awaited

    async def commit(self, batch):
        await asyncio.sleep(0.05)
        MemoryStore.commit_now(self, batch)
        now = time.monotonic()
        for cp in batch:
            for seq, _ in cp.events:
                self.written.setdefault(seq, now)


async def test_no_event_leaves_before_its_checkpoint():
    from cardhall.server.app import build_server

    store = SlowStore()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = build_server(replace(TEST_SETTINGS, port=port), store)
    server.capture_signals = __import__("contextlib").nullcontext  # type: ignore[method-assign]
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    await until(lambda: server.started or task.done(), 30, "the server started")
    assert server.started, task.result()
    try:
        received: dict[int, float] = {}
        c = Client(f"ws://127.0.0.1:{port}/ws", on_frame=lambda f: f.get("type") == "event" and
                   received.setdefault(f["seq"], time.monotonic()))
        await c.connect()
        await c.hello("ann")
        table = await c.create_table("loco_poker", seats=2, bots=2, options={"pause": 0, "bot_think": 0})
        await c.join(table, role="spectator")
        await until(lambda: len(received) > 5, 60, "events received")
        for seq, at in received.items():
            assert seq in store.written and store.written[seq] <= at, seq
        await c.close()
    finally:
        server.should_exit = True
        await task


async def test_table_state_round_trips_and_restores(live):
    ann = await live.client("ann")
    bob = await live.client("bob")
    table = await ann.create_table("loco_poker", seats=2, options={"pause": 0})
    await ann.join(table, role="player", seat=1, seed="x")
    await bob.join(table, role="player", seat=2)
    t = live.hall.tables[table]
    # the match started and the table is quiet: nothing in its mailbox, nothing left to write
    await until(lambda: t.machine.turn_id is not None and t.quiet, 30, "the match started and written")
    data = t.to_data()
    stored = live.hall.store.state(table)
    assert stored["seq"] == t.machine.seq and stored["engine"] == data["engine"]
    copy = TableMachine.from_data(data, now())
    again = copy.to_data(now().mono)
    for key in ("turn", "replay"):  # the clock runs; the replay context is of the time it was taken at
        again.pop(key), data.pop(key)
    assert again == data
    assert copy.engine.view(1) == t.machine.engine.view(1)
    for c in (ann, bob):
        await c.close()


async def test_a_fault_breaks_one_table_only(live):
    ann = await live.client("ann")
    bob = await live.client("bob")
    sick = await ann.create_table("loco_poker", seats=2, options={"pause": 0})
    well = await ann.create_table("loco_poker", seats=2, options={"pause": 0})
    for table in (sick, well):
        await ann.join(table, role="player", seat=1)
        await bob.join(table, role="player", seat=2)
    await until(lambda: all(live.hall.tables[table].machine.turn_id is not None and live.hall.tables[table].quiet
                            for table in (sick, well)), 30, "both matches waiting for a player")
    t = live.hall.tables[sick]

    def boom(seat, action):
        raise RuntimeError("engine bug")

    t.machine.engine.apply = boom  # an engine fault inside this table only
    actor = {1: ann, 2: bob}[t.machine.turn_seat]
    with pytest.raises(ServerError) as err:
        await actor.act(sick, {"type": "check"})
    assert err.value.code == "table_broken"
    ev = await ann.next_event(sick, where=lambda f: f["event"]["type"] == "broken")
    assert ev["event"] == {"type": "broken"}
    assert t.machine.status == "broken"
    with pytest.raises(ServerError) as err:
        await ann.act(sick, {"type": "check"})
    assert err.value.code == "table_broken"
    w = live.hall.tables[well]
    await {1: ann, 2: bob}[w.machine.turn_seat].act(well, {"type": "check"}, turn=w.machine.turn_id)
    assert (await ann.ping())["type"] == "pong"
    for c in (ann, bob):
        await c.close()


async def test_sigterm_closes_sockets_with_1001():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "cardhall.clients.cli", "serve", "--port", str(port),
                             "--log-level", "warning"], cwd=os.path.dirname(os.path.dirname(os.path.dirname(
                                 os.path.abspath(__file__)))))
    try:
        connected: list[Client] = []

        async def connects() -> bool:
            assert proc.poll() is None, f"the server exited with {proc.returncode}"
            try:
                connected.append(await Client(f"ws://127.0.0.1:{port}/ws").connect())
            except OSError:
                return False
            return True

        await until(connects, 60, "the server accepting a websocket")
        c = connected[0]
        await c.hello("ann")
        table = await c.create_table("loco_poker", seats=2, bots=2, options={"bot_think": 0.05})
        await c.join(table, role="spectator")
        await c.next_event(table, timeout=30)
        proc.send_signal(signal.SIGTERM)
        code, _ = await asyncio.wait_for(c.closed, 30)
        assert code == 1001
        assert proc.wait(30) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down
    finally:
        if proc.poll() is None:
            proc.kill()
