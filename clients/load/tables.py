"""The load's tables: created over HTTP, and closed when the test ends, so a
load test leaves nothing in the server's lobby.

* With the operator key the tables are created with it (no owner; the
  per-address table limit and the bot think floor lifted) and closed through
  the operator endpoint (``POST /api/ops/tables/{id}/close``, SPEC "HTTP").
* Without it each table is created with an owner (``Authorization: Bearer``
  and a player's token, SPEC "HTTP"): the load's watcher first, and a new
  player whenever the server's per-player table limit refuses the current
  one; at the end every table is closed by its owner's ``close`` (SPEC "The
  host's controls": a ``join`` as a spectator, then ``act``). A table whose
  ownership passed to one of the load's seated players (its owner away for
  ``close_after``) is closed with that player's token; one owned by a player
  the load does not know stays open (counted as not closed).
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from cardhall.clients.client import Client, ServerError, http_base

if TYPE_CHECKING:
    from cardhall.clients.load.run import LoadSpec

#: tables closed at once by the owners' connections
CLOSE_AT_ONCE = 50


def refusal(status: int, body: str) -> ServerError:
    """The error for a table the server would not create (HTTP ``status``,
    ``body`` its answer): the server's error frame, with a hint for the
    per-address table limit (deploy/README.md, "Limits")."""
    try:
        frame = json.loads(body)
    except ValueError:
        frame = None
    if not isinstance(frame, dict) or not isinstance(frame.get("code"), str):
        frame = {"type": "error", "code": f"http_{status}", "message": body[:300]}
    if frame["code"] == "too_many_tables":
        frame = {**frame, "message": f"{frame.get('message', '')} (tables of earlier runs may still be open: "
                                     "--operator-key lifts the limit and closes the tables at the end)"}
    return ServerError(frame)


def _per_player(status: int, body: str) -> bool:
    """Is this refusal the per-player table limit (another owner may create more)?

    >>> _per_player(429, '{"code": "too_many_tables", "message": "at most 20 open tables per player"}')
    True
    >>> _per_player(429, '{"code": "too_many_tables", "message": "at most 20 open tables per client address"}')
    False
    """
    try:
        frame = json.loads(body)
    except ValueError:
        return False
    return (status == 429 and isinstance(frame, dict) and frame.get("code") == "too_many_tables"
            and str(frame.get("message", "")).endswith("per player"))


def new_players(spec: LoadSpec, names: list[str]) -> list[str]:
    """The tokens of ``len(names)`` new players (``hello`` without a token, one
    connection), named ``names``."""
    async def make() -> list[str]:
        client = await Client(spec.url, codec=spec.codec).connect()
        try:
            tokens = []
            for name in names:
                client.token = None  # each hello without a token: a new player
                tokens.append((await client.hello(name))["token"])
            return tokens
        finally:
            await client.close()
    return asyncio.run(make())


def create_tables(spec: LoadSpec, out: list[str], owner: str | None = None,
                  chosen: dict[str, Any] | None = None) -> list[str]:
    """Create ``spec.tables`` tables over HTTP, appending each id to ``out``
    as it is made (so a refusal midway leaves the ones made to close): with the
    operator key when there is one, else owned by ``owner`` (a player's token;
    None: no owner) and then by new players as the server's per-player limit
    asks (:func:`new_players`). Returns the tokens of every owner used.
    ``chosen``, when given, gets ``bot_think``: the server's choice for the
    last table (seconds; raised to its floor). Raises :class:`ServerError`
    (:func:`refusal`) when the server refuses a table."""
    import httpx

    bots = spec.seats - spec.players
    options = {"pause": 0, "bot_think": spec.think, "close_after": 3600, **spec.table_options}
    if spec.players == 0:
        options.setdefault("auto_rematch", True)
    body = {"game": spec.game, "seats": spec.seats, "bots": [spec.bot] * bots, "options": options}
    owners = [owner] if owner is not None and not spec.operator_key else []
    headers = {"X-Operator-Key": spec.operator_key} if spec.operator_key else {}
    with httpx.Client(base_url=http_base(spec.url), timeout=30, headers=headers) as http:
        while len(out) < spec.tables:
            auth = {"Authorization": f"Bearer {owners[-1]}"} if owners else {}
            r = http.post("/api/tables", json=body, headers=auth)
            if r.status_code != 201 and owners and _per_player(r.status_code, r.text):
                owners += new_players(spec, [f"load owner {len(owners) + 1}"])
                continue
            if r.status_code != 201:
                raise refusal(r.status_code, r.text)
            out.append(r.json()["table"])
            if chosen is not None:
                chosen["bot_think"] = r.json()["info"]["options"].get("bot_think")
    return owners


def close_tables(spec: LoadSpec, tables: list[str]) -> int:
    """Close ``tables`` with the operator key; returns how many were closed."""
    import httpx

    closed = 0
    with httpx.Client(base_url=http_base(spec.url), timeout=30,
                      headers={"X-Operator-Key": spec.operator_key or ""}) as http:
        for table in tables:
            if http.post(f"/api/ops/tables/{table}/close").status_code == 202:
                closed += 1
    return closed


def close_own_tables(spec: LoadSpec, tables: list[str], tokens: list[str]) -> int:
    """Close ``tables`` with their owners' ``close``, each owner one of the
    players of ``tokens`` (the owners and the load's players); returns how
    many were closed (a table whose owner is not among them, or that is
    gone or broken, is not)."""
    if not tables:
        return 0

    async def close_all() -> int:
        clients: dict[str, Client] = {}
        try:
            for token in dict.fromkeys(tokens):
                client = await Client(spec.url, codec=spec.codec).connect()
                clients[(await client.hello("load owner", token=token))["player"]] = client
            first = next(iter(clients.values()))

            async def close(table: str) -> bool:
                try:
                    owner = clients.get((await first.join(table, role="spectator"))["info"]["owner"])
                    await first.leave(table)
                    if owner is None:
                        return False
                    await owner.join(table, role="spectator")
                    await owner.act(table, {"type": "close"})
                    return True
                except (ServerError, TimeoutError, OSError):  # OSError: a connection lost (ConnectionError)
                    return False
            closed = 0
            for i in range(0, len(tables), CLOSE_AT_ONCE):
                closed += sum(await asyncio.gather(*(close(t) for t in tables[i:i + CLOSE_AT_ONCE])))
            return closed
        finally:
            for client in clients.values():
                await client.close()
    return asyncio.run(close_all())
