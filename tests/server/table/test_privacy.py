"""Private tables in the machine, driven by hand (SPEC "Private tables"): who
may join an unlisted or password table with what its node checked, requests
for a seat with the owner's answers and the lapse on the table's own clock
(the default 120 s, never waited for), and all of it kept in the stored
state and given back by a replay of the input log."""

from __future__ import annotations

from typing import Any

import pytest

from cardhall.server.store.format import pack_entry, pack_state, unpack_entry, unpack_state
from cardhall.server.table.inputs import SeatRequestDue
from cardhall.server.table.machine import TableMachine
from cardhall.server.table.privacy import Privacy
from cardhall.server.table.replay import replay
from cardhall.server.table.subscribers import NOT_JOINED
from tests.server.table.harness import Bench, code

Data = dict[str, Any]

RECORD = {"kdf": "scrypt", "n": 2, "r": 1, "p": 1, "salt": "00", "hash": "00"}  # never derived here


def bench(options: Data, seats: int = 3, bots: int = 1) -> Bench:
    """A table of ``owner`` with ``options``; ``with_password``: a password record (its node checks it)."""
    password = RECORD if options.pop("with_password", False) else None
    b = Bench("loco_poker", seats=seats, bots=[None] * bots, options=options, owner="owner")
    b.m.privacy = Privacy("the-invite", password)
    return b


def types(b: Bench, since: int = 0) -> list[str]:
    return b.types(since)


def test_an_unlisted_table_needs_its_invite_for_anyone_but_its_owner() -> None:
    b = bench({"visibility": "unlisted"})
    refused = b.join("x", "stranger", role="spectator")
    assert code(refused) == "unknown_table" and refused["message"] == "no open table 't_test'"
    assert code(b.act("x", "stranger", {"type": "start"})) == "unknown_table"  # not not_joined
    assert code(b.leave("x", "stranger")) == "unknown_table"
    assert code(b.join("x", "stranger", role="player")) == "unknown_table"
    assert code(b.join("o", "owner", role="player")) == "join"
    assert code(b.join("x", "stranger", role="spectator", invited=True)) == "join"
    assert code(b.join("y", "stranger", role="spectator")) == "join"  # let in before: no invite needed again
    assert b.m.privacy.invited == {"stranger": None}


def test_a_password_guards_seats_and_with_the_option_watching_too() -> None:
    b = bench({"with_password": True})
    refused = b.join("x", "p1", role="player")
    assert code(refused) == "bad_password" and "password" in refused["message"]
    assert code(b.join("x", "p1", role="spectator")) == "join"
    assert code(b.join("x", "p1", role="player", password_ok=True)) == "join"
    assert b.m.seat_of("p1") == 1
    s = bench({"with_password": True, "password_spectators": True})
    assert code(s.join("y", "p2", role="spectator")) == "bad_password"
    assert code(s.join("y", "p2", role="spectator", password_ok=True)) == "join"
    assert code(s.join("y", "p2", role="player")) == "join"  # let in with the password before


def test_a_refused_join_changes_nothing() -> None:
    b = bench({"with_password": True}, seats=2, bots=1)
    assert code(b.join("o", "owner", role="player")) == "join"  # the last seat: the match starts
    before = b.m.to_data(b.mono)
    logged = b.m.logged
    assert code(b.join("x", "p1", role="player", password_ok=True)) == "match_running"
    assert b.m.privacy.unlocked == {} and b.m.logged == logged
    assert b.m.to_data(b.mono)["privacy"] == before["privacy"]


def test_a_request_for_a_seat_waits_for_the_owner_who_approves_it() -> None:
    b = bench({"approve_seats": True})
    assert code(b.join("o", "owner", role="player")) == "join"  # the owner sits down at once
    refused = b.join("x", "bob", role="player")
    assert code(refused) == "approval_required" and "ask" in refused["message"]
    answer = b.join("x", "bob", "Bob", role="player", ask=True, seat=2)
    assert answer.viewer is None and answer.player == "bob"
    snap = b.m.snapshot(None, "j", b.mono, player="bob")
    assert snap["pending"] is True and snap["you"] is None
    assert b.last("seat_requested").event.data == {"type": "seat_requested", "player": "bob", "name": "Bob"}
    assert b.timer is not None and isinstance(b.timer.due, SeatRequestDue)
    assert code(b.act("x", "bob", {"type": "approve", "player": "bob"})) == "not_owner"
    assert code(b.act("o", "owner", {"type": "approve", "player": "nobody"})) == "bad_request"
    assert code(b.act("o", "owner", {"type": "approve", "player": "bob"})) == "ok"
    approved = types(b).index("seat_approved")
    assert types(b)[approved:approved + 4] == ["seat_approved", "seated", "presence", "match_started"]
    assert b.last("seat_approved").event.data == {"type": "seat_approved", "player": "bob", "seat": 2}
    assert b.m.subscribers.viewer("x") == 2  # its connection watches as the seat now
    assert b.m.status == "running"  # the last seat taken: the match started (G-9)


