"""Private tables through the public protocol (SPEC "Private tables", "HTTP",
"Limits"), on one node: an unlisted table in no lobby and joined by its
invite; a password guarding seats (and watching, with the option), never in
a frame, the lobby, an HTTP body, the store or a log line, its wrong tries
bounded; seats the owner approves or denies, a request that lapses; the
option bounds; what the HTTP endpoints answer for such tables; a client
that knows nothing of 1.5 told by an error code. The lobby's filters are in
``test_lobby_filters.py``, a cluster's side in ``test_private_cluster.py``."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from cardhall.clients.client import Client, ServerError
from cardhall.engine.registry import engine_class
from cardhall.server.private_access import TRIES
from tests.conftest import until
from tests.games import GAMES
from tests.server.conftest import LiveServer

Frame = dict[str, Any]

#: a table that waits for its people: no pacing, no bot think
QUICK = {"pause": 0, "bot_think": 0}
SECRET = "correct horse ✓ battery"


async def create(client: Client, options: Frame, game: str = "loco_poker", seats: int = 3, bots: int = 1) -> Frame:
    """``create_table`` → the whole ``table_created`` frame (its ``invite`` too)."""
    return await client.request({"type": "create_table", "game": game, "seats": seats, "bots": bots,
                                 "options": {**QUICK, **options}})


async def join(client: Client, table: str, role: str = "player", **fields: Any) -> Frame:
    """``join`` with the 1.5 fields (``invite``, ``password``, ``ask``) as given."""
    reply = await client.request({"type": "join", "table": table, "role": role, **fields})
    client.joined[table] = role
    return reply


async def refused(awaitable: Any) -> ServerError:
    with pytest.raises(ServerError) as err:
        await awaitable
    return err.value


def received(*clients: Client) -> str:
    """Every frame the clients received, as one text (to look for a secret in)."""
    return "\n".join(repr(f) for c in clients for f in c.frames)


async def test_an_unlisted_table_is_in_no_lobby_and_is_joined_with_its_invite(live: LiveServer) -> None:
    ann, bob = await live.client("ann"), await live.client("bob", codec="json")
    created = await create(ann, {"visibility": "unlisted"})
    table, invite = created["table"], created["invite"]
    assert len(invite) == 22 and invite not in table and created["info"]["invite"] == invite
    async with httpx.AsyncClient(base_url=live.http) as http:
        assert table not in [t["id"] for t in (await http.get("/api/tables")).json()]
        assert table not in (await http.get("/api/tables", params={"player": ann.player})).text
    missing = await refused(join(bob, "t_ffffffffffff", "spectator"))
    for fields in ({}, {"invite": "A" * 22}, {"invite": invite[:-1] + ("A" if invite[-1] != "A" else "B")}):
        error = await refused(join(bob, table, "spectator", **fields))
        assert (error.code, error.message) == ("unknown_table", missing.message.replace("t_ffffffffffff", table))
    for request in (bob.act(table, {"type": "start"}), bob.chat(table, "hello?"), bob.leave(table)):
        assert (await refused(request)).code == "unknown_table"  # never not_joined: nothing tells it exists
    snap = await join(bob, table, "player", invite=invite)
    assert snap["you"] == 1 and "invite" not in snap["info"] and snap["info"]["options"]["visibility"] == "unlisted"
    assert (await join(bob, table, "spectator"))["you"] is None  # let in: no invite needed again
    owner_view = await join(ann, table, "spectator")  # the owner needs none, and sees it
    assert owner_view["info"]["invite"] == invite
    assert invite not in received(bob)


async def test_the_http_endpoints_of_an_unlisted_table_answer_its_invite_only(live: LiveServer) -> None:
    ann = await live.client("ann")
    created = await create(ann, {"visibility": "unlisted"}, seats=2, bots=2)  # bots only: hands at once
    table, invite = created["table"], created["invite"]
    await until(lambda: live.hall.store.hand_count(table), timeout=60, what="a finished hand")
    async with httpx.AsyncClient(base_url=live.http) as http:
        nothing = await http.get("/api/tables/t_ffffffffffff")
        for path in (f"/api/tables/{table}", f"/api/tables/{table}/hands"):
            assert (await http.get(path)).status_code == 404
            wrong = await http.get(path, headers={"X-Table-Invite": "A" * 22})
            assert wrong.status_code == 404 and wrong.json()["code"] == "unknown_table"
        plain = await http.get(f"/api/tables/{table}")
        assert plain.json()["message"] == nothing.json()["message"].replace("t_ffffffffffff", table)
        info = await http.get(f"/api/tables/{table}", headers={"X-Table-Invite": invite})
        assert info.status_code == 200 and info.json()["id"] == table
        assert "invite" not in info.json() and "lock" not in info.json()
        assert (await http.get(f"/api/tables/{table}/hands", headers={"X-Table-Invite": invite})).status_code == 200
        live.hall.close_table(table, "operator")
        await until(lambda: table not in live.hall.tables, what="the table closed")
        closed = f"/api/tables/{table}/hands"  # its hands stay, as private as the table was
        assert (await http.get(closed)).status_code == 404
        assert (await http.get(closed, headers={"X-Table-Invite": invite})).status_code == 200


async def test_a_password_seats_who_knows_it_and_is_never_shown(live: LiveServer,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    ann, bob, eve = await live.client("ann"), await live.client("bob", codec="json"), await live.client("eve")
    created = await create(ann, {"password": SECRET})
    table = created["table"]
    assert created["info"]["password"] is True and "password" not in created["info"]["options"]
    missing = await refused(join(bob, table))  # a 1.4 client: no password field at all
    assert missing.code == "bad_password" and "password" in missing.message and "1.5" in missing.message
    assert (await refused(join(bob, table, password=SECRET.upper()))).code == "bad_password"
    assert (await join(eve, table, "spectator"))["you"] is None  # watching needs no password by default
    snap = await join(bob, table, password=SECRET)
    assert snap["you"] == 1 and snap["info"]["password"] is True
    assert (await join(bob, table))["you"] == 1  # seated: no password needed again
    async with httpx.AsyncClient(base_url=live.http) as http:
        bodies = [(await http.get(p)).text for p in ("/api/tables", f"/api/tables/{table}", f"/api/tables/{table}/hands")]
    assert '"password":true' in bodies[0].replace(" ", "")
    stored = await live.hall.store.load_tables()
    for text in (received(ann, bob, eve), *bodies, repr(stored), caplog.text):
        assert SECRET not in text and SECRET.upper() not in text


async def test_watching_needs_the_password_when_the_owner_says_so(live: LiveServer) -> None:
    ann, eve = await live.client("ann"), await live.client("eve")
    table = (await create(ann, {"password": "sesame", "password_spectators": True}, seats=2, bots=2))["table"]
    assert (await refused(join(eve, table, "spectator"))).code == "bad_password"
    assert (await join(eve, table, "spectator", password="sesame"))["you"] is None
    await until(lambda: live.hall.store.hand_count(table), timeout=60, what="a finished hand")
    async with httpx.AsyncClient(base_url=live.http) as http:
        hands = f"/api/tables/{table}/hands"
        assert (await http.get(f"/api/tables/{table}")).json()["password"] is True  # its info is public
        denied = await http.get(hands)
        assert denied.status_code == 403 and denied.json()["code"] == "bad_password"
        assert (await http.get(hands, headers={"X-Table-Password": "sesame"})).status_code == 200
        encoded = await http.get(hands, headers={"X-Table-Password": "Sesame"})
        assert encoded.status_code == 403


async def test_wrong_passwords_are_bounded_per_connection_and_per_address(live: LiveServer) -> None:
    ann = await live.client("ann")
    table = (await create(ann, {"password": "sesame"}))["table"]
    guesser = await Client(live.url, record=True, local_addr=("127.0.0.2", 0)).connect()
    await guesser.hello("guesser")
    for n in range(TRIES):
        assert (await refused(join(guesser, table, password=f"guess {n}"))).code == "bad_password"
    limited = await refused(join(guesser, table, password="sesame"))  # even the right one: nothing derived
    assert limited.code == "rate_limited" and "password" in limited.message
    again = await Client(live.url, record=True, local_addr=("127.0.0.2", 0)).connect()
    await again.hello("again")
    assert (await refused(join(again, table, password="sesame"))).code == "rate_limited"  # the same address
    elsewhere = await Client(live.url, record=True, local_addr=("127.0.0.3", 0)).connect()
    await elsewhere.hello("elsewhere")
    assert (await join(elsewhere, table, password="sesame"))["you"] == 1
    protected = (await create(ann, {"password": "sesame", "password_spectators": True}))["table"]
    hands = f"/api/tables/{protected}/hands"
    transport = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
    async with httpx.AsyncClient(base_url=live.http, transport=transport) as http:  # the guesser's address
        answer = await http.get(hands, headers={"X-Table-Password": "sesame"})
        assert answer.status_code == 429 and answer.json()["code"] == "rate_limited" and answer.headers["Retry-After"]
    async with httpx.AsyncClient(base_url=live.http) as http:
        assert (await http.get(hands, headers={"X-Table-Password": "sesame"})).status_code == 200


async def test_a_seat_the_owner_approves(live: LiveServer) -> None:
    ann, bob, cat = await live.client("ann"), await live.client("bob", codec="json"), await live.client("cat")
    created = await create(ann, {"approve_seats": True})
    table = created["table"]
    assert created["info"]["requests"] == []
    await join(ann, table, "spectator")
    old = await refused(join(bob, table))  # a client that does not know the option
    assert old.code == "approval_required" and "ask" in old.message
    waiting = await join(bob, table, ask=True)
    assert waiting["pending"] is True and waiting["you"] is None and "requests" not in waiting["info"]
    asked = await ann.next_event(table, where=lambda f: f["event"]["type"] == "seat_requested")
    assert asked["event"] == {"type": "seat_requested", "player": bob.player, "name": "bob"}
    await join(cat, table, ask=True, seat=2)
    await join(bob, table, ask=True)  # asked again: it keeps its place, oldest first
    # the owner's info lists them (a reload, another connection); nobody else's, not the lobby
    assert (await join(ann, table, "spectator"))["info"]["requests"] == [
        {"player": bob.player, "name": "bob", "seat": None}, {"player": cat.player, "name": "cat", "seat": 2}]
    assert "requests" not in (await join(cat, table, ask=True, seat=2))["info"]
    async with httpx.AsyncClient(base_url=live.http) as http:
        for path in ("/api/tables", f"/api/tables/{table}"):
            assert "requests" not in (await http.get(path)).text
    assert (await refused(bob.act(table, {"type": "approve", "player": bob.player}))).code == "not_owner"
    await ann.act(table, {"type": "approve", "player": bob.player})
    approved = await bob.next_event(table, where=lambda f: f["event"]["type"] == "seat_approved")
    assert approved["event"] == {"type": "seat_approved", "player": bob.player, "seat": 1}
    seated = await bob.next_event(table, where=lambda f: f["event"]["type"] == "seated")
    assert seated["event"]["player"] == bob.player
    snap = await join(bob, table)
    assert snap["you"] == 1 and "pending" not in snap
    assert [r["player"] for r in (await join(ann, table, "spectator"))["info"]["requests"]] == [cat.player]


async def test_a_denied_seat_and_a_request_that_lapses(live: LiveServer) -> None:
    ann, bob, cat = await live.client("ann"), await live.client("bob"), await live.client("cat")
    table = (await create(ann, {"approve_seats": True, "approve_within": 1.0}))["table"]
    await join(ann, table, "spectator")
    await join(bob, table, ask=True)
    await ann.act(table, {"type": "deny", "player": bob.player})
    denied = await bob.next_event(table, where=lambda f: f["event"]["type"] == "seat_denied")
    assert denied["event"] == {"type": "seat_denied", "player": bob.player}
    again = await refused(join(bob, table, ask=True))
    assert again.code == "seat_denied"
    await join(cat, table, ask=True)
    lapsed = await cat.next_event(table, timeout=30, where=lambda f: f["event"]["type"] == "seat_request_lapsed")
    assert lapsed["event"] == {"type": "seat_request_lapsed", "player": cat.player, "reason": "timeout"}
    assert (await refused(ann.act(table, {"type": "approve", "player": cat.player}))).code == "bad_request"


@pytest.mark.parametrize("options, option", [
    ({"password": ""}, "password"), ({"password": "x" * 65}, "password"), ({"password": 1234}, "password"),
    ({"password": "a\u202eb"}, "password"), ({"visibility": "hidden"}, "visibility"),
    ({"password_spectators": "yes"}, "password_spectators"), ({"approve_seats": 1}, "approve_seats"),
    ({"approve_within": 0.5}, "approve_within"), ({"approve_within": 3601}, "approve_within"),
])
async def test_options_out_of_bounds_are_bad_options(live: LiveServer, options: Frame, option: str) -> None:
    ann = await live.client("ann")
    error = await refused(create(ann, options))
    assert (error.code, error.frame.get("option")) == ("bad_options", option)
    given = options.get("password")
    assert not (isinstance(given, str) and given) or given not in error.message  # a refused password is not echoed
    async with httpx.AsyncClient(base_url=live.http) as http:
        answer = await http.post("/api/tables", json={"game": "loco_poker", "seats": 2, "options": options})
    assert answer.status_code == 400 and answer.json()["code"] == "bad_options"


async def test_the_catalogue_lists_the_options_with_their_bounds(live: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=live.http) as http:
        options = {o["name"]: o for o in (await http.get("/api/games")).json()["table_options"]}
        created = await http.post("/api/tables", json={"game": "loco_poker", "seats": 2,
                                                       "options": {"visibility": "unlisted"}})
    assert options["visibility"]["choices"] == ["public", "unlisted"]
    assert (options["password"]["type"], options["password"]["max"], options["password"]["nullable"]) == ("text", 64, True)
    assert options["approve_within"]["default"] == 120.0 and options["approve_seats"]["default"] is False
    body = created.json()
    assert created.status_code == 201 and body["invite"] == body["info"]["invite"] and len(body["invite"]) == 22


@pytest.mark.parametrize("game", GAMES)
async def test_every_game_takes_an_unlisted_table_with_a_password(live: LiveServer, game: str) -> None:
    ann, bob = await live.client("ann"), await live.client("bob")
    seats = engine_class(game).min_seats
    created = await create(ann, {"visibility": "unlisted", "password": "p"}, game=game, seats=seats, bots=seats - 1)
    table, invite = created["table"], created["invite"]
    assert (await refused(join(bob, table, password="p"))).code == "unknown_table"
    assert (await refused(join(bob, table, invite=invite, password="q"))).code == "bad_password"
    snap = await join(bob, table, invite=invite, password="p")
    assert snap["you"] == 1 and snap["info"]["game"] == game
    await bob.next_event(table, timeout=30, where=lambda f: f["event"]["type"] == "match_started")
