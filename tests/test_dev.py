"""``dev.py``, the developer entry point: which pytest-xdist options ``dev.py test`` adds."""

from __future__ import annotations

import doctest
import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def dev():
    spec = importlib.util.spec_from_file_location("dev", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_doctests(dev):
    assert doctest.testmod(dev).failed == 0


@pytest.mark.parametrize("args", [[], ["tests/engine", "-x"], ["-k", "rename"], ["--runslow"]])
def test_the_suite_runs_in_parallel_by_default(dev, args):
    workers = min(8, (os.cpu_count() or 1) + 1)
    assert dev.test_workers(args) == ["-n", str(workers), "--dist", "loadfile"]


@pytest.mark.parametrize("args", [["-s"], ["--pdb"], ["--trace"], ["-n", "1"], ["-n4"], ["--numprocesses=2"],
                                  ["-p", "no:xdist"], ["-pno:xdist"], ["--capture=no"], ["tests/x.py", "-s"]])
def test_one_process_when_asked_or_needed(dev, args):
    assert dev.test_workers(args) == []
