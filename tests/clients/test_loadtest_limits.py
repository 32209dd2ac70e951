"""``cardhall loadtest`` within a public server's default limits (deploy/README.md
"Limits for newcomers"): its defaults create few players, no more tables than
one address may and bots no faster than the floor; the operator key lifts
the table limit and the floor, and the figures say so. Either way the load
closes its tables when it ends: without the key each by its owner's
``close`` (SPEC "The host's controls"), with it through the operator
endpoint; the lobby is empty afterwards."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cardhall.clients.client import fetch_json
from cardhall.clients.commands.loadtest import report
from cardhall.clients.load.run import LoadSpec, run
from cardhall.server.config import Settings
from tests.fuzz.conftest import ServerThread

#: every limit at the service's default (the suite's TEST_SETTINGS lift them)
DEFAULTS = Settings(host="127.0.0.1", port=0, log_level="warning", operator_key="load-key")


@pytest.fixture(scope="module")
def server():
    srv = ServerThread(DEFAULTS).start()
    yield srv
    srv.stop()


def test_the_loadtest_defaults_stay_within_the_default_limits(server):
    out = run(LoadSpec(url=server.live.url, warmup=0.5, duration=1.5))  # every other field its default
    assert out["tables"] == 10 and out["connections"] == out["connections_opened"] == 40
    assert out["errors"] == {} and out["seq_gaps"] == 0
    assert out["bot_think_s"] == DEFAULTS.bot_think_floor and not out["operator_key"]
    players = server.call(lambda live: len(live.hall.players))
    assert players <= 3  # seat 1's player, seat 2's, and one for every spectator (the tables' owner too)
    assert out["tables_closed"] == 10 and fetch_json(server.live.http + "/api/tables") == []


def test_past_the_per_player_limit_the_load_makes_more_owners_and_closes_every_table():
    """A server without the per-address table limit (as ``cardhall bench server`` runs one) still
    has the per-player one: the load makes another owner, and closes every table with its own."""
    srv = ServerThread(replace(DEFAULTS, max_tables_per_address=0)).start()
    try:
        limit = DEFAULTS.max_tables_per_player
        out = run(LoadSpec(url=srv.live.url, tables=limit + 3, seats=3, players=1, spectators=0, warmup=0.2,
                           duration=0.5))
        assert out["tables"] == limit + 3 and out["errors"] == {} and not out["operator_key"]
        assert out["tables_closed"] == limit + 3 and fetch_json(srv.live.http + "/api/tables") == []
        assert srv.call(lambda live: len(live.hall.players)) == 3  # seat 1's player, the watcher, one more owner
    finally:
        srv.stop()


def test_the_operator_key_lifts_the_table_limit_and_the_think_floor(server):
    spec = LoadSpec(url=server.live.url, tables=DEFAULTS.max_tables_per_address + 5, seats=3, players=1,
                    spectators=0, think=0.0, warmup=0.3, duration=1.0, operator_key="load-key")
    out = run(spec)
    assert out["tables"] == DEFAULTS.max_tables_per_address + 5 and out["errors"] == {}
    assert out["bot_think_s"] == 0 and out["operator_key"]
    assert "operator key" in report(out)
    assert out["tables_closed"] == spec.tables and fetch_json(server.live.http + "/api/tables") == []
