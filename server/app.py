"""The Starlette application and the uvicorn server that runs it.

``create_app(settings, store)`` builds the app; ``run(settings)`` serves it
(``cardhall serve``). On SIGTERM or SIGINT the server stops accepting
connections, lets every table finish the inputs already queued and commit,
then closes each websocket with 1001 (going away) so clients reconnect, and
only then lets uvicorn finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import gc
import logging
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from uvicorn.config import LOGGING_CONFIG

import cardhall.clients
from cardhall.server.config import Settings
from cardhall.server.gate import Gate, GatedConfig
from cardhall.server.hall import Hall
from cardhall.server.http_api import routes
from cardhall.server.http_protocol import CardhallHttpProtocol
from cardhall.server.rules import rules_routes
from cardhall.server.session import WebSocketEndpoint
from cardhall.server.store.base import Store
from cardhall.server.web import renderer_routes
from cardhall.server.wiring import limits_for, make_store, topology_for
from cardhall.server.ws_protocol import CardhallWebSocketProtocol

log = logging.getLogger("cardhall")


def create_app(settings: Settings | None = None, store: Store | None = None) -> Starlette:
    """The service as an ASGI app; ``app.state.hall`` is its :class:`Hall`."""
    settings = settings or Settings()
    hall = Hall(settings, store if store is not None else make_store(settings), topology_for, limits_for)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await hall.start()
        yield
        await hall.shutdown()

    endpoint = WebSocketEndpoint(hall)
    app = Starlette(routes=[*routes(hall), WebSocketRoute("/ws", endpoint), *web_routes(), *renderer_routes(),
                            *rules_routes()], lifespan=lifespan)
    app.state.hall = hall
    app.state.ws_endpoint = endpoint
    return app


class WebSocketFirst:
    """ASGI app in front of the Starlette app: a websocket at ``/ws`` goes
    straight to the endpoint, everything else (HTTP, lifespan) to Starlette.
    Starlette's middleware stack adds nothing a raw websocket endpoint uses, and
    its suspended frames stayed alive for each connection's whole life (~3 KB
    of the ~30 KB an idle connection costs; docs/LOAD.md)."""

    def __init__(self, app: Starlette) -> None:
        self.app = app
        self.ws = app.state.ws_endpoint
        self.state = app.state

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "websocket" and scope["path"] == "/ws":
            await self.ws(scope, receive, send)
        else:
            await self.app(scope, receive, send)


def web_routes() -> list[Route | Mount]:
    """The browser client (``clients/web``, package data): ``/`` is its page, ``/web/...`` its files."""
    # the real folder (an editable install links each file: StaticFiles serves
    # only files inside the folder it is given, links resolved)
    folder = Path(cardhall.clients.__file__).resolve().parent / "web"
    web = StaticFiles(directory=folder)

    async def index(request: Any) -> Response:
        return FileResponse(folder / "index.html")

    return [Route("/", index, methods=["GET"]), Mount("/web", web, name="web")]


class CardhallServer(uvicorn.Server):
    """uvicorn's server with the hall's shutdown first (close code 1001, not uvicorn's 1012)."""

    def __init__(self, config: uvicorn.Config, hall: Hall) -> None:
        super().__init__(config)
        self.hall = hall
        hall.should_stop = lambda: self.should_exit  # SIGTERM while waiting for Redis at start

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        with contextlib.suppress(Exception):
            await self.hall.shutdown()
        await super().shutdown(sockets)


def uvicorn_config(app: Starlette, settings: Settings, **extra: Any) -> uvicorn.Config:
    """The uvicorn configuration the service runs with (see deploy/README.md);
    ``extra`` (``uvicorn.Config`` keywords) overrides any of it.

    Proxy headers: only a peer in ``settings.trusted_proxies`` (addresses or
    networks such as ``10.0.0.0/8``) may set the client's address and scheme
    with ``X-Forwarded-For`` and ``X-Forwarded-Proto``; uvicorn then rewrites
    ``scope["client"]`` and ``scope["scheme"]`` of HTTP and websocket requests,
    so per-address limits count the client, not the proxy. With no trusted
    proxy the headers are ignored and the socket's peer counts (uvicorn's own
    default would trust 127.0.0.1 and ``$FORWARDED_ALLOW_IPS``: any local
    process could then claim any address). With ``settings.node_id`` every
    uvicorn log line names the node (several nodes may share one log).

    Connections: the HTTP protocol is :class:`CardhallHttpProtocol` (httptools
    with the connection :class:`~cardhall.server.gate.Gate`, the request-head
    bound and the request deadline); the returned config is a
    :class:`~cardhall.server.gate.GatedConfig` carrying the gate and
    ``settings``. uvicorn's own ``limit_concurrency`` is not used: the gate
    counts connections from their accept, before any request."""
    options: dict[str, Any] = dict(
        host=settings.host, port=settings.port, log_level=settings.log_level, http=CardhallHttpProtocol,
        ws=CardhallWebSocketProtocol, ws_max_size=settings.ws_max_size, ws_per_message_deflate=settings.ws_deflate,
        lifespan="on", access_log=False, timeout_graceful_shutdown=int(settings.shutdown_grace) + 1,
        proxy_headers=bool(settings.trusted_proxies), forwarded_allow_ips=list(settings.trusted_proxies),
    )
    if settings.node_id:
        label = settings.node_id.replace("%", "%%")
        log_config = copy.deepcopy(LOGGING_CONFIG)
        for formatter in log_config["formatters"].values():
            formatter["fmt"] = formatter["fmt"].replace("%(levelprefix)s", f"%(levelprefix)s [{label}]", 1)
        options["log_config"] = log_config
    gate = Gate.for_settings(settings)
    gate.export(app.state.hall.metrics.registry)
    return GatedConfig(WebSocketFirst(app), settings, gate, **{**options, **extra})


def build_server(settings: Settings, store: Store | None = None) -> CardhallServer:
    """A ready-to-run server for ``settings``."""
    app = create_app(settings, store)
    return CardhallServer(uvicorn_config(app, settings), app.state.hall)


@contextlib.asynccontextmanager
async def serving(settings: Settings, store: Store | None = None,
                  start_timeout: float = 5.0) -> AsyncIterator[tuple[CardhallServer, int]]:
    """Serve ``settings`` on loopback in the running event loop for the block
    (``settings.port`` 0: a free port) and yield ``(server, port)`` once it
    listens; on exit, shut it down (close code 1001, at most 15 s). The
    process's signal handlers are left alone (tests and tools embed it).
    Raises what the server raised if it failed to start."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", settings.port))
    port = sock.getsockname()[1]
    server = build_server(dataclasses.replace(settings, port=port), store)
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    deadline = asyncio.get_running_loop().time() + start_timeout
    while not server.started and not task.done() and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)
    if task.done():
        task.result()
    try:
        yield server, port
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 15)
        sock.close()


def tune_gc(thresholds: tuple[int, int, int]) -> None:
    """Garbage-collector settings for serving (see deploy/README.md, "Latency and the GC").

    The engines allocate many short-lived containers; with CPython's defaults
    the hand states of hundreds of tables get promoted and full collections
    stop the loop for hundreds of milliseconds every second or two at full
    speed. Objects alive at start-up (modules, code) are frozen out of
    collection, and the older generations are collected rarely.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)


