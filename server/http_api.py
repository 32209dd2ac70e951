"""HTTP endpoints: the lobby, hand histories, health, metrics, operators.

* ``GET /api/games``: the game catalogue (:func:`cardhall.server.catalogue.catalogue`:
  games, seats, options, bots; table options).
* ``GET /api/tables``: the lobby (JSON list of :meth:`TableMachine.lobby_entry`): the
  filters and order of its query, unlisted and deserted finished tables left out
  (:mod:`cardhall.server.lobby`).
* ``POST /api/tables``: create a table (body as the ``create_table`` message,
  at most ``max_frame`` bytes; ``Authorization: Bearer <player token>`` makes
  that player the owner). Tables are counted per client address
  (``max_tables_per_address``) and a table nobody owns thinks at least
  ``bot_think_floor``, unless the request carries the operator key in
  ``X-Operator-Key`` (a request carrying another key is refused as an
  operator endpoint's). A client gone before its body arrived is logged in one line.
* ``GET /api/tables/{id}``: one table's public info; an unlisted table's only with its
  invite in ``X-Table-Invite`` (else 404 ``unknown_table``, as for no such table; SPEC
  "Private tables", :mod:`cardhall.server.private_access`).
* ``GET /api/tables/{id}/hands``: hand histories of the table's finished
  matches (never of the match being played: G-2 keeps mucked cards hidden until
  the match ends). PHH text for the Hold'em games, JSON for the others,
  streamed a bounded batch of hands per chunk (``server/hands.py``). A private
  table's (open, or closed: its hands keep its lock) need what watching it needs:
  its invite when unlisted, its password (``X-Table-Password``) when spectators need it.
* ``GET /healthz``: 200 ``{"status": "ok", ...}``; 503 with ``"degraded"``
  while the store cannot be written (tables stalled) or ``"stopping"``.
  ``broken_tables`` counts the tables served here that broke: they are a
  table's fault, not the service's, so they leave the status ``ok``; its
  ``store`` map says which store, whether it is up, why not, how many tables
  are stalled and quarantined. ``GET /metrics`` (Prometheus).
* ``GET /api/ops/tables/{id}`` (full state, hidden cards included),
  ``POST /api/ops/tables/{id}/close`` and ``GET /api/cluster``: operator key
  in ``X-Operator-Key`` (compared in constant time), else 403
  ``not_operator``. A client address that sent :data:`OPERATOR_TRIES` wrong
  keys within :data:`OPERATOR_WINDOW` seconds (an :class:`~cardhall.server.ratelimit.AddressBudget`, in this
  process's memory) gets 429 ``rate_limited`` with ``Retry-After`` for every
  operator request, the right key included, until it may try again.

Errors are the JSON ``{"type": "error", "code", "message"}`` (SPEC "HTTP").
"""

from __future__ import annotations

import hmac
import logging
import math
import time
from typing import Any

import orjson
from redis.exceptions import RedisError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from cardhall.protocol.errors import ProtocolError
from cardhall.server.auth import identified
from cardhall.server.catalogue import catalogue
from cardhall.server.hall import Hall
from cardhall.server.hands import HandExports
from cardhall.server.lobby import Listed, LobbyQuery, from_info, lobby
from cardhall.server.private_access import TRY_EVERY, private_access
from cardhall.server.ratelimit import AddressBudget
from cardhall.server.store.base import StoreUnavailable
from cardhall.server.table.machine import TableMachine

log = logging.getLogger("cardhall.http")


def listed_here(machine: TableMachine) -> Listed:
    """A table served here as the lobby weighs it (:mod:`cardhall.server.lobby`)."""
    people = [o.player for o in machine.seats.values() if o.player is not None]
    owner = [machine.owner] if machine.owner is not None else []
    return Listed(machine.lobby_entry(), machine.subscribers.count, frozenset(people + owner))


_STATUS = {
    "unknown_table": 404, "unknown_game": 400, "bad_request": 400, "bad_options": 400, "malformed": 400,
    "unknown_token": 401, "auth_required": 401, "not_operator": 403, "bad_password": 403, "too_many_tables": 429, "rate_limited": 429, "frame_too_large": 413,
    "shutting_down": 503, "unavailable": 503,
}


def _json(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS), status, media_type="application/json")


def _error(exc: ProtocolError, status: int | None = None) -> Response:
    """An HTTP error: ``status`` (None: the code's) and the error frame without ``re`` (HTTP has no request ids)."""
    body = exc.frame()
    del body["re"]
    return _json(body, status or _STATUS.get(exc.code, 400))


#: wrong operator keys one client address may send per :data:`OPERATOR_WINDOW` (a token bucket
#: this deep, refilled at OPERATOR_TRIES / OPERATOR_WINDOW per second); past them its operator
#: requests are refused, so guessing the key goes at most this fast from each address
OPERATOR_TRIES = 5
#: seconds (see :data:`OPERATOR_TRIES`)
OPERATOR_WINDOW = 60.0


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, at most ``limit`` bytes (``Settings.max_frame``,
    as a websocket frame); raises ProtocolError ``frame_too_large`` past it
    (nothing more is read) and ClientDisconnect when the client goes away."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ProtocolError("frame_too_large", f"body of {declared} bytes; limit {limit}")
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ProtocolError("frame_too_large", f"body over {limit} bytes")
        parts.append(chunk)
    return b"".join(parts)


