"""``cardhall serve``: run the live service (in-memory store by default; needs nothing else).

    cardhall serve [--host 127.0.0.1] [--port 8000] [--log-level info]
                   [--allow-origin URL ...] [--operator-key KEY]
                   [--redis redis://host:6379/0 [--redis-prefix cardhall] [--store-probe 2]]
                   [--node-id ID] [--advertise URL] [--lease-ttl 3] [--lease-renew 1]
                   [--placement least_loaded|local] [--rebalance-rate R] [--trusted-proxy ADDR ...]
                   [--max-tables-per-address 20] [--new-players-per-address 20 --new-players-window 60]
                   [--bot-think-floor 0.5] [--bot-workers 1] [--player-expiry 604800]
                   [--max-connections-per-ip 64] [--max-connections 10000]
                   [--max-header-bytes 16384] [--handshake-timeout 10] [--ws-deflate]
                   [--jwt-key FILE [--jwt-issuer ISS] [--jwt-audience AUD] [--require-auth]]
                   [--workers N]

The operator key may also come from ``CARDHALL_OPERATOR_KEY``, the Redis URL
from ``CARDHALL_REDIS_URL``, the node id from ``CARDHALL_NODE_ID``. With Redis,
tables, their events, hand histories and players are checkpointed there and
recovered on start (server/STORAGE.md), and the server is a node of a cluster:
every node on the same Redis and prefix serves every table of it
(deploy/README.md). ``--lease-ttl`` (0.5 to 300 s) is how long a dead node's
tables wait before another node takes them; ``--lease-renew`` (more than 0, at
most a third of ``--lease-ttl``) how often a node renews its leases.

``--trusted-proxy ADDR`` (an address or a network such as ``10.0.0.0/8``,
repeatable): a load balancer whose ``X-Forwarded-For`` names the client, so
per-address limits count the client's address and not the balancer's; without
one, forwarded headers are ignored and the socket's peer counts.

The per-address limits (tables, new players), the bot think floor of tables
nobody owns and the expiry of idle players protect a public server; they are
described in deploy/README.md ("Limits"); 0 turns each off. With Redis the
tables, new players and websockets per address (and chat per player) are
counted once for every node ("Counted across the cluster").

Connections (``cardhall.server.gate``): every TCP connection counts from its
accept, half-open ones included, against ``--max-connections-per-ip`` (HTTP
403 past it; a ``--trusted-proxy`` peer is not counted per address, its
websockets count per forwarded client) and ``--max-connections`` (HTTP 503);
a request head over ``--max-header-bytes`` gets 431, a request not complete
within ``--handshake-timeout`` seconds 408 (deploy/README.md, "Connections").

``--jwt-key FILE`` puts the service behind the operator's accounts: a
``hello`` whose ``auth`` is a JWT verified with FILE (an HS256 secret of at
least 32 bytes, a PEM public key for RS256 or ES256, or a JWKS) is that
account's player; ``--jwt-issuer`` and ``--jwt-audience`` are the ``iss``
and ``aud`` a token must carry; ``--require-auth`` refuses guests (an
operator's policy). A key file that cannot be used is refused at start with
exit status 2 (deploy/README.md, "Putting cardhall behind your accounts").

``--workers N`` (1 to 64; N > 1 needs ``--redis``) runs N nodes on this
machine on one port, the way uvicorn's ``--workers`` does: this process binds
the port (``--port 0``: a free one, logged) and supervises N child processes,
named ``<node id or host name>-w1`` .. ``-wN``, restarting one that dies
(``cardhall.server.workers``). A wrong value is refused with exit status 2.
SIGTERM stops the service gracefully (connections closed with 1001 so clients
reconnect); with ``--workers``, every node.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``serve`` subcommand."""
    p = subparsers.add_parser("serve", help="run the live service (websocket /ws, lobby /api/tables)",
                              description="Run the cardhall service under uvicorn: in memory by default; with --redis, one node of a cluster.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="accept websockets only from this browser Origin (repeatable; default: any)")
    p.add_argument("--operator-key", default=os.environ.get("CARDHALL_OPERATOR_KEY"),
                   help="secret for /api/ops/... (default: $CARDHALL_OPERATOR_KEY; unset: operator endpoints off)")
    p.add_argument("--max-connections-per-ip", type=int, default=64, metavar="N",
                   help="TCP connections open at once from one address, half-open ones included, and "
                        "websockets per client address (default 64; 0: no limit; past it HTTP 403)")
    p.add_argument("--max-connections", type=int, default=10_000, metavar="N",
                   help="TCP connections open at once in all (default 10000, lowered to fit ulimit -n; past it HTTP 503)")
    p.add_argument("--max-header-bytes", type=int, default=16 * 1024, metavar="B",
                   help="largest request line and headers, bytes (default 16384; past it HTTP 431)")
    p.add_argument("--handshake-timeout", type=float, default=10.0, metavar="S",
                   help="seconds a connection has to send a whole request or websocket upgrade (default 10; then HTTP 408)")
    p.add_argument("--send-queue", type=int, default=2000, help="frames queued for a client before it is dropped")
    p.add_argument("--max-tables-per-player", type=int, default=20, help="open tables one player may own (default 20)")
    p.add_argument("--max-tables-per-address", type=int, default=20,
                   help="open tables created from one client address, over the websocket and HTTP (default 20; 0: no limit)")
    p.add_argument("--new-players-per-address", type=int, default=20, metavar="N",
                   help="players (hello without a token) one client address may create per --new-players-window "
                        "(default 20; 0: no limit)")
    p.add_argument("--new-players-window", type=float, default=60.0, metavar="S",
                   help="seconds in which --new-players-per-address refills (default 60)")
    p.add_argument("--bot-think-floor", type=float, default=0.5, metavar="S",
                   help="least bot_think of a table nobody owns or with only bots (default 0.5; 0: none)")
    p.add_argument("--bot-workers", type=int, default=1, metavar="N",
                   help="processes that think costly bots' moves (Monte Carlo equity) off the event loop "
                        "(default 1; 0: the tables think them in place)")
    p.add_argument("--player-expiry", type=float, default=7 * 86400.0, metavar="S",
                   help="seconds after which a player with no connection, seat or open table is forgotten "
                        "(default 604800, 7 days; 0: never)")
    p.add_argument("--ws-deflate", action="store_true",
                   help="compress websocket messages (permessage-deflate, RFC 7692) for clients that offer it, "
                        "as every browser does: about half the bytes of JSON messages for 6-7 us of server CPU "
                        "per message (deploy/README.md, \"Compression\"; default: off, never negotiated)")
    p.add_argument("--max-frame", type=int, default=16 * 1024, help="largest client frame read, bytes (default 16384)")
    p.add_argument("--rate", type=float, default=50.0, help="frames per second a connection may send (default 50)")
    p.add_argument("--burst", type=float, default=100.0, help="frames a connection may send at once (default 100)")
    p.add_argument("--redis", metavar="URL", default=os.environ.get("CARDHALL_REDIS_URL") or None,
                   help="keep tables, events, hands and players in this Redis (7.0 or newer: a standalone Redis, "
                        "or any node of a Redis Cluster, found out at start) and recover them on start "
                        "(default: $CARDHALL_REDIS_URL; unset: in memory, nothing survives a restart)")
    p.add_argument("--redis-wait", type=float, default=30.0, metavar="S",
                   help="seconds to wait at start for a Redis that does not answer before exiting with 1 "
                        "(default 30; 0: for ever)")
    p.add_argument("--redis-wait-replicas", type=int, default=0, metavar="N",
                   help="replicas that must acknowledge each commit (Redis WAIT) before it is published or "
                        "acknowledged: acknowledged actions then survive a master's failover (0 to 16; "
                        "default 0: none; server/STORAGE.md)")
    p.add_argument("--redis-prefix", default="cardhall", help="prefix of every Redis key (the servers on one Redis and prefix form one cluster)")
    p.add_argument("--redis-stream-bound", type=int, default=1024, metavar="N",
                   help="events kept per table in Redis for clients resuming with since (default 1024)")
    p.add_argument("--store-probe", type=float, default=2.0, metavar="S",
                   help="seconds between probes of the store's marker while it is up: lost Redis data is "
                        "noticed and written back within it (0.1 to 3600, or 0: off; default 2)")
    p.add_argument("--full-state-every", type=int, default=8, metavar="N",
                   help="steps of a table's input log between two full states in Redis at most (1 to 10000; "
                        "recovery replays at most this many per table; default 8: server/STORAGE.md)")
    p.add_argument("--verify-replay", action="store_true",
                   help="log a digest of every table state after each step and check it on recovery "
                        "(testing: costs a state per step)")
    p.add_argument("--node-id", default=os.environ.get("CARDHALL_NODE_ID") or None, metavar="ID",
                   help="this node's name in the cluster (default: $CARDHALL_NODE_ID, else host-pid-random); "
                        "a node restarted with its id takes its tables back at once: never run two with one id")
    p.add_argument("--advertise", default=None, metavar="URL",
                   help="the URL /api/cluster shows for this node (default http://HOST:PORT)")
    p.add_argument("--lease-ttl", type=float, default=3.0, metavar="S",
                   help="seconds a table's lease lasts unrenewed: a dead node's tables move after it (default 3)")
    p.add_argument("--lease-renew", type=float, default=1.0, metavar="S",
                   help="seconds between lease renewals and heartbeats (default 1; at most a third of --lease-ttl)")
    p.add_argument("--placement", choices=["least_loaded", "local"], default="least_loaded",
                   help="where a new table goes: the live node with the fewest tables, or the node asked")
    p.add_argument("--rebalance-rate", type=float, default=2.0, metavar="R",
                   help="tables per second at most this node moves to a node holding fewer than an even share "
                        "(0: never; default 2)")
    p.add_argument("--rebalance-hold", type=float, default=30.0, metavar="S",
                   help="seconds a table that rebalancing moved to a node stays there before it may move again "
                        "(default 30)")
    p.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDR",
                   help="a load balancer's address whose X-Forwarded-For names the client (repeatable; "
                        "per-address limits then count the client, not the proxy)")
    p.add_argument("--jwt-key", default=None, metavar="FILE",
                   help="verify the JWTs players say hello with (auth) with this key: an HS256 secret "
                        "(at least 32 bytes), a PEM public key (RS256, ES256) or a JWKS file (default: none, "
                        "the server takes no tokens)")
    p.add_argument("--jwt-issuer", default=None, metavar="ISS", help="the iss a token must carry (needs --jwt-key)")
    p.add_argument("--jwt-audience", default=None, metavar="AUD",
                   help="the aud a token must carry (needs --jwt-key; unset: tokens naming an audience are refused)")
    p.add_argument("--require-auth", action="store_true",
                   help="refuse guests: only players with a token from --jwt-key play (an operator's policy)")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="start N nodes on this machine sharing the port (N > 1 needs --redis)")
    p.add_argument("--fd", type=int, default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Serve (blocking) and return the exit status: 0, or 2 with a message on stderr when an
    argument is wrong (the way argparse refuses one), or the supervisor's status with ``--workers``."""
    import ipaddress
    import socket
    import sys

    from cardhall.server.config import Settings

    def refuse(message: str) -> int:
        print(f"cardhall serve: error: {message}", file=sys.stderr)
        return 2

    if not 1 <= args.workers <= 64:
        return refuse(f"--workers must be between 1 and 64 (got {args.workers})")
    if args.workers > 1 and not args.redis:
        return refuse(f"--workers {args.workers}: N > 1 needs --redis: nodes share tables through Redis")
    if args.workers > 1 and args.fd is not None:
        return refuse("--fd serves one node on an inherited socket: it does not go with --workers")
    if not 0.5 <= args.lease_ttl <= 300:
        return refuse(f"--lease-ttl must be between 0.5 and 300 seconds (got {args.lease_ttl:g})")
    if not (args.lease_renew > 0 and args.lease_renew * 3 <= args.lease_ttl):
        return refuse(f"--lease-renew must be more than 0 and at most a third of --lease-ttl "
                      f"({args.lease_ttl:g} / 3 = {args.lease_ttl / 3:.3g} s; got {args.lease_renew:g})")
    if not 0 <= args.rebalance_rate <= 100:
        return refuse(f"--rebalance-rate must be between 0 (off) and 100 tables per second (got {args.rebalance_rate:g})")
    if not 0 <= args.rebalance_hold <= 86400:
        return refuse(f"--rebalance-hold must be between 0 and 86400 seconds (got {args.rebalance_hold:g})")
    if min(args.max_tables_per_address, args.new_players_per_address) < 0:
        return refuse("--max-tables-per-address and --new-players-per-address must be 0 (no limit) or more")
    if not 0 < args.new_players_window <= 86400:
        return refuse(f"--new-players-window must be more than 0 and at most 86400 seconds (got {args.new_players_window:g})")
    if not 0 <= args.bot_think_floor <= 30:
        return refuse(f"--bot-think-floor must be between 0 and 30 seconds (got {args.bot_think_floor:g})")
    if not 0 <= args.bot_workers <= 64:
        return refuse(f"--bot-workers must be between 0 and 64 (got {args.bot_workers})")
    if not (args.player_expiry == 0 or 60 <= args.player_expiry <= 400 * 86400):
        return refuse(f"--player-expiry must be 0 (never) or between 60 s and 400 days (got {args.player_expiry:g})")
    if not 0 <= args.max_connections_per_ip <= 1_000_000:
        return refuse(f"--max-connections-per-ip must be between 0 (no limit) and 1000000 (got {args.max_connections_per_ip})")
    if not 1 <= args.max_connections <= 1_000_000:
        return refuse(f"--max-connections must be between 1 and 1000000 (got {args.max_connections})")
    if not 1024 <= args.max_header_bytes <= 1024 * 1024:
        return refuse(f"--max-header-bytes must be between 1024 and 1048576 (got {args.max_header_bytes})")
    if not 0.1 <= args.handshake_timeout <= 300:
        return refuse(f"--handshake-timeout must be between 0.1 and 300 seconds (got {args.handshake_timeout:g})")
    if not (args.store_probe == 0 or 0.1 <= args.store_probe <= 3600):
        return refuse(f"--store-probe must be 0 (off) or between 0.1 and 3600 seconds (got {args.store_probe:g})")
    if not 0 <= args.redis_wait <= 86400:
        return refuse(f"--redis-wait must be between 0 (for ever) and 86400 seconds (got {args.redis_wait:g})")
    if not 0 <= args.redis_wait_replicas <= 16:
        return refuse(f"--redis-wait-replicas must be between 0 and 16 (got {args.redis_wait_replicas})")
    if args.redis_wait_replicas and not args.redis:
        return refuse("--redis-wait-replicas needs --redis")
    if not 1 <= args.full_state_every <= 10_000:
        return refuse(f"--full-state-every must be between 1 and 10000 (got {args.full_state_every})")
    for proxy in args.trusted_proxy:
        try:  # as uvicorn reads them: an address, or a network without host bits
            if "/" in proxy:
                ipaddress.ip_network(proxy)
            else:
                ipaddress.ip_address(proxy)
        except ValueError as exc:
            return refuse(f"--trusted-proxy {proxy}: not an IP address or network ({exc})")
    if args.jwt_key is None and (args.require_auth or args.jwt_issuer or args.jwt_audience):
        return refuse("--require-auth, --jwt-issuer and --jwt-audience need --jwt-key")
    if args.jwt_key is not None:
        from cardhall.server.auth import KeyFileError, load_keys

        try:  # read here too, so a bad file is refused before anything starts
            load_keys(args.jwt_key)
        except KeyFileError as exc:
            return refuse(str(exc))
    sock = None
    if args.fd is not None:
        try:
            sock = socket.socket(fileno=args.fd)
        except OSError as exc:
            return refuse(f"--fd {args.fd}: not an open socket ({exc.strerror})")

    settings = Settings(
        host=args.host, port=args.port, log_level=args.log_level, allowed_origins=tuple(args.allow_origin),
        operator_key=args.operator_key or None, max_connections_per_ip=args.max_connections_per_ip,
        send_queue=args.send_queue, max_tables_per_player=args.max_tables_per_player,
        max_tables_per_address=args.max_tables_per_address, new_players_per_address=args.new_players_per_address,
        new_players_window=args.new_players_window, bot_think_floor=args.bot_think_floor,
        bot_workers=args.bot_workers,
        player_expiry=args.player_expiry, max_frame=args.max_frame, rate=args.rate,
        burst=args.burst, redis_url=args.redis, redis_prefix=args.redis_prefix,
        redis_wait_replicas=args.redis_wait_replicas,
        stream_bound=args.redis_stream_bound, node_id=args.node_id or None, advertise=args.advertise or None,
        lease_ttl=args.lease_ttl, lease_renew=args.lease_renew, placement=args.placement,
        rebalance_rate=args.rebalance_rate, rebalance_hold=args.rebalance_hold,
        trusted_proxies=tuple(args.trusted_proxy), max_connections=args.max_connections,
        max_header_bytes=args.max_header_bytes, handshake_timeout=args.handshake_timeout, ws_deflate=args.ws_deflate,
        store_probe=args.store_probe, full_state_every=args.full_state_every, verify_replay=args.verify_replay,
        jwt_key=os.path.abspath(args.jwt_key) if args.jwt_key else None, jwt_issuer=args.jwt_issuer or None,
        jwt_audience=args.jwt_audience or None,
        require_auth=args.require_auth,
    )
    if args.redis:
        clustered = _check_redis(args.redis, args.redis_wait)
        if clustered is None:
            return 1
        settings = dataclasses.replace(settings, redis_clustered=clustered)
    if args.workers > 1:
        from cardhall.server.workers import supervise

        return supervise(settings, args.workers)
    from cardhall.server.app import run

    run(settings, sock=sock)
    return 0


def _check_redis(url: str, wait: float) -> bool | None:
    """Whether ``url`` is a node of a Redis Cluster, after waiting up to ``wait``
    seconds for it to answer (0: for ever); None, with one line on stderr saying
    why, when it cannot be used (``cardhall serve`` then exits with 1 before it
    listens). SIGTERM or Ctrl-C during the wait ends it the same way."""
    import signal
    import sys

    from cardhall.server.store.redis_conn import Misconfigured, preflight

    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        def waiting(why: str) -> None:
            limit = "for ever" if not wait else f"up to {wait:g} s (--redis-wait)"
            print(f"cardhall serve: waiting {limit} for Redis: {why}", file=sys.stderr, flush=True)

        return preflight(url, wait, should_stop=lambda: stopping, report=waiting).clustered
    except Misconfigured as exc:
        print(f"cardhall serve: {exc}", file=sys.stderr)
        return None
    except KeyboardInterrupt:
        print("cardhall serve: stopped while waiting for Redis", file=sys.stderr)
        return None
    finally:
        signal.signal(signal.SIGTERM, previous)
