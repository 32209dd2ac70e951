"""The in-process benchmark (``bench/inprocess/steps.py``, docs/LOAD.md "Counting instructions") runs:
it plays the Colyseus comparison's workload through the service's own layers in one process and
reports the actions it completed and their cost, in memory and on a Redis of its own (``--redis``), and
its ``--actions`` mode stops at the count it was given (the mode two callgrind runs use)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.conftest import redis_server  # noqa: F401  (a started redis-server of its own)

STEPS = Path(__file__).resolve().parents[2] / "bench" / "inprocess" / "steps.py"


def _run(*args: str) -> str:
    # bounded below pytest's own timeout, so a run that hangs fails with what it printed
    try:
        out = subprocess.run([sys.executable, str(STEPS), *args], capture_output=True, text=True, timeout=150)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"steps.py {' '.join(args)} still ran after 150 s:\n{exc.stdout!r}\n{exc.stderr!r}")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return out.stdout


def test_it_stops_at_the_actions_it_was_given():
    printed = _run("--tables", "3", "--actions", "400")
    count = int(re.fullmatch(r"actions (\d+)\n", printed).group(1))
    assert 400 <= count < 1400  # the count is polled every 5 ms: a few steps of each table past it


def test_it_measures_a_window_of_play_with_every_viewer_served():
    printed = _run("--tables", "2", "--codec", "msgpack", "--warmup", "0.2", "--duration", "1")
    found = re.fullmatch(r"2 tables, msgpack compact: (\d+) actions, ([\d.]+) CPU-s, ([\d.]+) CPU-us per action, "
                         r"([\d.]+) frames and (\d+) bytes per action\n", printed)
    assert found, printed
    actions, cpu, per_action, frames = int(found[1]), float(found[2]), float(found[3]), float(found[4])
    assert actions > 0 and cpu > 0 and per_action > 0
    assert 7.5 < frames < 9  # one message a step for each of a table's 8 connections, a few more at a hand's start


def test_it_plays_on_redis_too(redis_server):  # noqa: F811  (the fixture imported above)
    printed = _run("--tables", "2", "--warmup", "0.2", "--duration", "1", "--redis", redis_server.url)
    found = re.fullmatch(r"2 tables, json compact: (\d+) actions, .* ([\d.]+) frames and \d+ bytes per action\n", printed)
    assert found and int(found[1]) > 0 and 7.5 < float(found[2]) < 9, printed


def test_its_seats_think_when_told():
    # every action waits at least half the think time (0.01 s): 4 tables act at most ~100 times a second
    # each, where without thinking they act thousands of times
    printed = _run("--tables", "4", "--think", "0.02", "--warmup", "0.2", "--duration", "1")
    found = re.fullmatch(r"4 tables, json compact: (\d+) actions, .*\n", printed)
    assert found, printed
    assert 0 < int(found[1]) <= 4 * 101, printed