def run(settings: Settings, store: Store | None = None, *, sock: socket.socket | None = None,
        on_started: Callable[[CardhallServer], None] | None = None) -> None:
    """Serve until SIGTERM/SIGINT (blocking), on ``settings.host:port`` or,
    given ``sock``, on that listening TCP socket (bound, inherited from a
    supervisor or a service manager; ``settings.port`` then becomes its port).
    ``on_started(server)`` is called in the event loop once the server
    accepts connections. With ``settings.node_id`` every log line names the
    node. Raises ``SystemExit`` (status 3) when the app fails to start, as
    uvicorn does, and what building the server raised (e.g. ``ValueError``
    for a malformed Redis URL)."""
    node = f" [{settings.node_id.replace('%', '%%')}]" if settings.node_id else ""
    logging.basicConfig(level=settings.log_level.upper(),
                        format=f"%(asctime)s %(levelname)s{node} %(name)s: %(message)s")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        settings = dataclasses.replace(settings, port=sock.getsockname()[1])
    server = build_server(settings, store)
    tune_gc(settings.gc_thresholds)

    async def serve() -> None:
        if sock is not None:
            log.info("serving on the inherited socket %s", sock.getsockname())
        task = asyncio.get_running_loop().create_task(server.serve(sockets=None if sock is None else [sock]))
        if on_started is not None:
            while not server.started and not task.done():
                await asyncio.sleep(0.02)
            if server.started:
                on_started(server)
        await task

    try:
        try:
            import uvloop
        except ImportError:
            asyncio.run(serve())
        else:
            uvloop.run(serve())
    except KeyboardInterrupt:  # uvicorn raises the captured Ctrl-C again once it has shut down cleanly
        pass
