"""Private tables across a cluster: two nodes on one Redis (SPEC "Private
tables", "HTTP": every node answers the same for every table). A table held
by node a is checked on node b before a join leaves b: an unlisted one is in
neither node's lobby, unknown there without its invite and joined with it;
a wrong password is refused there; its HTTP endpoints need the same on b;
its secrets are never in b's answers nor in the cluster's lobby as served."""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest

from cardhall.clients.client import ServerError
from tests.server.conftest import TEST_SETTINGS, RedisServer, running_server
from tests.server.test_private_tables import create, join, received, refused

pytestmark = pytest.mark.redis


async def test_an_unlisted_table_with_a_password_on_another_node(redis_server: RedisServer) -> None:
    base = replace(TEST_SETTINGS, redis_url=redis_server.url, redis_prefix="private", placement="local")
    async with running_server(replace(base, node_id="a")) as a, running_server(replace(base, node_id="b")) as b:
        ann = await a.client("ann")
        created = await create(ann, {"visibility": "unlisted", "password": "sesame", "approve_seats": True})
        table, invite = created["table"], created["invite"]
        public = await ann.create_table("loco_poker", seats=3, bots=1, options={"pause": 0, "bot_think": 0})
        assert table in a.hall.tables and table not in b.hall.tables
        await join(ann, table, "spectator")
        for node in (a, b):
            async with httpx.AsyncClient(base_url=node.http) as http:
                listed = (await http.get("/api/tables")).text
                assert public in listed and table not in listed and "salt" not in listed
                assert (await http.get(f"/api/tables/{table}")).status_code == 404
                info = await http.get(f"/api/tables/{table}", headers={"X-Table-Invite": invite})
                assert info.status_code == 200 and info.json()["password"] is True
                assert "lock" not in info.json() and invite not in info.text and "salt" not in info.text
        record = await b.hall.topology.node.registry.info(table)  # the cluster's lobby as stored
        assert record["lock"]["unlisted"] is True and record["lock"]["password"]["kdf"] == "scrypt"
        assert invite not in repr(record) and "sesame" not in repr(record)
        bob = await b.client("bob", codec="json")
        missing = await refused(join(bob, "t_ffffffffffff", "spectator"))
        error = await refused(join(bob, table, "spectator"))
        assert (error.code, error.message) == ("unknown_table", missing.message.replace("t_ffffffffffff", table))
        assert (await refused(join(bob, table, invite=invite, password="wrong", ask=True))).code == "bad_password"
        waiting = await join(bob, table, invite=invite, password="sesame", ask=True)
        assert waiting["pending"] is True and waiting["you"] is None
        asked = await ann.next_event(table, where=lambda f: f["event"]["type"] == "seat_requested")
        assert asked["event"]["player"] == bob.player
        await ann.act(table, {"type": "approve", "player": bob.player})
        await bob.next_event(table, where=lambda f: f["event"]["type"] == "seated")
        assert (await join(bob, table))["you"] == 1  # on node b, seated at node a's table
        assert "sesame" not in received(ann, bob) and invite not in received(bob)
        with pytest.raises(ServerError):
            await join(await b.client("eve"), table, invite=invite, role="spectator", password="x" * 65)
