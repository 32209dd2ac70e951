"""``cardhall bench``: benchmarks that print figures (never tests).

``cardhall bench engine``  the rules engines (``cardhall.clients.bench.engine``)
``cardhall bench server``  the live service (``cardhall.clients.bench.server``)
``cardhall bench bots``    a person on a node crowded with bot tables (``cardhall.clients.bench.bots``)

Each module in :data:`BENCHES` exposes ``register(subparsers)`` adding its own
subcommand.
"""

from __future__ import annotations

from typing import Any

from cardhall.clients.cli import register_modules

#: benchmark modules, in the order ``cardhall bench --help`` lists them.
BENCHES = ["cardhall.clients.bench.engine", "cardhall.clients.bench.server", "cardhall.clients.bench.bots",
           "cardhall.clients.bench.cluster"]


def register(subparsers: Any) -> None:
    """Add ``bench`` and one subcommand per benchmark module."""
    parser = subparsers.add_parser("bench", help="benchmarks: engine speed, bots' win rates, server load")
    sub = parser.add_subparsers(dest="bench_command", required=True, metavar="BENCHMARK")
    register_modules(sub, BENCHES)
