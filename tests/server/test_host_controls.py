"""The host's controls through the public protocol (SPEC "The host's
controls", 1.5), over real websockets against a live server: the owner
closes its table (as the operator's close ends it; anyone else:
``not_owner``); a player kicked mid-hand, in every game, sits out with the
timeout action until the match ends and loses the seat then, its
connections watch as spectators at once and never again receive anything a
spectator does not (every frame recorded and compared with a spectator's),
through the seat's next occupant's hand too; a ban refuses every join of the
player, in any role, after a rename and on another connection; the
ownership given to a seated person (not to a spectator), and passing by
itself from an owner away for ``close_after``; bans, kicks and the owner
kept across a restart; and the same across two nodes of a cluster on one
Redis (players connected to the node that does not serve the table)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx
import pytest

from cardhall.clients.client import Client
from cardhall.engine.registry import engine_class
from cardhall.server.store.memory import MemoryStore
from tests.conftest import code_of, until
from tests.games import GAMES, quick
from tests.server.conftest import TEST_SETTINGS, LiveServer, RedisServer, running_server
from tests.server.play import event_frames, play, remember_seat

Frame = dict[str, Any]
#: no pauses, quick bots, clocks that do not run out while the test looks
FAST = {"pause": 0, "bot_think": 0.02, "action_clock": 60, "time_bank": 60}


async def _second(live: LiveServer, first: Client) -> Client:
    """Another connection of ``first``'s player (its token), recording its frames."""
    other = await Client(live.url, record=True).connect()
    await other.hello("again", token=first.token)
    return other


async def _event(client: Client, table: str, kind: str, timeout: float = 60) -> Frame:
    """The next event frame of type ``kind`` at ``table`` in ``client``'s inbox."""
    return await client.next_event(table, timeout=timeout, where=lambda f: f["event"]["type"] == kind)


def _views(client: Client, table: str) -> dict[int, tuple[Any, ...]]:
    """``seq`` -> what ``client`` was shown of that event (the event as its view, the turn, legal actions)."""
    return {f["seq"]: (f["event"], f.get("turn"), f.get("legal")) for f in event_frames(client, table)}


def _beyond_a_spectator(client: Client, spectator: dict[int, tuple[Any, ...]], table: str, after: int,
                        complete: bool = True) -> list[int]:
    """The ``seq`` (after ``after``) of every event ``client`` was shown
    otherwise than the spectator was; ``complete``: the spectator must have
    been shown each of them too (else only those both were shown count)."""
    mine = {seq: view for seq, view in _views(client, table).items() if seq > after}
    assert not complete or all(seq in spectator for seq in mine), "the spectator missed an event"
    return [seq for seq, view in sorted(mine.items()) if seq in spectator and view != spectator[seq]]


async def _create(client: Client, game: str, seats: int, bots: int, options: Frame) -> tuple[str, str]:
    """``create_table`` → the table's id and its invite."""
    created = await client.request({"type": "create_table", "game": game, "seats": seats, "bots": bots,
                                    "options": options})
    return created["table"], created["invite"]


async def _new_owners_snapshot(client: Client, table: str, changed: Frame) -> Frame:
    """The frame ``client`` received right after the event ``changed``
    (``owner_changed``): the snapshot sent on its own to a new owner's
    connection (SPEC "The host's controls"), at the same ``seq``."""
    frame = await client.next_frame(timeout=30)
    assert frame["type"] == "snapshot" and "re" not in frame and frame["table"] == table, frame
    assert frame["seq"] == changed["seq"] and frame["info"]["owner"] == changed["event"]["owner"]
    return frame


def _snapshots_after(client: Client, table: str, seq: int) -> list[Frame]:
    """The snapshots sent on their own to ``client`` at ``table`` from ``seq`` on."""
    return [f for f in client.frames if f.get("type") == "snapshot" and "re" not in f
            and f["table"] == table and f["seq"] >= seq]


