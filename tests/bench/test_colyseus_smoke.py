"""The comparison benchmark against Colyseus (``bench/colyseus``, docs/LOAD.md "cardhall against
Colyseus") runs: its driver plays one small configuration for a few seconds on cardhall (JSON) and on
its Colyseus room, each server started by the driver, and reports real figures for both.

Needs ``node`` and ``npm`` (skipped without them, a failure under CI=true); runs ``npm ci`` in
``bench/colyseus`` first when its ``node_modules`` is missing (the npm registry must be reachable).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import require

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "colyseus"


def _installed() -> None:
    """``npm ci`` in bench/colyseus unless its packages are there (AssertionError with npm's output)."""
    if (BENCH / "node_modules" / "@colyseus" / "core").is_dir() and (BENCH / "node_modules" / "colyseus.js").is_dir():
        return
    out = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=BENCH, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]


def _cardhall() -> str:
    """The ``cardhall`` command of this Python's environment (else the one on PATH)."""
    beside = Path(sys.executable).with_name("cardhall")
    return str(beside) if beside.exists() else shutil.which("cardhall") or "cardhall"


def test_the_comparison_plays_both_servers_without_leaks():
    require(shutil.which("node") is not None, "node is not installed (Debian: apt-get install nodejs npm)")
    require(shutil.which("npm") is not None, "npm is not installed (Debian: apt-get install npm)")
    _installed()
    out = subprocess.run(["node", "bench.js", "--tables", "2", "--think", "0", "--systems", "cardhall-json,colyseus",
                          "--rounds", "1", "--warmup", "1", "--duration", "3", "--cardhall", _cardhall(), "--json"],
                         cwd=BENCH, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    results = {r["system"]: r for r in report["results"]}
    assert set(results) == {"cardhall-json", "colyseus"}, report
    for system, r in results.items():
        assert r["errors"] == {}, (system, r["errors"])
        assert r["violations"] == 0, (system, r["leaks"])
        assert r["tables_ready"] == 2 and r["connections"] == 16, (system, r)
        assert r["actions"] > 0 and r["messages_per_s"] > 0 and r["bytes_per_s"] > 0, (system, r)
        assert r["latency_p50_ms"] is not None and r["latency_p99_ms"] is not None, (system, r)
        assert r["server_cpu_s"] > 0 and r["actions_per_server_cpu_s"] > 0, (system, r)
        assert r["load_cpu_share"] is not None and isinstance(r["saturated"], bool), (system, r)
        # the hole-card check saw every seat's cards, hand after hand
        assert r["run"]["hole_cards_checked"] > 12, (system, r["run"])
    assert report["meta"]["versions"]["colyseus_core"].startswith("0.16."), report["meta"]
    [row] = report["ratios"]
    assert len(row["cardhall-json"]) == 1 and row["cardhall-json"][0] > 0, row
