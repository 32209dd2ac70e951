"""The Python client library at private tables and with the host's controls (protocol 1.5, SPEC
"Private tables", "The host's controls"), over a real server on loopback: ``join`` with
``invite``, ``password`` and ``ask``, and the owner's ``approve``, ``deny``, ``kick``, ``ban``,
``transfer`` and ``close_table``, each checked by what the other player receives. One server for
the module (each test makes its own tables and players)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from cardhall.clients.client import Client, ServerError
from tests.server.conftest import LiveServer, running_server

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: a table that waits for its players (three seats, no bots): nothing starts while a test runs
WAITING = {"pause": 0, "bot_think": 0}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def live() -> AsyncIterator[LiveServer]:
    async with running_server() as srv:
        yield srv


async def _owner_and_guest(live: LiveServer, **options: object) -> tuple[Client, Client, str]:
    ann = await live.client("ann", codec="json")
    bob = await live.client("bob")
    table = await ann.create_table("loco_poker", seats=3, options={**WAITING, **options})
    await ann.join(table, role="player")
    return ann, bob, table


async def _code(awaitable: object) -> str:
    try:
        await awaitable  # type: ignore[misc]
    except ServerError as exc:
        return exc.code
    return "ok"


async def test_invite_and_password_are_sent_only_when_given(live):
    ann, bob, table = await _owner_and_guest(live, visibility="unlisted", password="s3cret")
    invite = (await ann.join(table, role="player"))["info"]["invite"]  # the owner's snapshot carries it
    assert await _code(bob.join(table, role="spectator")) == "unknown_table"
    assert "invite" not in bob.sent[-1] and "password" not in bob.sent[-1] and "ask" not in bob.sent[-1]
    assert await _code(bob.join(table, invite=invite)) == "bad_password"
    assert await _code(bob.join(table, invite=invite, password="wrong")) == "bad_password"
    snap = await bob.join(table, invite=invite, password="s3cret")
    assert snap["you"] == 2 and not snap.get("pending") and bob.joined[table] == "player"
    assert (bob.sent[-1]["invite"], bob.sent[-1]["password"]) == (invite, "s3cret")
    assert (await bob.join(table))["you"] == 2  # let in once: neither is needed again
    await ann.close()
    await bob.close()


async def test_ask_approve_and_deny(live):
    ann, bob, table = await _owner_and_guest(live, approve_seats=True)
    assert await _code(bob.join(table, role="player")) == "approval_required"
    snap = await bob.join(table, role="player", ask=True)
    assert snap["pending"] is True and snap["you"] is None and bob.sent[-1]["ask"] is True
    assert table in bob.asking
    asked = await ann.next_event(table, where=lambda f: f["event"]["type"] == "seat_requested")
    assert asked["event"] == {"type": "seat_requested", "player": bob.player, "name": "bob"}
    assert await _code(bob.approve(table, bob.player)) == "not_owner"
    await ann.approve(table, bob.player)
    approved = await bob.next_event(table, where=lambda f: f["event"]["type"] == "seat_approved")
    assert approved["event"] == {"type": "seat_approved", "player": bob.player, "seat": 2}
    assert table not in bob.asking and bob.joined[table] == "player"
    assert (await bob.join(table, role="player"))["you"] == 2  # seated: no ask needed

    carl = await live.client("carl")
    await carl.join(table, role="player", ask=True)
    await ann.next_event(table, where=lambda f: f["event"]["type"] == "seat_requested")
    await ann.deny(table, carl.player)
    await carl.next_event(table, where=lambda f: f["event"] == {"type": "seat_denied", "player": carl.player})
    assert table not in carl.asking and carl.joined[table] == "spectator"  # a reconnect watches, asks no more
    assert await _code(carl.join(table, role="player", ask=True)) == "seat_denied"
    assert await _code(ann.deny(table, carl.player)) == "bad_request"  # not asking any more
    for c in (ann, bob, carl):
        await c.close()


async def test_kick_ban_transfer_and_close(live):
    ann, bob, table = await _owner_and_guest(live)
    carl = await live.client("carl")
    await bob.join(table, role="player")
    await carl.join(table, role="spectator")
    assert await _code(bob.kick(table, ann.player)) == "not_owner"

    await ann.kick(table, bob.player)
    kicked = await bob.next_event(table, where=lambda f: f["event"]["type"] == "kicked")
    assert kicked["event"] == {"type": "kicked", "player": bob.player, "seat": 2}
    assert bob.joined[table] == "spectator"
    assert await _code(bob.join(table, role="player")) == "kicked"

    await ann.ban(table, carl.player)
    banned = await carl.next_event(table, where=lambda f: f["event"]["type"] == "banned")
    assert banned["event"] == {"type": "banned", "player": carl.player} and table not in carl.joined
    assert await _code(carl.join(table, role="spectator")) == "banned"

    assert await _code(ann.transfer(table, bob.player)) == "bad_state"  # kicked: no seat of its own
    dave = await live.client("dave")
    await dave.join(table, role="player")
    await ann.transfer(table, dave.player)
    changed = await dave.next_event(table, where=lambda f: f["event"]["type"] == "owner_changed")
    assert changed["event"] == {"type": "owner_changed", "owner": dave.player, "reason": "transfer"}
    assert await _code(ann.close_table(table)) == "not_owner"

    await dave.close_table(table)
    closed = await bob.next_event(table, where=lambda f: f["event"]["type"] == "closed")
    assert closed["event"] == {"type": "closed", "reason": "owner"}
    assert await _code(bob.join(table, role="spectator")) == "unknown_table"
    for c in (ann, bob, carl, dave):
        await c.close()
