"""Service settings: one frozen dataclass, filled by ``cardhall serve`` or tests.

Units: seconds for times, bytes for sizes, frames for queue bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Settings:
    """What an operator may tune. Defaults suit one machine in development.

    ``allowed_origins``: websocket ``Origin`` values accepted (empty: any; a
    request without ``Origin``, i.e. not from a browser, is always accepted).
    ``operator_key``: secret for ``/api/ops/...`` (None: those endpoints are off).
    ``max_frame``: largest client frame read, bytes (larger: ``frame_too_large``;
    over ``ws_max_size`` the websocket layer closes with 1009).
    ``ws_deflate``: agree to websocket ``permessage-deflate`` (RFC 7692) with
    clients that offer it (every browser does), each message compressed on
    its own (``server/ws_protocol.py``, ``DEFLATE``); off: never negotiated.
    ``rate``/``burst``: frames per second a connection may send, token bucket;
    ``rate_strikes``: frames refused with ``rate_limited`` before the server
    closes the connection (close code 4008).
    ``send_queue``: frames waiting for a client that does not read; past it the
    connection is dropped (close code 4009); the table never waits.
    ``event_buffer``: events per table kept for ``join`` with ``since``.
    ``max_tables_per_player``: open tables one player may own.
    ``max_tables_per_address``: open tables created from one client address
    (over the websocket and over HTTP, with a player token or without); 0
    means no limit. A new player (a second ``hello``) does not get more tables
    from the same address.
    ``new_players_per_address``/``new_players_window``: players (``hello``
    without a token) one client address may create, a token bucket that
    refills ``new_players_per_address`` every ``new_players_window`` seconds;
    past it ``hello`` answers ``rate_limited``; 0 means no limit.
    With ``redis_url`` these limits, the websockets per address
    (``max_connections_per_ip``) and chat per player are counted once in
    Redis for every node on the same Redis and prefix, whichever node holds
    the table or the connection (:mod:`cardhall.server.store.redis_limits`);
    without it, in this process (:class:`cardhall.server.limits.MemoryLimits`).
    ``bot_workers``: processes that think costly bots' moves off the event
    loop (0: none, the tables think them in place; :mod:`cardhall.server.thinker`).
    ``bot_think_floor``: the least ``bot_think`` (seconds) of a table created
    by a client that nobody owns (HTTP without a token) or whose seats are all
    bots; a lower request is raised to it (0: no floor); at any other table
    the bots think at least this long while no person there is in play. An
    operator-keyed HTTP creation is exempt from it and from ``max_tables_per_address``.
    ``player_expiry``: seconds after which a player with no connection, no
    seat and no open table it owns on this node is forgotten (its Redis key
    expires that long after its last use); 0 keeps players for ever.
    ``max_connections_per_ip``: TCP connections open at once from one peer
    address (HTTP, websockets, and connections that have not finished their
    request), counted from accept on this node (server/gate.py); past it HTTP
    403; 0 means no limit. The same number bounds the websockets open at once
    from one client address (the forwarded one from a ``trusted_proxies``
    peer, whose connections the accept count leaves out), counted at the
    handshake across every node on one Redis (server/limits.py).
    ``max_connections``: TCP connections open at once from everyone (the
    same count); past it HTTP 503 with a reason; lowered at start to fit the
    process's open-file limit.
    ``max_header_bytes``: largest request head (request line and headers),
    bytes; past it HTTP 431 and the connection closes.
    ``handshake_timeout``: seconds a connection has to send a whole request
    (head and body; for a websocket, its upgrade request) from its start, or
    from the request's first byte on a kept-alive connection; past it HTTP 408
    and the connection closes.
    ``sweep_interval``: how often idle finished tables (G-9) and absent owners (SPEC "The host's controls") are looked for.
    ``gc_thresholds``: ``gc.set_threshold`` for ``cardhall serve`` (deploy/README.md).
    ``redis_url``: keep tables, events, hands and players in this Redis (None:
    in memory, nothing survives the process); ``redis_prefix``: its keys' prefix
    (every server on one Redis and prefix is a node of one cluster); ``redis_timeout``: seconds a Redis command may take;
    ``redis_clustered``: whether ``redis_url`` is a node of a Redis Cluster
    (None: asked when the store is made; ``cardhall serve`` knows it from its
    pre-flight check, :func:`cardhall.server.store.redis_conn.preflight`);
    ``redis_wait_replicas``: replicas that must acknowledge each commit
    before anything of it is published or acknowledged (``WAIT``; 0: none,
    ``server/STORAGE.md``, "Replicas and failover");
    ``stream_bound``: events kept per table in Redis (for ``since`` after a
    restart); ``store_retry``: seconds between probes of a store that stopped
    answering (doubling up to 5); ``store_probe``: seconds between probes of
    a store that is up (its marker: lost data is noticed within this even
    while nothing is saved, and written back; 0: no timer, only commits
    notice). ``full_state_every``: steps of a table's input log between two
    full states at most (a full state is also written with every finished
    hand); recovery replays at most this many steps per table.
    ``verify_replay``: log a digest of the state after every step and check
    it when a log is replayed (tests: it costs a state per step). See ``server/STORAGE.md``.

    A server with ``redis_url`` is a node of a cluster: every server on the
    same Redis and ``redis_prefix`` serves every table of it (``deploy/README.md``,
    "On several machines"). ``node_id``: its name in the node registry and in
    its leases (None: ``<host>-<pid>-<random>``); a node started again with
    the id it had takes its own tables back at once, so never run two nodes
    with one id. ``advertise``: the URL shown for it in ``/api/cluster``
    (None: ``http://<host>:<port>``). ``lease_ttl``: seconds a table's lease
    lasts without renewal (a dead node's tables move after it);
    ``lease_renew``: seconds between renewals and heartbeats (at most a third
    of ``lease_ttl``). ``placement``: where a new table goes, ``least_loaded``
    (the live node with the fewest tables, counted in Redis so a burst
    spreads evenly) or ``local`` (the node asked). ``rebalance_rate``: tables
    per second at most that a node holding more than its even share moves to
    a node holding less (0: never; ``server/cluster/rebalance.py``);
    ``rebalance_hold``: seconds a table that rebalancing moved to a node
    stays there before it may be moved again.
    ``trusted_proxies``: addresses of load balancers whose
    ``X-Forwarded-For`` gives the client's address (empty: the socket's peer).

    Operator-issued identity (SPEC "Identity", :mod:`cardhall.server.auth`):
    ``jwt_key``: the path of the key file a ``hello``'s ``auth`` token is
    verified with (an HS256 secret, a PEM public key, or a JWKS; None: the
    server takes no tokens); ``jwt_issuer``/``jwt_audience``: the ``iss`` and
    ``aud`` a token must carry (None: ``iss`` not checked, no ``aud`` allowed);
    ``require_auth``: refuse guests (``auth_required``), an operator's policy
    that needs ``jwt_key``.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    log_level: str = "info"
    allowed_origins: tuple[str, ...] = ()
    operator_key: str | None = None
    max_frame: int = 16 * 1024
    ws_max_size: int = 1024 * 1024
    ws_deflate: bool = False
    rate: float = 50.0
    burst: float = 100.0
    rate_strikes: int = 50
    send_queue: int = 2000
    event_buffer: int = 256
    max_tables_per_player: int = 20
    max_tables_per_address: int = 20
    new_players_per_address: int = 20
    new_players_window: float = 60.0
    bot_think_floor: float = 0.5
    bot_workers: int = 1
    player_expiry: float = 7 * 86400.0
    max_connections_per_ip: int = 64
    max_connections: int = 10_000
    max_header_bytes: int = 16 * 1024
    handshake_timeout: float = 10.0
    sweep_interval: float = 5.0
    shutdown_grace: float = 2.0
    gc_thresholds: tuple[int, int, int] = (10_000, 1_000, 1_000)
    table_defaults: dict[str, object] = field(default_factory=dict)
    redis_url: str | None = None
    redis_prefix: str = "cardhall"
    redis_timeout: float = 3.0
    redis_clustered: bool | None = None
    redis_wait_replicas: int = 0
    stream_bound: int = 1024
    store_retry: float = 0.5
    store_probe: float = 2.0
    full_state_every: int = 8
    verify_replay: bool = False
    node_id: str | None = None
    advertise: str | None = None
    lease_ttl: float = 3.0
    lease_renew: float = 1.0
    placement: str = "least_loaded"
    rebalance_rate: float = 2.0
    rebalance_hold: float = 30.0
    trusted_proxies: tuple[str, ...] = ()
    jwt_key: str | None = None
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    require_auth: bool = False