def test_a_denied_player_is_refused_until_the_next_rematch() -> None:
    b = bench({"approve_seats": True})
    b.join("o", "owner", role="spectator")
    b.join("x", "carol", role="player", ask=True)
    assert code(b.act("o", "owner", {"type": "deny", "player": "carol"})) == "ok"
    assert b.last("seat_denied").event.data == {"type": "seat_denied", "player": "carol"}
    again = b.join("x", "carol", role="player", ask=True)
    assert code(again) == "seat_denied"
    assert b.m.subscribers.viewer("x") is None  # still watching as a spectator
    b.m.match += 1  # as a rematch does
    assert code(b.join("x", "carol", role="player", ask=True)) == "join"
    assert "carol" in b.m.privacy.requests


def test_a_request_lapses_after_120_seconds_on_the_tables_clock() -> None:
    b = bench({"approve_seats": True})
    b.join("x", "dan", role="player", ask=True)
    b.wait(60)
    b.join("y", "eve", role="player", ask=True)
    assert b.timer is not None and b.timer.at == pytest.approx(b.mono - 60 + 120)
    b.fire()
    assert b.last("seat_request_lapsed").event.data == {"type": "seat_request_lapsed", "player": "dan",
                                                       "reason": "timeout"}
    assert list(b.m.privacy.requests) == ["eve"]
    assert b.timer is not None and b.timer.at == pytest.approx(b.mono + 60)
    b.fire()
    assert b.m.privacy.requests == {} and b.timer is None


def test_a_leave_withdraws_a_request_and_a_match_start_ends_them_all() -> None:
    b = bench({"approve_seats": True}, seats=3, bots=1)
    b.join("x", "fay", role="player", ask=True)
    b.leave("x", "fay")
    assert b.last("seat_request_lapsed").event.data["reason"] == "left"
    b.join("y", "gus", role="player", ask=True)
    b.join("o", "owner", role="player")
    assert code(b.act("o", "owner", {"type": "start"})) == "ok"
    lapsed = [r for r in b.records if r.event.type == "seat_request_lapsed"]
    assert lapsed[-1].event.data == {"type": "seat_request_lapsed", "player": "gus", "reason": "match_started"}
    assert code(b.join("y", "gus", role="player", ask=True)) == "match_running"


def test_the_owners_snapshot_alone_shows_the_invite_and_no_view_shows_a_password() -> None:
    b = bench({"visibility": "unlisted", "with_password": True})
    assert b.m.snapshot(None, 1, b.mono, player="owner")["info"]["invite"] == "the-invite"
    other = b.m.snapshot(None, 1, b.mono, player="other")
    for shown in (other, b.m.info(), b.m.lobby_entry()):
        assert "the-invite" not in str(shown) and "salt" not in str(shown)
    assert other["info"]["password"] is True and b.m.lobby_entry()["password"] is True
    record = b.m.lobby_record()
    assert record["lock"]["unlisted"] is True and record["lock"]["password"] == RECORD
    assert "the-invite" not in str(record)  # other nodes keep its digest only


def test_privacy_survives_a_checkpoint_and_the_input_log_replays_it() -> None:
    b = bench({"approve_seats": True, "visibility": "unlisted", "with_password": True})
    b.m.verify_log = True
    b.join("o", "owner", role="spectator")
    full = unpack_state(pack_state(b.m.to_data(b.mono)))
    entries: list[Data] = []
    b.join("x", "hal", role="player", ask=True, invited=True, password_ok=True)
    entries += [unpack_entry(pack_entry(s.entry())) for s in b.out.log]
    b.join("y", "ida", role="player", ask=True, invited=True, password_ok=True)
    entries += [unpack_entry(pack_entry(s.entry())) for s in b.out.log]
    b.act("o", "owner", {"type": "deny", "player": "ida"})
    entries += [unpack_entry(pack_entry(s.entry())) for s in b.out.log]
    truth = b.m.to_data(b.mono)
    state, steps = replay(full, entries)
    assert steps == len(entries) == 3
    assert state["privacy"] == truth["privacy"]
    restored = TableMachine.from_data(state, b.now())
    assert list(restored.privacy.requests) == ["hal"] and restored.privacy.denied == {"ida": 1}
    assert restored.privacy.unlocked == {"hal": None, "ida": None}
    assert restored.subscribers.viewer("x") is NOT_JOINED  # a restored table starts with no subscribers