async def _info(live: LiveServer, table: str) -> Frame:
    async with httpx.AsyncClient(base_url=live.http, timeout=10) as http:
        return dict((await http.get(f"/api/tables/{table}")).json())


async def _lobby(base: str) -> list[str]:
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        return [entry["id"] for entry in (await http.get("/api/tables")).json()]


async def test_the_owner_closes_its_table_as_the_operator_would(live: LiveServer) -> None:
    owner = await live.client("owner")
    table = await owner.create_table("loco_poker", seats=3, bots=1, options=FAST)
    await owner.join(table, role="spectator")
    ann = await live.client("ann")
    await ann.join(table, seat=1)
    assert table in await _lobby(live.http)
    assert await code_of(ann.act(table, {"type": "close"})) == "not_owner: only the owner may close (SPEC \"The host's controls\")"
    await owner.act(table, {"type": "close"})
    for client in (owner, ann):
        assert (await _event(client, table, "closed"))["event"] == {"type": "closed", "reason": "owner"}
    await until(lambda: table not in live.hall.tables, 30, "the closed table gone from the hall")
    assert table not in await _lobby(live.http)
    assert (await code_of(ann.join(table))).startswith("unknown_table")
    for client in (owner, ann):
        await client.close()


@pytest.mark.parametrize("game", GAMES)
async def test_a_player_kicked_mid_hand_watches_as_a_spectator_and_never_sees_the_seat_again(
        live: LiveServer, game: str) -> None:
    seats = min(3, engine_class(game).max_seats)
    owner = await live.client("owner")  # watches as a spectator: the reference of what anyone may see
    table = await owner.create_table(game, seats=seats, bots=seats - 2, options=quick(game, **FAST))
    await owner.join(table, role="spectator")
    ann, bob = await live.client("ann"), await live.client("bob")
    bob2 = await _second(live, bob)
    assert (await ann.join(table, seat=1))["you"] == 1
    remember_seat(ann, table, 1)
    assert (await bob.join(table, seat=2))["you"] == 2  # the last seat: the match starts
    assert (await bob2.join(table))["you"] == 2
    await owner.next_event(table, timeout=60, where=lambda f: "turn" in f)  # the cards are dealt: mid-hand
    await owner.act(table, {"type": "kick", "player": bob.player})
    kicked = await _event(owner, table, "kicked")
    assert kicked["event"] == {"type": "kicked", "player": bob.player, "seat": 2}
    assert await code_of(bob.join(table, role="player")) == (
        "kicked: " + f"the owner of table {table} removed you from your seat: you may watch, and sit again "
        "once match 1 has ended")
    watching = await bob2.join(table, role="spectator")
    assert watching["you"] is None and "legal" not in watching
    ann_plays = play(ann, table, "ann", timeout=120)  # bob's turns go by the timeout action meanwhile (G-3)
    ended = (await ann_plays)[-1]
    await until(lambda: owner.seqs.get(table, 0) > ended["seq"], 30, "the spectator past the match's end")
    during = [view[0] for seq, view in _views(owner, table).items() if kicked["seq"] < seq < ended["seq"]]
    assert {"type": "sat_out", "seat": 2, "reason": "left"} in during  # sat out until the match ended (G-5, G-7)
    assert _views(owner, table)[ended["seq"] + 1][0] == {"type": "left", "seat": 2}  # seat 2 freed at the match's end
    info = await _info(live, table)
    assert [o["seat"] for o in info["occupants"]] == [1, *range(3, seats + 1)]
    # the seat's next occupant: carl takes it, the next match deals him his own cards
    carl = await live.client("carl")
    assert (await carl.join(table, seat=2))["you"] == 2
    await owner.act(table, {"type": "rematch"})
    started = (await _event(owner, table, "match_started"))["seq"]
    await until(lambda: _beyond_a_spectator(carl, _views(owner, table), table, started, complete=False), 60,
                "carl shown something of his own seat")
    newest = max(_views(carl, table))
    await until(lambda: min(bob.seqs.get(table, 0), bob2.seqs.get(table, 0), owner.seqs.get(table, 0)) >= newest,
                30, "every connection past carl's private event")
    spectator = _views(owner, table)
    for client in (bob, bob2):
        assert _beyond_a_spectator(client, spectator, table, kicked["seq"] - 1) == []
        assert not [f for f in client.frames if f.get("type") == "snapshot" and f.get("you") is not None
                    and f["seq"] >= kicked["seq"]]
    assert _beyond_a_spectator(bob, spectator, table, 0), "bob saw his own cards before the kick"
    for client in (owner, ann, bob, bob2, carl):
        await client.close()


