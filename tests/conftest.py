"""Suite-wide options.

* ``--runslow`` runs tests marked ``slow`` (long soaks, hundreds of kill points).
* A test that skips because a real dependency is missing (``redis-server``,
  Chromium) calls :func:`require` with the reason; under ``CI=true`` that skip
  becomes a failure, since CI must run those tests.
"""

from __future__ import annotations

import os

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


def require(condition: bool, reason: str) -> None:
    """Skip the calling test with ``reason`` unless ``condition``; fail instead under CI=true."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)
