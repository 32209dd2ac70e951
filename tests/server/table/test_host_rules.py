"""The host's controls as rules of the table machine (SPEC "The host's
controls", :mod:`cardhall.server.table.host_controls`): ``close``, ``kick``,
``ban``, ``transfer`` and an absent owner's table passing on, in every game
where the game matters, driven by hand at a fake time; and a table that used
them replays to exactly the state it had (``server/STORAGE.md``, "The input log")."""

from __future__ import annotations

from typing import Any

import pytest

from cardhall.server.table.inputs import REJOIN, Act, Join, Now, OwnerAway
from cardhall.server.table.machine import TableMachine
from cardhall.server.table.replay import replay
from tests.games import GAMES, quick
from tests.server.table.harness import Bench, code, play_out, two_players
from tests.server.table.test_replay import Recording, _table

Data = dict[str, Any]
OWNER = "p_owner"


def _owned(game: str = "loco_poker") -> Bench:
    """:func:`two_players` (ann seat 1, bob seat 2, running a short match) with the owner watching as "o"."""
    bench = two_players(game, quick(game))
    assert code(bench.join("o", OWNER)) == "join"
    return bench


def _control(bench: Bench, action: Data, sub: str = "o", player: str = OWNER) -> list[tuple[Any, Data]]:
    """The owner's control ``action`` in a step of its own: every reply of that step."""
    before = len(bench.replies)
    bench.step(Act(sub, player, "c", action))
    return bench.replies[before:]


def _play_out(bench: Bench, people: dict[int, tuple[str, str]], stop: Any = None) -> None:
    """:func:`play_out` for the seats of ``people`` (seat -> subscriber, player)
    still theirs; every other seat's turn goes by the timer (a kicked seat's:
    the timeout action, G-3)."""
    for _ in range(20_000):
        m = bench.m
        if stop(m) if stop is not None else m.status == "finished":
            return
        occ = m.seats.get(m.turn_seat) if m.turn_seat is not None else None
        if m.turn_kind in ("human", "continue") and m.turn_seat in people and occ is not None and not occ.sitting_out:
            sub, player = people[m.turn_seat]
            legal = {a["type"] for a in m.turn_legal or []}
            kind = "continue" if m.turn_kind == "continue" else next((k for k in ("all_in", "call") if k in legal), None)
            action = {"type": kind} if kind is not None else m.engine.timeout_action(m.turn_seat)
            assert code(bench.act(sub, player, action, turn=m.turn_id)) == "ok"
        else:
            bench.fire()
    raise AssertionError("the match never ended")


def _answer(replies: list[tuple[Any, Data]], sub: str = "o") -> str:
    """The code (or ``ok``) of the reply to ``sub``'s control."""
    frames = [frame for key, frame in replies if key == sub]
    assert len(frames) == 1, replies
    return code(frames[0])


@pytest.mark.parametrize("game", GAMES)
def test_a_kicked_seat_sits_out_until_the_match_ends_and_is_then_freed(game):
    bench = _owned(game)
    start = bench.m.seq
    assert _answer(_control(bench, {"type": "kick", "player": "bob"})) == "ok"
    kicked = [r.event.data for r in bench.records if r.seq > start]
    assert kicked[0] == {"type": "kicked", "player": "bob", "seat": 2}
    assert {"type": "sat_out", "seat": 2, "reason": "left"} in kicked
    assert {"type": "presence", "seat": 2, "connected": False} in kicked
    assert bench.m.subscribers.viewer("b") is None  # a spectator at once
    assert bench.m.seats[2].sitting_out and bench.m.seats[2].player == "bob"
    assert code(bench.join("b", "bob", role="player")) == "kicked"
    assert code(bench.join("b2", "bob", role="player", seat=2)) == "kicked"
    assert code(bench.act("b", "bob", {"type": "sit_in"})) == "not_a_player"
    watching = bench.join("b2", "bob")  # may watch
    assert code(watching) == "join" and watching.viewer is None
    bench.disconnect("b")
    bench.step(Join("b", "bob", "bob", REJOIN, role="player"))  # a relayed connection resumed by its node
    assert bench.joins[-1].sub == "b" and bench.joins[-1].viewer is None and bench.m.subscribers.viewer("b") is None
    _play_out(bench, {1: ("a", "ann")})  # bob's turns go with the timeout action (G-3), at once
    ended = bench.last("match_ended").seq
    assert [r.event.data for r in bench.records if r.seq > ended] == [{"type": "left", "seat": 2}]
    assert 2 not in bench.m.seats and bench.m.kicked == {}
    assert bench.m.subscribers.viewer("b") is None and bench.m.subscribers.viewer("b2") is None
    assert code(bench.act("a", "ann", {"type": "rematch"})) == "ok"
    assert code(bench.join("c", "carl", role="player", seat=2)) == "join"  # the next occupant
    assert bench.m.status == "running" and bench.m.seats[2].player == "carl"
    assert {k: v for k, v in bench.m.subscribers.items() if v is not None} == {"a": 1, "c": 2}