async def test_a_banned_player_is_refused_in_every_role_under_any_name(live: LiveServer) -> None:
    owner = await live.client("owner")
    table = await owner.create_table("no_limit_holdem", seats=3, bots=1, options=quick("no_limit_holdem", **FAST))
    await owner.join(table, role="spectator")
    ann, bob = await live.client("ann"), await live.client("bob")
    bob2 = await _second(live, bob)
    await ann.join(table, seat=1)
    await bob.join(table, seat=2)
    await bob2.join(table, role="spectator")
    await owner.act(table, {"type": "ban", "player": bob.player})
    banned = await _event(owner, table, "banned")
    assert banned["event"] == {"type": "banned", "player": bob.player}
    for client in (bob, bob2):  # the ban is the last event each connection gets, without a gap before it
        last = await _event(client, table, "banned")
        assert last["seq"] == banned["seq"] and client.gaps == 0
    assert await code_of(owner.act(table, {"type": "ban", "player": bob.player})) == (
        f"bad_state: player {bob.player} is banned from this table already")
    refusal = f"banned: the owner of table {table} has banned you from it"
    for role in ("spectator", "player"):
        assert await code_of(bob.join(table, role=role)) == refusal
    await bob.rename("Robert")
    bob3 = await _second(live, bob)
    for client in (bob, bob2, bob3):
        assert await code_of(client.join(table)) == refusal
    # the table goes on for the others; the banned connections hear nothing more of it
    for _ in range(3):
        await ann.chat(table, "still here")
    await until(lambda: owner.seqs[table] >= banned["seq"] + 3, 30, "the chat after the ban")
    assert max(bob.seqs[table], bob2.seqs[table]) == banned["seq"] and table not in bob3.seqs
    bobs = [conn for conn in live.hall.connections if conn.player is not None and conn.player.id == bob.player]
    assert len(bobs) == 3 and not any(table in conn.tables for conn in bobs)
    assert await code_of(bob.act(table, {"type": "fold"})) == f"not_joined: join table {table} first"
    for client in (owner, ann, bob, bob2, bob3):
        await client.close()


async def test_ownership_goes_to_a_seated_person_who_alone_controls_then(live: LiveServer) -> None:
    owner = await live.client("owner")
    table = await owner.create_table("loco_poker", seats=3, bots=1, options=FAST)
    await owner.join(table, role="spectator")
    ann, wes = await live.client("ann"), await live.client("wes")
    await ann.join(table, seat=1)
    await wes.join(table, role="spectator")
    assert await code_of(owner.act(table, {"type": "transfer", "player": wes.player})) == (
        f"bad_state: player {wes.player} holds no seat at this table: ownership goes to a seated person")
    assert (await code_of(owner.act(table, {"type": "transfer", "player": "bot 3"}))).startswith("bad_state")
    assert (await code_of(owner.act(table, {"type": "transfer", "player": owner.player}))).startswith("bad_request")
    await owner.act(table, {"type": "transfer", "player": ann.player})
    changed = await _event(wes, table, "owner_changed")
    assert changed["event"] == {"type": "owner_changed", "owner": ann.player, "reason": "transfer"}
    assert (await wes.join(table, role="spectator"))["info"]["owner"] == ann.player
    for kind in ("start", "close"):
        assert (await code_of(owner.act(table, {"type": kind}))).startswith("not_owner")
    assert (await code_of(owner.act(table, {"type": "kick", "player": ann.player}))).startswith("not_owner")
    await ann.act(table, {"type": "kick", "player": wes.player})
    assert (await _event(owner, table, "kicked"))["event"] == {"type": "kicked", "player": wes.player, "seat": None}
    await ann.act(table, {"type": "close"})
    assert (await _event(owner, table, "closed"))["event"]["reason"] == "owner"
    for client in (owner, ann, wes):
        await client.close()


