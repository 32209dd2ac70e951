"""The comparison benchmark against Colyseus (``bench/colyseus``, docs/LOAD.md "cardhall against
Colyseus") runs: its driver plays one small configuration for a few seconds on cardhall (JSON) and on
its Colyseus room, each server started by the driver, and reports real figures for both; its load
generator reads compact events (protocol 1.8) as ``protocol/compact.py`` writes them.

Needs ``node`` and ``npm`` (skipped without them, a failure under CI=true); runs ``npm ci`` in
``bench/colyseus`` first when its ``node_modules`` is missing (the npm registry must be reachable).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cardhall.protocol.compact import Layouts, expand
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


def _node() -> None:
    """Skip (fail under CI) without node and npm; install bench/colyseus's packages."""
    require(shutil.which("node") is not None, "node is not installed (Debian: apt-get install nodejs npm)")
    require(shutil.which("npm") is not None, "npm is not installed (Debian: apt-get install npm)")
    _installed()


#: a check run by node: argv[1] is {layouts, cases: [{packed, want}], bad: [array]}; each case's array decodes
#: to its frame, each bad array throws; prints "ok" (an assertion error and exit status 1 otherwise)
_DECODE_CHECK = """
const assert = require("node:assert");
const { expandCompact } = require("./loadgen.js");
const { layouts, cases, bad } = JSON.parse(process.argv[1]);
for (const c of cases) assert.deepStrictEqual(expandCompact(c.packed, layouts), c.want);
for (const b of bad) assert.throws(() => expandCompact(b, layouts), Error, JSON.stringify(b));
console.log("ok");
"""


def test_the_load_generator_reads_compact_events_as_the_reference_writes_them():
    """loadgen.js's decoder gives the ``events`` frame protocol/compact.py's ``expand`` gives for what
    ``Layouts.compact`` wrote (laid-out events, further fields, maps, each kind of turn, legal
    actions), and refuses what ``expand`` refuses."""
    _node()
    layouts = Layouts([(None, "left", ["seat"]), ("g", "bet", ["seat", "amount"]), ("g", "hole_cards", ["seat"]),
                       (None, "note", [])])
    events = [{"type": "bet", "seat": 1, "amount": 20}, {"type": "left", "seat": 2},
              {"type": "hole_cards", "seat": 3, "cards": ["As", "Kd"]}, {"type": "note"},
              {"type": "note", "x": {"a": 1}}, {"type": "unknown", "k": [1, 2]}, {"type": "bet", "seat": 1}]
    turns = [{"seat": 1, "id": 5}, {"seat": 2, "id": 6, "continue": True},
             {"seat": 1, "id": 5, "clock": 30.0, "bank": 12.5}]
    legal = [{"type": "fold"}, {"type": "call", "min": 5, "max": 5}]
    items: list[dict] = [{"event": e} for e in events]
    items += [{"event": e, "turn": t} for e in events for t in turns]
    items += [{"event": e, "turn": t, "legal": legal} for e in events for t in turns]
    cases = []
    for seq, item in enumerate(items, 1):
        frame = {"type": "events", "table": "t_1", "seq": seq, "ts": 2.5, "events": [item, {"event": events[0]}]}
        packed = layouts.compact(frame, "g")
        cases.append({"packed": packed, "want": expand(packed, layouts.entries())})
    bad = [["t_1", 1, 2.0], [1, 1, 2.0, [0, 1]], ["t_1", 1, 2.0, [9, 1]], ["t_1", 1, 2.0, [1, 1]],
           ["t_1", 1, 2.0, [1, 1, 2, 3]], ["t_1", 1, 2.0, [[0, 1], [1]]], ["t_1", 1, 2.0, [[0, 1], [1, 2], [], 4]],
           ["t_1", 1, 2.0, "x"], ["t_1", 1, 2.0, [True, 1]]]
    for array in bad:
        with pytest.raises(ValueError):
            expand(array, layouts.entries())
    check = json.dumps({"layouts": layouts.entries(), "cases": cases, "bad": bad})
    out = subprocess.run(["node", "-e", _DECODE_CHECK, check], cwd=BENCH, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


def _bench(systems: str, duration: int) -> dict:
    """``node bench.js --json`` for ``systems`` (comma-separated) at 2 tables, think 0, one round of
    ``duration`` s after 1 s of warm-up: its report (AssertionError with its stderr if it failed)."""
    _node()
    out = subprocess.run(["node", "bench.js", "--tables", "2", "--think", "0", "--systems", systems, "--rounds", "1",
                          "--warmup", "1", "--duration", str(duration), "--cardhall", _cardhall(), "--json"],
                         cwd=BENCH, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    report: dict = json.loads(out.stdout.strip().splitlines()[-1])
    return report


def test_the_comparison_plays_both_servers_without_leaks():
    report = _bench("cardhall-json,colyseus", 3)
    results = {r["system"]: r for r in report["results"]}
    assert set(results) == {"cardhall-json", "colyseus"}, report
    for system, r in results.items():
        assert r["errors"] == {}, (system, r["errors"])
        assert r["client"] == (None if system == "colyseus" else "compact"), (system, r)
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


def test_the_floor_answers_each_action_with_eight_frames_of_cardhalls_sizes():
    """``--systems floor``: floor_server.py (cardhall's websocket stack, no game) answers every seat's
    message with one frame to each of the table's 8 connections, 260 bytes to the sender and 190 to the
    others (floor_server.py's defaults), and the driver measures it as it measures the servers."""
    [r] = _bench("floor", 2)["results"]
    assert r["system"] == "floor" and r["errors"] == {} and r["tables_ready"] == 2 and r["connections"] == 16, r
    run = r["run"]
    assert run["actions_completed"] > 100 and r["server_cpu_s"] > 0 and r["actions_per_server_cpu_s"] > 0, r
    # every action brought 8 frames, the sender's own counted as it completed the action: when the load
    # stopped, each table's latest action may have had up to 7 frames still on their way, or none counted yet
    assert 8 * run["actions_completed"] - 7 * 2 <= run["messages"] <= 8 * run["actions_completed"] + 7 * 2, run
    assert run["bytes"] == 260 * run["actions_completed"] + 190 * (run["messages"] - run["actions_completed"]), run