def test_a_kick_between_matches_frees_the_seat_and_bars_the_next_match():
    bench = Bench("loco_poker", seats=3, bots=["random"], options={"points_to_win": 1})
    bench.join("o", OWNER)
    bench.join("a", "ann", role="player", seat=1)
    bench.join("b", "bob", role="player", seat=2)  # the last seat: the match starts
    play_out(bench)
    assert bench.m.status == "finished"
    assert _answer(_control(bench, {"type": "kick", "player": "bob"})) == "ok"
    assert bench.types(bench.last("kicked").seq - 1)[:2] == ["kicked", "left"] and 2 not in bench.m.seats
    assert code(bench.join("b", "bob", role="player")) == "kicked"  # not in the next match (2)
    assert code(bench.act("a", "ann", {"type": "rematch"})) == "ok"
    assert code(bench.join("b", "bob", role="player")) == "kicked"
    assert code(bench.act("o", OWNER, {"type": "start"})) == "ok"
    _play_out(bench, {1: ("a", "ann")})
    assert code(bench.join("b", "bob", role="player")) == "join"  # match 2 is over: bob sits again


def test_a_kick_names_someone_at_the_table_and_only_the_owner_kicks():
    bench = _owned()
    assert _answer(_control(bench, {"type": "kick", "player": "nobody"})) == "bad_state"
    assert _answer(_control(bench, {"type": "kick"})) == "bad_request"
    assert _answer(_control(bench, {"type": "kick", "player": 7})) == "bad_request"
    assert _answer(_control(bench, {"type": "kick", "player": OWNER})) == "bad_request"
    for kind in ("kick", "ban", "transfer", "close"):
        assert _answer(_control(bench, {"type": kind, "player": "bob"}, "a", "ann"), "a") == "not_owner"
    bench.join("w", "wes")
    assert _answer(_control(bench, {"type": "kick", "player": "wes"})) == "ok"  # a spectator: no seat
    assert bench.last("kicked").event.data == {"type": "kicked", "player": "wes", "seat": None}
    assert code(bench.join("w", "wes", role="player", seat=2)) == "kicked"


def test_a_ban_unsubscribes_every_connection_after_its_last_frames_and_refuses_every_join():
    bench = _owned("no_limit_holdem")
    bench.join("b2", "bob")  # a second connection of bob's, as a spectator
    before = bench.m.seq
    replies = _control(bench, {"type": "ban", "player": "bob"})
    assert _answer(replies) == "ok"
    assert next(r for r in bench.records if r.seq == before + 1).event.data == {"type": "banned", "player": "bob"}
    for sub in ("b", "b2"):  # its last frames: the step's events up to banned, as a spectator sees them
        frames = [frame for key, frame in replies if key == sub]
        assert [(f["type"], f["seq"], f["event"]) for f in frames] == [("event", before + 1, {"type": "banned", "player": "bob"})]
        assert sub not in bench.m.subscribers and bench.effects.members[sub] is False
    assert bench.m.seats[2].sitting_out and "bob" in bench.m.banned
    for role in ("spectator", "player"):
        assert code(bench.join("b", "bob", role=role)) == "banned"
        assert code(bench.join("b3", "bob", "Bobby Tables", role=role)) == "banned"  # another name, another connection
    assert _answer(_control(bench, {"type": "ban", "player": "bob"})) == "bad_state"
    _play_out(bench, {1: ("a", "ann")})
    assert 2 not in bench.m.seats  # freed at the match's end (G-7)


def test_a_join_of_the_banned_player_in_the_same_step_is_refused():
    bench = _owned()
    before = len(bench.replies)
    bench.step(Join("b9", "bob", "bob", "j9"), Act("o", OWNER, "c", {"type": "ban", "player": "bob"}))
    frames = [frame for key, frame in bench.replies[before:] if key == "b9"]
    assert frames == [{"type": "error", "code": "banned", "re": "j9", "message": frames[0]["message"]}]
    assert not any(j.sub == "b9" for j in bench.joins)


def test_transfer_to_a_seated_person_and_the_new_owner_alone_controls():
    bench = _owned()
    bench.join("w", "wes")
    assert _answer(_control(bench, {"type": "transfer", "player": "wes"})) == "bad_state"  # a spectator
    assert _answer(_control(bench, {"type": "transfer", "player": "bot 3"})) == "bad_state"  # no such person
    assert _answer(_control(bench, {"type": "transfer", "player": "ann"})) == "ok"
    assert bench.last("owner_changed").event.data == {"type": "owner_changed", "owner": "ann", "reason": "transfer"}
    assert bench.m.owner == "ann" and bench.m.info()["owner"] == "ann"
    assert _answer(_control(bench, {"type": "pause"})) == "not_owner"
    assert _answer(_control(bench, {"type": "pause"}, "a", "ann"), "a") == "ok"
    assert _answer(_control(bench, {"type": "close"})) == "not_owner"
    assert _answer(_control(bench, {"type": "close"}, "a", "ann"), "a") == "ok"
    assert bench.m.status == "closed" and bench.last("closed").event.data == {"type": "closed", "reason": "owner"}