async def test_the_new_owner_gets_the_invite_and_the_requests_at_once(live: LiveServer) -> None:
    """After ``transfer`` each connection of the new owner watching the
    table gets, right after ``owner_changed``, a snapshot on its own whose
    info is the owner's (invite, requests); nobody else gets one."""
    owner = await live.client("owner")
    table, invite = await _create(owner, "loco_poker", 4, 1, {**FAST, "approve_seats": True})
    await owner.join(table, role="spectator")
    ann, cat = await live.client("ann"), await live.client("cat")
    ann2 = await _second(live, ann)
    await ann.join(table, ask=True)
    await owner.act(table, {"type": "approve", "player": ann.player})
    await _event(ann, table, "seated")
    assert (await ann2.join(table))["you"] == 1
    await cat.join(table, seat=3, ask=True)
    await _event(ann, table, "seat_requested")
    await owner.act(table, {"type": "transfer", "player": ann.player})
    for client, you in ((ann, 1), (ann2, 1)):
        changed = await _event(client, table, "owner_changed")
        fresh = await _new_owners_snapshot(client, table, changed)
        assert fresh["you"] == you and fresh["info"]["invite"] == invite
        assert fresh["info"]["requests"] == [{"player": cat.player, "name": "cat", "seat": 3}]
    await ann.act(table, {"type": "approve", "player": cat.player})  # the new host answers it
    await _event(owner, table, "seat_approved")
    for client in (owner, cat):
        assert _snapshots_after(client, table, changed["seq"]) == []
    assert invite not in repr(cat.frames)
    for client in (owner, ann, ann2, cat):
        await client.close()


async def test_an_absent_owners_table_passes_to_the_person_seated_longest(live: LiveServer) -> None:
    owner = await live.client("owner")
    table, invite = await _create(owner, "loco_poker", 4, 1, {**FAST, "close_after": 1})
    await owner.join(table, role="spectator")
    bob, ann = await live.client("bob"), await live.client("ann")
    await bob.join(table, seat=2)  # seated first
    await ann.join(table, seat=1)
    await owner.close()  # gone: after close_after (1 s) the table is bob's
    changed = await _event(ann, table, "owner_changed", timeout=60)
    assert changed["event"] == {"type": "owner_changed", "owner": bob.player, "reason": "absent"}
    await _event(bob, table, "owner_changed")
    assert (await _new_owners_snapshot(bob, table, changed))["info"]["invite"] == invite
    assert _snapshots_after(ann, table, changed["seq"]) == []
    await bob.act(table, {"type": "start"})  # the new owner starts the match (G-9)
    await _event(ann, table, "match_started")
    for client in (ann, bob):
        await client.close()


async def test_bans_kicks_and_the_owner_survive_a_restart() -> None:
    """The same store under a second server (a restart): the ban, the kick's bar and the owner are the table's."""
    store = MemoryStore(TEST_SETTINGS.event_buffer, keep_states=True)
    async with running_server(store=store) as before:
        owner = await before.client("owner")
        table = await owner.create_table("loco_poker", seats=4, bots=1, options=FAST)
        await owner.join(table, role="spectator")
        ann, bob, eve = await before.client("ann"), await before.client("bob"), await before.client("eve")
        await ann.join(table, seat=1)
        await bob.join(table, seat=2)
        await eve.join(table, role="spectator")
        await owner.act(table, {"type": "ban", "player": eve.player})
        await owner.act(table, {"type": "kick", "player": bob.player})
        await owner.act(table, {"type": "transfer", "player": ann.player})
        for client in (owner, ann, bob, eve):
            await client.close()
    async with running_server(store=store) as after:
        assert table in after.hall.tables  # restored from the store
        players = [c.player for c in (ann, bob, eve)]
        ann, bob, eve = [await _second(after, c) for c in (ann, bob, eve)]
        assert [c.player for c in (ann, bob, eve)] == players
        assert (await code_of(eve.join(table, role="spectator"))).startswith("banned")
        assert (await code_of(bob.join(table, role="player"))).startswith("kicked")  # match 1 has not been played yet
        snap = await ann.join(table, role="player")
        assert snap["you"] == 1 and snap["info"]["owner"] == ann.player
        await ann.act(table, {"type": "close"})
        assert (await _event(ann, table, "closed"))["event"]["reason"] == "owner"
        for client in (ann, bob, eve):
            await client.close()


