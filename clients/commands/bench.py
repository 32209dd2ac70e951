"""``cardhall bench``: benchmarks that print figures (never tests).

``cardhall bench engine``  the rules engines (``clients.bench.engine``)
``cardhall bench server``  the live service (``clients.bench.server``)

Each module in :data:`BENCHES` exposes ``register(subparsers)`` adding its own
subcommand; modules not written yet are left out.
"""

from __future__ import annotations

import importlib
from typing import Any

#: benchmark modules, in the order ``cardhall bench --help`` lists them.
BENCHES = ["clients.bench.engine", "clients.bench.server"]


def register(subparsers: Any) -> None:
    """Add ``bench`` and one subcommand per available benchmark module."""
    parser = subparsers.add_parser("bench", help="benchmarks: engine speed, bots' win rates, server load")
    sub = parser.add_subparsers(dest="bench_command", required=True, metavar="BENCHMARK")
    for name in BENCHES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # not written yet
                continue
            raise
        module.register(sub)