def test_an_absent_owners_table_passes_to_the_person_seated_longest():
    bench = Bench("loco_poker", seats=3, bots=["random"], options={"close_after": 30})
    bench.join("o", OWNER)
    bench.join("b", "bob", role="player", seat=2)  # seated first
    bench.join("a", "ann", role="player", seat=1)
    m = bench.m
    assert m.owner_away_since is None and not m.sweep_due(bench.mono, bench.now().wall)
    bench.disconnect("o")
    assert m.owner_away_since == bench.now().wall
    bench.wait(29)
    assert not m.sweep_due(bench.mono, bench.now().wall)
    bench.join("o", OWNER)  # back in time: the absence ends
    bench.disconnect("o")
    bench.wait(29)
    assert not m.sweep_due(bench.mono, bench.now().wall)
    bench.disconnect("b")  # bob, seated longest, is not connected: ann is the heir
    bench.wait(1)
    assert m.sweep_due(bench.mono, bench.now().wall) == [OwnerAway()]
    bench.step(OwnerAway())
    assert bench.last("owner_changed").event.data == {"type": "owner_changed", "owner": "ann", "reason": "absent"}
    assert m.owner == "ann" and m.owner_away_since is None
    bench.step(OwnerAway())  # a sweep that came late changes nothing
    assert bench.types().count("owner_changed") == 1


def test_no_pass_while_nobody_else_is_connected_and_a_restored_table_counts_from_its_first_join():
    bench = Bench("loco_poker", seats=3, bots=["random"], options={"close_after": 30})
    bench.join("o", OWNER)
    bench.join("a", "ann", role="player", seat=1)
    bench.disconnect("a")
    bench.disconnect("o")
    bench.wait(100)  # the owner is away, but nobody else plays either
    assert not bench.m.sweep_due(bench.mono, bench.now().wall)
    bench.step(OwnerAway())
    assert bench.m.owner == OWNER and "owner_changed" not in bench.types()
    bench.join("o", OWNER)
    restored = TableMachine.from_data(bench.m.to_data(bench.mono), Now(bench.now().wall, 5.0))
    assert restored.owner_away_since is None  # stored while the owner watched; nobody watches a restored table
    wall = bench.now().wall + 1
    restored.step([Join("a", "ann", "ann", "j", role="player")], Now(wall, 6.0))
    assert restored.owner_away_since == wall and not restored.sweep_due(6.0, wall + 29)
    assert restored.sweep_due(6.0, wall + 30) == [OwnerAway()]
    restored.step([OwnerAway()], Now(wall + 30, 36.0))
    assert restored.owner == "ann"


def test_a_table_that_used_the_host_controls_replays_to_the_state_it_had():
    bench = Recording("no_limit_holdem", 3, [None], {"pause": 0.5, "bot_think": 0.2, "close_after": 5,
                                                      "starting_stacks": 100})
    owner = bench.m.owner
    bench.join("o", owner)
    bench.join("b", "bob", role="player", seat=2)
    bench.join("c", "carl", role="player", seat=1)
    bench.join("w", "wes")
    for _ in range(3):
        bench.fire()
    bench.step(Act("o", owner, "k", {"type": "kick", "player": "carl"}))
    bench.step(Act("o", owner, "x", {"type": "ban", "player": "wes"}))
    bench.disconnect("o")
    bench.wait(6)
    bench.step(OwnerAway())
    assert bench.m.owner == "bob"
    bench.step(Act("b", "bob", "t", {"type": "ban", "player": "carl"}))
    _play_out(bench, {2: ("b", "bob")})
    assert bench.m.kicked == {} and bench.m.banned == {"wes", "carl"}
    points = sorted(bench.truth)
    for k in points[::3] + [points[-1]]:
        full = max((f for f in bench.fulls if f["log"] <= k), key=lambda f: f["log"])
        data, _ = replay(full, [e for e in bench.entries if e["n"] <= k])
        assert _table(data) == bench.truth[k], k
    restored = TableMachine.from_data(bench.m.to_data(bench.mono), bench.now())
    assert (restored.owner, restored.banned, restored.kicked) == ("bob", {"wes", "carl"}, {})


def test_a_kick_ends_the_players_request_for_a_seat():
    bench = Bench("loco_poker", seats=3, bots=["random"], options={"approve_seats": True})
    bench.join("o", OWNER)
    assert code(bench.join("b", "bob", role="player", ask=True)) == "join"
    assert "bob" in bench.m.privacy.requests
    assert _answer(_control(bench, {"type": "kick", "player": "bob"})) == "ok"
    assert bench.types(bench.last("kicked").seq - 1) == ["kicked", "seat_request_lapsed"]
    assert bench.last("seat_request_lapsed").event.data == {"type": "seat_request_lapsed", "player": "bob", "reason": "left"}
    assert _answer(_control(bench, {"type": "approve", "player": "bob"})) == "bad_request"  # nothing to approve
    assert code(bench.join("b", "bob", role="player", ask=True)) == "kicked"
    assert bench.m.seat_of("bob") is None