# -- a cluster: two nodes on one Redis ---------------------------------------------------------------------

@pytest.mark.redis
async def test_the_host_controls_across_two_nodes(redis_server: RedisServer) -> None:
    """Node a serves the table (``placement: local``); bob, carl and wes are
    connected to node b. A kicked bob watches as a spectator through node b,
    shown no more than a spectator, and is refused a seat; a banned carl gets
    the error on either node and his node stops relaying the table to him;
    the ownership goes to bob, who closes the table from node b."""
    base = replace(TEST_SETTINGS, redis_url=redis_server.url, redis_prefix="host", placement="local")
    async with running_server(replace(base, node_id="a")) as a, running_server(replace(base, node_id="b")) as b:
        owner = await a.client("owner")
        table, invite = await _create(owner, "no_limit_holdem", 3, 1, quick("no_limit_holdem", **FAST))
        await owner.join(table, role="spectator")
        assert table in a.hall.tables and table not in b.hall.tables
        ann = await a.client("ann")
        bob, carl = await b.client("bob"), await b.client("carl")
        await ann.join(table, seat=1)
        remember_seat(ann, table, 1)
        assert (await bob.join(table, seat=2))["you"] == 2  # the match starts
        await carl.join(table, role="spectator")
        await owner.next_event(table, timeout=60, where=lambda f: "turn" in f)
        await owner.act(table, {"type": "kick", "player": bob.player})
        kicked = (await _event(bob, table, "kicked"))["seq"]
        assert (await code_of(bob.join(table, role="player"))).startswith("kicked")
        await owner.act(table, {"type": "ban", "player": carl.player})
        banned = (await _event(carl, table, "banned"))["seq"]
        assert (await code_of(carl.join(table))).startswith("banned")
        relayed = b.hall.topology.node.router.relayed  # type: ignore[attr-defined]
        await until(lambda: table in relayed and carl.player not in
                    {w.conn.player.id for w in relayed[table].watches.values() if w.conn.player is not None}, 30,
                    "node b relays the table to carl no more")
        carl_a = await _second(a, carl)
        assert (await code_of(carl_a.join(table, role="player"))).startswith("banned")
        ended = (await play(ann, table, "ann", timeout=120))[-1]["seq"]
        await until(lambda: min(bob.seqs.get(table, 0), owner.seqs.get(table, 0)) >= ended, 30, "both at the match's end")
        assert _beyond_a_spectator(bob, _views(owner, table), table, kicked - 1) == []
        assert carl.seqs[table] == banned and carl.close_codes == []
        await bob.join(table, role="player")  # the match is over: he may sit again
        await owner.act(table, {"type": "transfer", "player": bob.player})
        changed = await _event(bob, table, "owner_changed")
        assert changed["event"]["owner"] == bob.player
        fresh = await _new_owners_snapshot(bob, table, changed)  # relayed by node b, after the event
        assert fresh["info"]["invite"] == invite and fresh["you"] == 2 and fresh["info"]["requests"] == []
        await bob.act(table, {"type": "close"})
        assert (await _event(ann, table, "closed"))["event"] == {"type": "closed", "reason": "owner"}
        await until(lambda: table not in a.hall.tables, 30, "the table closed on node a")
        for client in (owner, ann, bob, carl, carl_a):
            await client.close()
