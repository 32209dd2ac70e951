"""``cardhall bench server --issue-table``'s pieces that need no load: the
baseline's fixed definition, the figures over rounds, the printed table, and
where processes ran (the whole mode is a benchmark, run by hand)."""

from __future__ import annotations

import doctest
import os
import subprocess
import sys

from cardhall.clients.bench import issue_table, where
from cardhall.clients.bench.server import baseline_definition
from tests.conftest import until


def test_doctests() -> None:
    for module in (issue_table, where):
        assert doctest.testmod(module).failed == 0


def test_the_baseline_sends_the_measured_events_split_over_the_held_connections() -> None:
    got = baseline_definition({"connections": 400, "events_per_s": 40_000.0, "duration_s": 10.0})
    assert got == {"connections": 400, "frames_per_connection": 1000, "frame_bytes": 200, "frames_per_message": 1}
    assert baseline_definition({"connections": 2000, "events_per_s": 10.0, "duration_s": 1.0})["frames_per_connection"] == 1


def _round(actions: float, redis_actions: float, events: float, broadcast: float) -> dict:
    run = {"actions_per_s": actions, "events_per_s": events, "p50_ms": 1.0, "p99_ms": 9.0, "frames_per_message": 4.8,
           "connections": 400}
    return {"memory": run, "redis": {**run, "actions_per_s": redis_actions, "p50_ms": 50.0},
            "baseline": {"baseline_events_per_s": broadcast}}


def test_figures_are_medians_of_the_rounds_ratios_and_the_table_says_what_is_met() -> None:
    maximum = [_round(4000, 3600, 40_000, 40_000), _round(3000, 1500, 30_000, 60_000), _round(5000, 4500, 50_000, 25_000)]
    offered = [{"p99_ms": p, "p50_ms": 0.6, "actions_per_s": 2400} for p in (15.0, 30.0, 18.0)]
    idle = [{"memory": {"events_per_s": 50_000, "connections": 2000}, "baseline": {"baseline_events_per_s": 40_000}}]
    figs = issue_table.figures(maximum, offered, idle)
    assert figs["redis_ratio"]["median"] == 0.9 and figs["redis_ratio"]["min"] == 0.5
    assert figs["baseline_ratio"]["median"] == 1.0 and figs["baseline_ratio"]["max"] == 2.0
    assert figs["offered_p99_ms"]["median"] == 18.0
    lines = issue_table.table({"figures": figs})
    assert lines[0] == "| figure | this run: median (min-max) | target |"
    assert len(lines) == 2 + len(issue_table.TARGETS)
    assert "at least 0.85 (met)" in lines[2] and "at least 1 (met)" in lines[3] and "at most 20 ms (met)" in lines[4]


async def test_where_sees_a_busy_child_process_and_its_cpu() -> None:
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # busy until killed

    def sampled(pid: int) -> bool:  # seen by the sampler over half a second at least
        spent = w.spent.get(pid)
        return spent is not None and spent[2] - spent[0] >= 0.5

    try:
        with where.Where({os.getpid(): "this test"}, every=0.05) as w:
            await until(lambda: sampled(child.pid) and sampled(os.getpid()), 60, "samples of the busy child")
    finally:
        child.kill()
        child.wait(60)
    report = {r["pid"]: r for r in w.report()}
    assert child.pid in report and report[os.getpid()]["role"] == "this test"
    assert abs(sum(report[child.pid]["cpus"].values()) - 1.0) < 0.05
    assert f"(pid {child.pid})" in where.describe(w.report(), minimum=0.0)
