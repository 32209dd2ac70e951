"""Table chat through the protocol (SPEC "Chat"): every viewer sees each
message as a ``chat`` event with exactly its documented fields, also after a
reconnect with ``since``; the refusals (``not_joined``, ``bad_request`` for
text that is not plain, ``rate_limited`` with its ``re``, ``bad_state`` for a
spectator the owner silenced, ``not_owner``); the owner's switch kept with
the table's state; the cluster's wire form of the input; the rate per
player and per client address (each connection of a test from a loopback
address of its own where it matters: the server counts the socket's peer)."""

from __future__ import annotations

import time

import pytest

from cardhall.clients.client import Client, ServerError
from cardhall.server.chat import ADDRESS_BURST, ADDRESS_RATE, BURST, MAX_CHARS, RATE
from cardhall.server.cluster.wire import pack_input, remote_key, unpack_input
from cardhall.server.table.inputs import Chat, Now
from cardhall.server.table.machine import TableMachine

#: a table that waits (three seats, one bot, one player): no game events between the messages
WAITING = {"pause": 0, "bot_think": 0}
FIELDS = {"type", "seat", "name", "text", "from"}


async def _table(live):
    ann = await live.client("ann")
    bob = await live.client("bob", codec="json")
    table = await ann.create_table("loco_poker", seats=3, bots=1, options=WAITING)
    await ann.join(table, role="player", seat=1)
    await bob.join(table, role="spectator")
    return ann, bob, table


async def _chat_event(client, table):
    return (await client.next_event(table, where=lambda f: f["event"]["type"] == "chat"))


def _chats(client) -> list[dict]:
    """The chat events ``client`` received so far, in order."""
    return [f["event"] for f in client.frames if f.get("type") == "event" and f["event"]["type"] == "chat"]


async def _code(coro) -> tuple[str, object]:
    with pytest.raises(ServerError) as err:
        await coro
    return err.value.code, err.value.frame.get("re")


async def test_player_and_spectator_messages_reach_every_viewer_also_after_since(live):
    ann, bob, table = await _table(live)
    assert (await ann.chat(table, "  good   luck <b>all</b> ")) ["type"] == "ok"
    for viewer in (ann, bob):
        f = await _chat_event(viewer, table)
        assert f["event"] == {"type": "chat", "seat": 1, "name": "ann", "text": "good luck <b>all</b>",
                              "from": ann.player}
        assert "turn" not in f and "legal" not in f
    await bob.chat(table, "watching 👀")
    seen = [(await _chat_event(c, table))["event"] for c in (ann, bob)]
    assert seen[0] == seen[1] == {"type": "chat", "seat": None, "name": "bob", "text": "watching 👀",
                                  "from": bob.player}
    # a viewer joining with since = 0 gets the table's history, the chat in its place
    carol = await live.client("carol")
    await carol.join(table, role="spectator", since=0)
    replayed = _chats(carol)
    assert [e["text"] for e in replayed] == ["good luck <b>all</b>", "watching 👀"]
    assert all(set(e) == FIELDS for e in replayed)


async def test_refusals_not_joined_text_that_is_not_plain_and_the_rate(live):
    ann, bob, table = await _table(live)
    eve = await live.client("eve")
    code, _ = await _code(eve.chat(table, "hi"))
    assert code == "not_joined"
    bad = ["x" * (MAX_CHARS + 1), "red \x1b[31m", "bidi \u202e", "a\nb", "   ", "\u200b", "e" + "\u0301" * 6]
    for text in bad:
        code, _ = await _code(bob.request({"type": "chat", "table": table, "text": text}))
        assert code == "bad_request", text
    for value in (5, ["hi"], ""):
        code, _ = await _code(bob.request({"type": "chat", "table": table, "text": value}))
        assert code == "bad_request", value
    code, _ = await _code(bob.request({"type": "chat", "text": "hi"}))
    assert code == "bad_request"
    # nothing was published
    assert not _chats(ann) and not _chats(bob)
    # the rate: refused messages above did not count; a burst, then rate_limited naming the request
    for i in range(int(BURST)):
        await bob.chat(table, f"line {i}")
    msg = {"type": "chat", "table": table, "text": "one too many", "id": "flood"}
    await bob.send(msg)
    frame = await bob.next_frame()
    while frame.get("re") != "flood":
        frame = await bob.next_frame()
    assert frame["type"] == "error" and frame["code"] == "rate_limited"
    assert (await ann.chat(table, "still fine"))["type"] == "ok"  # another player has its own budget


async def _spectator(live, table: str, address: str, token: str | None = None, name: str = "p") -> Client:
    """A connection from loopback ``address`` that said hello (``token``: as that player) and watches ``table``."""
    c = await Client(live.url, record=True, local_addr=(address, 0)).connect()
    await c.hello(name, token=token)
    await c.join(table, role="spectator")
    return c


