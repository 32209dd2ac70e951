"""No table dies silently: a fault outside the table machine's rules breaks
the table in the open, through the live protocol and HTTP.

The game is High Card (``tests/toygame``) with one twist registered under its
own name and schema: a bet of 3 points produces an event the service cannot
encode (a number past msgpack's 64 bits), so the fault happens where the actor
packs the step's events after the machine's step, the path where an
option of 2^64 chips used to end the actor with nothing said. The table must
then be ``broken`` for its viewers (the ``broken`` event), in the lobby and in
``/healthz`` (still 200: the service is fine), answer the request that hit it
and every later one with ``table_broken``, show in the operator's view and
close when the operator closes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import httpx
import pytest

from cardhall.clients.client import Client, ServerError
from cardhall.engine import plugins
from cardhall.engine.base import Event
from cardhall.server.store.memory import MemoryStore
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, running_server
from tests.toygame.engine import HighCard

SETTINGS = replace(TEST_SETTINGS, operator_key="ops")
OPS = {"x-operator-key": "ops"}
FAST = {"pause": 0, "bot_think": 0, "hands": 3}
#: a number no codec of the service carries (msgpack and orjson stop at 64 bits)
TOO_BIG = 2**64


class PoisonedHighCard(HighCard):
    """High Card whose ``action`` event for a bet of 3 carries :data:`TOO_BIG`."""

    def apply(self, seat: int, action: Mapping[str, Any]) -> list[Event]:
        events = super().apply(seat, action)
        if action.get("type") == "bet" and action.get("amount") == 3:
            events[0] = Event({**events[0].data, "amount": TOO_BIG})
        return events


@pytest.fixture
def poisoned() -> Iterator[None]:
    """The poisoned game registered as ``high_card`` (its schema is the toy's) for the test."""
    (spec,) = plugins.load_module("tests.toygame")
    with plugins.registered(replace(spec, engine=PoisonedHighCard)):
        yield


async def _until_turn(client: Client, table: str, seat: int) -> dict[str, Any]:
    while True:
        frame = await client.next_event(table, timeout=30)
        turn = frame.get("turn")
        if "legal" in frame and turn and turn["seat"] == seat:
            return turn


async def _until_event(client: Client, table: str, kind: str) -> dict[str, Any]:
    while True:
        frame = await client.next_event(table, timeout=30)
        if frame["event"]["type"] == kind:
            return frame


async def _error_code(request: Any) -> str:
    try:
        await asyncio.wait_for(request, 30)
    except ServerError as exc:
        return exc.code
    return "ok"


async def test_a_fault_outside_the_machine_breaks_the_table_in_the_open(poisoned):
    # a memory store that keeps no states: the step's events are packed only by the actor, after the commit
    async with running_server(SETTINGS, store=MemoryStore(1024)) as live:
        ann, bob, cy = [await live.client(n, codec="json") for n in ("ann", "bob", "cy")]
        table = await ann.create_table("high_card", seats=2, options=FAST)
        await ann.join(table, seat=1)
        await cy.join(table, role="spectator")
        await bob.join(table, seat=2)
        turn = await _until_turn(ann, table, 1)  # hand 1 starts with seat 1

        # the request that hits the fault, and one right behind it in the mailbox
        hit = asyncio.ensure_future(_error_code(ann.act(table, {"type": "bet", "amount": 3}, turn=turn["id"])))
        behind = asyncio.ensure_future(_error_code(bob.act(table, {"type": "fold"})))
        assert (await hit, await behind) == ("table_broken", "table_broken")
        for viewer in (ann, bob, cy):
            assert (await _until_event(viewer, table, "broken"))["event"] == {"type": "broken"}
        assert await _error_code(cy.join(table, role="spectator")) == "table_broken"

        async with httpx.AsyncClient(base_url=live.http, timeout=5) as http:
            lobby = {t["id"]: t for t in (await http.get("/api/tables")).json()}
            assert lobby[table]["status"] == "broken"
            health = await http.get("/healthz")
            assert health.status_code == 200 and health.json()["status"] == "ok"
            assert health.json()["broken_tables"] == 1
            ops = await http.get(f"/api/ops/tables/{table}", headers=OPS)
            assert ops.status_code == 200 and ops.json()["status"] == "broken" and ops.json()["mailbox"] == 0

            closing = await http.post(f"/api/ops/tables/{table}/close", headers=OPS)
            assert closing.status_code == 202
            closed = await _until_event(cy, table, "closed")
            assert closed["event"]["reason"] == "operator"

            async def forgotten() -> bool:  # the hall forgets it once its ``closed`` is out
                return (await http.get(f"/api/tables/{table}")).status_code == 404

            await until(forgotten, 30, "the closed table gone from the lobby")
            assert (await http.get("/healthz")).json()["broken_tables"] == 0
        for c in (ann, bob, cy):
            await c.close()