def routes(hall: Hall) -> list[Route]:
    """The HTTP routes bound to ``hall``."""

    games_body = orjson.dumps(catalogue())
    private = private_access(hall)  # private tables' invites and passwords (SPEC "Private tables")
    exports = HandExports(hall.store)
    failures = AddressBudget(OPERATOR_TRIES, OPERATOR_WINDOW)

    async def list_games(request: Request) -> Response:
        return Response(games_body, media_type="application/json")

    async def list_tables(request: Request) -> Response:
        try:
            query = LobbyQuery.parse(request.query_params)
        except ProtocolError as exc:
            return _error(exc)
        local = {t.id: listed_here(t.machine) for t in hall.tables.values()}
        try:
            infos = await hall.topology.infos()
        except (RedisError, OSError):
            return _json(lobby(local.values(), query))  # the cluster's lobby cannot be read: this node's tables
        out = [local.pop(tid) if tid in local else from_info(info) for tid, info in sorted(infos.items())]
        return _json(lobby(out + list(local.values()), query))

    async def create_table(request: Request) -> Response:
        address = request.client.host if request.client else ""
        exempt = "x-operator-key" in request.headers  # an operator's request: the right key, or refused
        if exempt and (refusal := not_operator(request)) is not None:
            return refusal
        try:
            try:
                body = orjson.loads(await read_body(request, hall.settings.max_frame))
            except orjson.JSONDecodeError:
                raise ProtocolError("malformed", "body is not JSON") from None
            if not isinstance(body, dict):
                raise ProtocolError("malformed", "body must be a JSON object")
            owner = None
            auth = request.headers.get("authorization", "")
            if auth.lower().startswith("bearer "):
                owner = (await hall.players.by_token(auth[7:].strip())).id
            if hall.settings.require_auth and not exempt and (owner is None or not identified(owner)):
                # SPEC "Identity": only identified players (or the operator) create tables on such a server
                raise ProtocolError("auth_required", "this server admits only players its operator identifies: "
                                    "send the resume token of a hello with auth as Authorization: Bearer")
            # the operator's creations are not counted per address and keep their bot_think (deploy/README.md)
            info = await hall.create(body, owner, address=None if exempt else address)
        except ClientDisconnect:  # the client went away mid-body: nothing to answer, nothing created
            log.info("POST /api/tables from %s: the client disconnected before its body arrived", address)
            return Response(status_code=400)
        except ProtocolError as exc:
            hall.metrics.error(exc.code)
            return _error(exc)
        return _json({"table": info["id"], "commitment": info["commitment"], "invite": info.get("invite"),
                      "info": info}, 201)

    async def table_info(table_id: str) -> Any:
        """A table's public info: from memory when it is here, else the
        topology's (a cluster's lobby). Raises ProtocolError ``unavailable``."""
        table = hall.tables.get(table_id)
        if table is not None:
            return table.machine.info()
        return await hall.topology.info(table_id)

    async def get_table(request: Request) -> Response:
        table_id = request.path_params["table"]
        try:
            info = await table_info(table_id)
            if info is not None:  # a private table's: its invite when it is unlisted (SPEC "HTTP")
                await private.http(await private.lock(table_id), request.headers, client(request), table_id, False)
        except ProtocolError as exc:
            return _refused(exc)
        if info is None:
            return _error(ProtocolError("unknown_table", f"no open table {table_id!r}"))
        return _json(info)

    async def hands(request: Request) -> Response:
        table_id = request.path_params["table"]
        try:
            info = await table_info(table_id)
            held = await private.lock(table_id) if info is not None else await stored_lock(table_id)
            await private.http(held, request.headers, client(request), table_id, True)
            export = await exports.open(table_id, info)  # only finished matches (G-2)
        except ProtocolError as exc:
            return _refused(exc)
        except StoreUnavailable:
            return _json(ProtocolError("unavailable", "the store cannot be read right now").frame(), 503)
        if export is None:
            return _error(ProtocolError("unknown_table", f"no table {table_id!r}"))
        return StreamingResponse(export.chunks, media_type=export.media)  # a batch of hands per chunk

    def _refused(exc: ProtocolError) -> Response:
        """A refusal of a table's endpoint: its code's status, 503 for ``unavailable``
        (a 429 with ``Retry-After`` for too many wrong passwords)."""
        if exc.code == "unavailable":
            return _json(exc.frame(), 503)
        hall.metrics.error(exc.code)
        refused = _error(exc)
        if exc.code == "rate_limited":
            refused.headers["Retry-After"] = str(int(TRY_EVERY))
        return refused

    def client(request: Request) -> str:
        return request.client.host if request.client else ""

    async def stored_lock(table_id: str) -> dict[str, Any] | None:
        """The lock a table no longer open left with its hands (each private table's hand keeps it)."""
        first = await hall.store.hands_range(table_id, 0, 1)
        held = first[0].get("lock") if first else None
        return held if isinstance(held, dict) else None

    async def healthz(request: Request) -> Response:
        status = "stopping" if not hall.accepting else "ok" if hall.store_up else "degraded"
        store = {**hall.store.describe(), "up": hall.store_up, "stalled_tables": len(hall.stalled),
                 "quarantined_tables": len(hall.quarantined), "rewrites": hall.watch.rewrites}
        if hall.store_error is not None:
            store["error"] = hall.store_error
        body = {"status": status, "tables": len(hall.tables), "broken_tables": hall.broken_tables(),
                "connections": len(hall.connections), "store": store, "recovery": hall.recovery}
        body.update(hall.topology.health())
        return _json(body, 200 if status == "ok" else 503)

    async def metrics(request: Request) -> Response:
        body, media = hall.metrics.render()
        return Response(body, media_type=media)

    def not_operator(request: Request) -> Response | None:
        """None when ``request`` carries the operator key; else its refusal
        (counted in the metrics): 429 ``rate_limited`` with ``Retry-After``
        (whole seconds) while its client address (the forwarded one behind a
        trusted proxy) is throttled, whatever key it carries; else 403
        ``not_operator``, a wrong key (one carried) counted against the address."""
        address = request.client.host if request.client else ""
        now = time.monotonic()
        wait = failures.wait(address, now)
        if wait > 0:
            hall.metrics.error("rate_limited")
            refused = _error(ProtocolError("rate_limited", f"too many wrong operator keys from this address: "
                                                           f"retry in {math.ceil(wait)} s"))
            refused.headers["Retry-After"] = str(math.ceil(wait))
            return refused
        key = hall.settings.operator_key
        given = request.headers.get("x-operator-key")
        if given is not None and key and hmac.compare_digest(given.encode(), key.encode()):
            return None
        hall.metrics.error("not_operator")
        if given is None:
            return _error(ProtocolError("not_operator", "this needs the operator key in X-Operator-Key"))
        failures.take(address, now)
        if failures.wait(address, now) > 0:  # one line when an address becomes throttled
            log.warning("%s: too many wrong operator keys (%d a %.0f s window): its operator requests are "
                        "refused for %.0f s", address, OPERATOR_TRIES, OPERATOR_WINDOW, failures.wait(address, now))
        return _error(ProtocolError("not_operator", "wrong operator key" if key else "this server has no operator key"))

    async def ops_table(request: Request) -> Response:
        if (refusal := not_operator(request)) is not None:
            return refusal
        table_id = request.path_params["table"]
        table = hall.tables.get(table_id)
        if table is not None:
            return ops_view(table)
        try:  # served elsewhere: its last checkpoint, its input log replayed
            view = await hall.topology.stored_view(table_id)
        except ProtocolError as exc:
            return _error(exc, 503)
        if view is not None:
            return _json(view)
        return _error(ProtocolError("unknown_table", f"no open table {table_id!r}"))

    async def ops_close(request: Request) -> Response:
        if (refusal := not_operator(request)) is not None:
            return refusal
        table_id = request.path_params["table"]
        try:
            await hall.topology.close(table_id, "operator")
        except ProtocolError as exc:
            return _error(exc)
        except (TimeoutError, RedisError, OSError):
            return _error(ProtocolError("unavailable", "the table's node did not answer; retry"), 503)
        return _json({"closing": table_id}, 202)

    async def cluster(request: Request) -> Response:
        if (refusal := not_operator(request)) is not None:
            return refusal
        try:
            return _json(await hall.topology.nodes())
        except ProtocolError as exc:
            return _error(exc, 503)

    def ops_view(table: Any) -> Response:
        """A table served here as the operator sees it; a state (or info) that
        cannot be shown (a broken table's) is null with its ``state_error``, the rest still shows."""
        view = {"status": table.machine.status, "mailbox": table.mailbox.qsize(),
                "subscribers": table.machine.subscribers.count, "node": node_id()}
        try:
            return _json({**view, "info": table.machine.info(), "state": table.to_data()})
        except Exception as exc:
            return _json({**view, "info": None, "state": None, "state_error": repr(exc)[:300]})

    def node_id() -> str | None:
        return hall.topology.node_id

    return [
        Route("/api/games", list_games, methods=["GET"]),
        Route("/api/tables", list_tables, methods=["GET"]),
        Route("/api/tables", create_table, methods=["POST"]),
        Route("/api/tables/{table}", get_table, methods=["GET"]),
        Route("/api/tables/{table}/hands", hands, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/api/ops/tables/{table}", ops_table, methods=["GET"]),
        Route("/api/ops/tables/{table}/close", ops_close, methods=["POST"]),
        Route("/api/cluster", cluster, methods=["GET"]),
    ]