async def _answer(client: Client, table: str, rid: str) -> dict:
    """Send one chat message with id ``rid``; the frame answering it (``ok`` or ``error``, its ``re``)."""
    await client.send({"type": "chat", "table": table, "text": f"hello {rid}", "id": rid})
    frame = await client.next_frame()
    while frame.get("re") != rid:
        frame = await client.next_frame()
    return frame


async def test_chat_counts_per_address_over_its_players_and_per_player_over_its_connections(live):
    """Many players from one address, one connection and one message each: past
    the address's burst each gets ``rate_limited`` with its ``re``; another
    address is not affected. One player's 40 connections (from a third
    address) share the player's burst."""
    ann = await live.client("ann")
    table = await ann.create_table("loco_poker", seats=3, bots=1, options=WAITING)
    crowd = [await _spectator(live, table, "127.0.0.2", name=f"n{i}") for i in range(2 * int(ADDRESS_BURST))]
    assert len({c.player for c in crowd}) == len(crowd)  # distinct players
    started = time.monotonic()
    answers = [await _answer(c, table, f"m{i}") for i, c in enumerate(crowd)]
    elapsed = time.monotonic() - started
    ok = [a for a in answers if a["type"] == "ok"]
    refused = [(i, a) for i, a in enumerate(answers) if a["type"] != "ok"]
    assert ADDRESS_BURST <= len(ok) <= ADDRESS_BURST + int(elapsed * ADDRESS_RATE), (len(ok), elapsed)
    assert refused and all(a["type"] == "error" and a["code"] == "rate_limited" and a["re"] == f"m{i}"
                           and "from this address" in a["message"] for i, a in refused), refused
    other = await _spectator(live, table, "127.0.0.3", name="elsewhere")
    assert (await _answer(other, table, "x"))["type"] == "ok"
    # one player, 40 connections from one more address, one message each: the player's burst
    first = await _spectator(live, table, "127.0.0.4", name="many")
    many = [first] + [await _spectator(live, table, "127.0.0.4", token=first.token) for _ in range(39)]
    started = time.monotonic()
    answers = [await _answer(c, table, f"c{i}") for i, c in enumerate(many)]
    elapsed = time.monotonic() - started
    taken = sum(a["type"] == "ok" for a in answers)
    assert BURST <= taken <= BURST + int(elapsed * RATE), (taken, elapsed)
    assert all(a["code"] == "rate_limited" and "from this address" not in a["message"]
               for a in answers if a["type"] != "ok")
    for c in crowd + many + [other]:
        await c.close()


async def test_owner_switches_spectators_chat_off_and_on(live):
    ann, bob, table = await _table(live)
    code, _ = await _code(bob.act(table, {"type": "spectator_chat", "on": False}))
    assert code == "not_owner"
    code, _ = await _code(ann.act(table, {"type": "spectator_chat", "on": "no"}))
    assert code == "bad_request"
    await ann.act(table, {"type": "spectator_chat", "on": False})
    f = await bob.next_event(table, where=lambda f: f["event"]["type"] == "spectator_chat")
    assert f["event"] == {"type": "spectator_chat", "on": False}
    assert (await bob.join(table, role="spectator"))["info"]["spectator_chat"] is False
    code, _ = await _code(bob.chat(table, "let me talk"))
    assert code == "bad_state"
    await ann.chat(table, "players still may")
    assert (await _chat_event(bob, table))["event"]["text"] == "players still may"
    await ann.act(table, {"type": "spectator_chat", "on": True})
    await bob.chat(table, "thanks")
    f = await ann.next_event(table, where=lambda f: f["event"].get("text") == "thanks")
    assert f["event"]["seat"] is None
    # the switch is part of the table's stored state
    machine = live.hall.tables[table].machine
    await ann.act(table, {"type": "spectator_chat", "on": False})
    data = machine.to_data(0.0)
    assert data["spectator_chat"] is False
    assert TableMachine.from_data(data, Now(0.0, 0.0)).spectator_chat is False
    del data["spectator_chat"]
    assert TableMachine.from_data(data, Now(0.0, 0.0)).spectator_chat is True


def test_chat_input_travels_between_nodes():
    inp = Chat(remote_key("n1", 7), "p_1", "Ann", 3, "hi <i>", 1.0)
    back = unpack_input(pack_input(inp))
    assert back == Chat(remote_key("n1", 7), "p_1", "Ann", 3, "hi <i>", None)


def test_doctests():
    import doctest

    import cardhall.clients.tui.chat
    import cardhall.server.chat
    import cardhall.server.names

    for module in (cardhall.server.chat, cardhall.server.names, cardhall.clients.tui.chat):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module
