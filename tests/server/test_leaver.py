"""A player who leaves a running match (G-5) loses the seat when it ends (G-7),
through a real server: the rematch does not seat them again, the seat is free
for someone else; a player who comes back during the match keeps it; and a
freed seat is never watched through another connection of its old player."""

from __future__ import annotations

from typing import Any

from cardhall.clients.client import Client
from tests.games import quick
from tests.server.conftest import LiveServer
from tests.server.play import cards_in, event_frames, play, remember_seat, watch

Frame = dict[str, Any]
#: a Loco Poker match shorter than its quick one, since the tests wait for the end of the match
#: that was left: the first point wins it; no pauses, bots act at once
SHORT = quick("loco_poker", points_to_win=1, pause=0, bot_think=0)


def _events(client: Client, table: str, kind: str) -> list[Frame]:
    return [f for f in event_frames(client, table) if f["event"]["type"] == kind]


async def _leave_during_match(live: LiveServer) -> tuple[Client, Client, str]:
    """An owner watching a 2-seat table; ``ann`` takes seat 1 (the bot holds 2),
    the match starts, and she leaves it at once."""
    owner = await live.client("owner")
    table = await owner.create_table("loco_poker", seats=2, options=SHORT, bots=1)
    await owner.join(table, role="spectator")
    ann = await live.client("ann")
    assert (await ann.join(table, seat=1))["you"] == 1
    await watch(owner, table, until="match_started", timeout=10)
    await ann.leave(table)
    return owner, ann, table


async def test_the_seat_of_a_player_who_left_is_freed_when_the_match_ends(live: LiveServer) -> None:
    owner, ann, table = await _leave_during_match(live)
    ended = (await watch(owner, table, until="match_ended", timeout=30))[-1]
    info = (await owner.join(table, role="spectator"))["info"]  # answered after the match's last step
    assert info["status"] == "finished" and [o["seat"] for o in info["occupants"]] == [2]
    after = [f["event"] for f in event_frames(owner, table) if f["seq"] > ended["seq"]]
    assert after == [{"type": "left", "seat": 1}]  # right after match_ended (G-7)
    assert [f["event"]["reason"] for f in _events(owner, table, "sat_out")] == ["left"]  # sat out meanwhile (G-5)
    await owner.act(table, {"type": "rematch"})
    snap = await owner.join(table, role="spectator")
    assert snap["info"]["status"] == "waiting" and snap["info"]["taken"] == 1  # the rematch waits for a player (G-9)
    bob = await live.client("bob")
    assert (await bob.join(table, seat=1))["you"] == 1  # the seat is free for another player
    started = await watch(owner, table, until="match_started", timeout=10)
    seats = started[-1]["event"]["seats"]
    assert [(s["seat"], s.get("player")) for s in seats] == [(1, bob.player), (2, None)]
    assert ann.player not in {s.get("player") for s in seats}
    for c in (owner, ann, bob):
        await c.close()


async def test_a_player_who_comes_back_during_the_match_keeps_the_seat(live: LiveServer) -> None:
    """The owner pauses the match (G-8) so it cannot end while Ann leaves and comes back."""
    owner = await live.client("owner")
    table = await owner.create_table("loco_poker", seats=2, options=SHORT, bots=1)
    await owner.join(table, role="spectator")
    ann = await live.client("ann")
    await ann.join(table, seat=1)
    await watch(owner, table, until="match_started", timeout=10)
    await owner.act(table, {"type": "pause"})
    await ann.leave(table)
    snap = await ann.join(table)
    assert snap["you"] == 1  # back at the seat she left (G-5)
    await ann.act(table, {"type": "sit_in"})
    await owner.act(table, {"type": "resume"})
    remember_seat(ann, table, 1)  # (play answers the solo player's continue, G-4)
    await play(ann, table, "ann", timeout=30)
    await owner.act(table, {"type": "rematch"})
    started = await watch(owner, table, until="match_started", timeout=10)
    assert [s.get("player") for s in started[-1]["event"]["seats"]] == [ann.player, None]
    assert not _events(owner, table, "left")
    for c in (owner, ann):
        await c.close()


async def test_a_freed_seat_is_not_watched_through_its_old_players_other_connection(live: LiveServer) -> None:
    """Ann sits at seat 1 on two connections and leaves on one before the match:
    the seat is freed; Bob takes it, and Ann's other connection sees the match
    as a spectator, never Bob's cards."""
    owner = await live.client("owner")
    table = await owner.create_table("no_limit_holdem", seats=3, bots=1,
                                     options={"pause": 0, "bot_think": 0.2, "starting_stacks": 200})
    ann = await live.client("ann")
    other = await Client(live.url, record=True).connect()
    await other.hello("ann", token=ann.token)  # the same player on a second connection
    assert (await ann.join(table, seat=1))["you"] == 1
    assert (await other.join(table))["you"] == 1
    await ann.leave(table)
    bob = await live.client("bob")
    carl = await live.client("carl")
    assert (await bob.join(table, seat=1))["you"] == 1
    assert (await carl.join(table, seat=2))["you"] == 2  # the last seat: the match starts
    await watch(other, table, until="hand_start", timeout=10)
    await watch(bob, table, until="hand_start", timeout=10)
    mine = await bob.join(table)  # bob's own view: his hole cards
    hole = set(mine["state"]["hole"])
    assert len(hole) == 2
    seen = await other.join(table, role="spectator")
    assert seen["you"] is None and not hole & cards_in(seen["state"])
    assert not hole & cards_in(event_frames(other, table))  # no frame ever showed them
    for c in (owner, ann, other, bob, carl):
        await c.close()
