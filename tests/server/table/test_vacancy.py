"""Freeing seats (server/table/vacancy.py): a player who left a running match
(G-5) loses the seat when it ends (G-7), also across a store round trip; one
who came back keeps it; a freed seat's other subscribers become spectators."""

from __future__ import annotations

from cardhall.server.store.format import pack_state, unpack_state
from cardhall.server.table.inputs import Now, Rearm
from cardhall.server.table.machine import TableMachine
from tests.server.table.harness import Bench, Seeds, code, play_out, two_players


def test_the_seat_of_a_player_who_left_is_freed_at_the_match_end_even_after_a_restore_G5_G7():
    bench = two_players(options={"points_to_win": 1})
    assert code(bench.leave("b", "bob")) == "ok"
    assert bench.m.seats[2].left and bench.m.seats[2].sitting_out and 2 in bench.m.seats  # kept meanwhile (G-5)
    data = bench.m.to_data(bench.mono)
    assert [o["left"] for o in data["occupants"]] == [False, True]
    bench.m = TableMachine.from_data(unpack_state(pack_state(data)), Now(bench.wall + bench.mono, bench.mono),
                                     entropy=Seeds())
    assert bench.m.seats[2].left
    bench.step(Rearm())  # the restored table asks for its timer again
    bench.join("a", "ann", role="player")  # (subscribers are not stored: ann reconnects)
    play_out(bench)
    types = [r.event.type for r in bench.records]
    assert types[types.index("match_ended") + 1:] == ["left"]
    assert bench.last("left").event.data == {"type": "left", "seat": 2} and list(bench.m.seats) == [1]
    assert code(bench.act("a", "ann", {"type": "rematch"})) == "ok"
    assert bench.m.status == "waiting" and list(bench.m.seats) == [1]  # waits for a player (G-9)


def test_a_player_back_in_the_match_keeps_the_seat_G5_G7():
    bench = two_players(options={"points_to_win": 1})
    bench.leave("b", "bob")
    bench.join("b", "bob", role="player")
    assert not bench.m.seats[2].left
    play_out(bench)
    assert list(bench.m.seats) == [1, 2] and "left" not in bench.types()


def test_a_freed_seat_leaves_no_subscriber_watching_as_it():
    bench = Bench(seats=3)
    bench.join("a1", "ann", role="player", seat=1)
    bench.join("a2", "ann", role="player")  # the same player on another connection
    assert code(bench.leave("a1", "ann")) == "ok"
    assert 1 not in bench.m.seats
    assert bench.m.subscribers.viewer("a2") is None and bench.m.presence(1) == 0
