"""The input log through the service (``server/STORAGE.md``, "The input log"):
between whole states a table stores its steps, a whole state replaces them,
and an input the log cannot hold makes that checkpoint a whole state instead
of breaking the table."""

from __future__ import annotations

from dataclasses import replace

from cardhall.server.store.memory import MemoryStore
from tests.conftest import until
from tests.server.conftest import TEST_SETTINGS, running_server

SETTINGS = replace(TEST_SETTINGS, full_state_every=1000)  # whole states only at hands' ends here


async def _two_players(srv):
    ann, bob = await srv.client("ann", codec="json"), await srv.client("bob")
    table = await ann.create_table("no_limit_holdem", seats=2, options={"pause": 0, "action_clock": 30})
    await ann.join(table, role="player", seat=1)
    await bob.join(table, role="player", seat=2)
    return ann, bob, table, srv.hall.tables[table]


async def test_steps_are_logged_between_whole_states_and_replay_to_the_table():
    store = MemoryStore(keep_states=True)
    async with running_server(SETTINGS, store) as srv:
        ann, bob, table, t = await _two_players(srv)
        players = {1: ann, 2: bob}
        await until(lambda: t.machine.turn_kind == "human", 30)
        acted = 0
        while acted < 2:  # two calls/checks: no hand ends (heads-up preflop call, then a check)
            await until(lambda: t.machine.turn_kind == "human" and t.quiet, 30)
            legal = {a["type"] for a in t.machine.turn_legal}
            kind = "check" if "check" in legal else "call"
            assert (await players[t.machine.turn_seat].act(table, {"type": kind}, turn=t.machine.turn_id))["type"] == "ok"
            acted += 1
        await until(lambda: t.quiet, 30)
        assert store.log_length(table) >= 2, "the actions went to the log, not as whole states"
        live = t.to_data()
        stored = store.state(table)  # the last whole state with the log replayed
        for data in (live, stored):
            data.pop("replay")
            data["turn"] = {k: v for k, v in data["turn"].items() if k not in ("clock", "bank")}
        assert stored == live


async def test_an_input_the_log_cannot_hold_is_written_as_a_whole_state():
    """A JSON client may nest data 1,020 deep in an action's unused field (the
    JSON decoder allows it); the log entry holding it packs but msgpack's
    reader cannot read it back, so that checkpoint writes the whole state:
    the table and its viewers go on, and the store holds no log it cannot read."""
    store = MemoryStore(keep_states=True)
    async with running_server(SETTINGS, store) as srv:
        ann, bob, table, t = await _two_players(srv)
        await until(lambda: t.machine.turn_kind == "human" and t.quiet, 30)
        if t.machine.turn_seat != 1:  # the JSON client (seat 1) is to be the one acting: bob calls first
            legal = {a["type"] for a in t.machine.turn_legal}
            await bob.act(table, {"type": "call" if "call" in legal else "check"}, turn=t.machine.turn_id)
            await until(lambda: t.machine.turn_kind == "human" and t.machine.turn_seat == 1 and t.quiet, 30)
        legal = {a["type"] for a in t.machine.turn_legal}
        kind = "check" if "check" in legal else "call"
        turn, depth = t.machine.turn_id, 1020  # the JSON decoder takes 1,024 levels; the log entry adds 5
        await ann.send_raw(f'{{"type": "act", "id": 77, "table": "{table}", "turn": {turn}, '
                           f'"action": {{"type": "{kind}", "note": {"[" * depth}{"]" * depth}}}}}')
        await until(lambda: t.machine.turn_id != turn, 30)  # applied
        await until(lambda: t.quiet, 30)
        assert t.machine.status == "running" and not t.unwritable
        assert store.log_length(table) == 0, "the step that could not be logged was written as a whole state"
        assert store.state(table)["seq"] == t.machine.seq
