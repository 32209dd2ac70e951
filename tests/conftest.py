"""Suite-wide options.

* ``--runslow`` runs tests marked ``slow`` (hundreds of kill points, long fuzzing).
* ``--soak`` runs tests marked ``soak`` (tests/soak: 10 minutes each, never in CI).
* A test that skips because a real dependency is missing (``redis-server``,
  Chromium) calls :func:`require` with the reason; under ``CI=true`` that skip
  becomes a failure, since CI must run those tests.
* A test waits on an event, a reply, a ``seq``, a state or a process's exit,
  with a generous deadline, never on elapsed time: :func:`until` is the one
  "wait until" helper.
* Every run ends with its :data:`SLOWEST` slowest tests (setup, call and
  teardown summed per test).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from typing import Any

import pytest

from cardhall.clients.client import ServerError

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow")
    parser.addoption("--soak", action="store_true", default=False, help="run the soaks (tests/soak, ~25 minutes)")


#: how many of the slowest tests the end of every run lists
SLOWEST = 15


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The :data:`SLOWEST` slowest tests of the run, each test's setup, call and teardown summed."""
    seconds: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if isinstance(report, pytest.TestReport):
                seconds[report.nodeid] = seconds.get(report.nodeid, 0.0) + report.duration
    if not seconds:
        return
    terminalreporter.write_sep("=", f"{min(SLOWEST, len(seconds))} slowest tests (setup + call + teardown)")
    for nodeid, took in sorted(seconds.items(), key=lambda item: -item[1])[:SLOWEST]:
        terminalreporter.write_line(f"{took:8.2f}s  {nodeid}")


#: the test files that take longest (a minute or more of one worker each, measured on a 2-core
#: machine), run first, then the browser's (each of its tests drives Chromium for 10 to 40 s): the
#: workers (``dev.py test``: ``--dist loadfile``, files handed out in the order collected) then end
#: on short files instead of one of these starting last
LONGEST_FILES = ("tests/cluster/test_faults.py", "tests/cluster/test_redis_cluster.py", "tests/browser/test_games.py",
                 "tests/cluster/test_cluster.py", "tests/cluster/test_rebalance.py", "tests/browser/test_phone.py",
                 "tests/test_wheel.py", "tests/clients/test_tui.py", "tests/clients/test_bench_cluster.py",
                 "tests/server/test_recovery_kill.py", "tests/test_lint.py", "tests/fuzz/test_frames.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_slow = pytest.mark.skip(reason="slow: run with --runslow")
    skip_soak = pytest.mark.skip(reason="soak: run with --soak")
    for item in items:
        if "slow" in item.keywords and not config.getoption("--runslow"):
            item.add_marker(skip_slow)
        if "soak" in item.keywords and not config.getoption("--soak"):
            item.add_marker(skip_soak)
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}

    def order(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return rank.get(path, len(rank) + (0 if path.startswith("tests/browser/") else 1))

    # a stable sort: the longest files first, in that order, then the browser's; every other test keeps its place
    items.sort(key=order)


async def until(condition: Any, timeout: float = 10.0, what: str = "the condition") -> float:
    """Poll ``condition()`` (sync, or returning an awaitable) every 10 ms until
    it is true: the state a test waits on, never a fixed sleep; the seconds it
    took. AssertionError naming ``what`` after ``timeout`` seconds."""
    started = time.monotonic()
    while True:
        got = condition()
        if inspect.isawaitable(got):
            got = await got
        if got:
            return time.monotonic() - started
        assert time.monotonic() - started < timeout, f"not within {timeout:g} s: {what}"
        await asyncio.sleep(0.01)


async def code_of(awaitable: Any) -> str:
    """``ok``, or the error code of the request ``awaitable`` and the end of
    its message (``too_many_tables: client address``)."""
    try:
        await awaitable
    except ServerError as exc:
        return f"{exc.code}: {exc.message.rpartition(' per ')[2]}"
    return "ok"


def require(condition: bool, reason: str) -> None:
    """Skip the calling test with ``reason`` unless ``condition``; fail instead under CI=true."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session", autouse=True)
def frame_validator():
    """Every frame a :class:`cardhall.clients.client.Client` receives in the test suite
    is checked against ``protocol/schemas`` (a mismatch raises in the client),
    and every message it sends too (one the schemas refuse must get an
    ``error`` reply). Yields the :class:`cardhall.protocol.schemas.FrameValidator`."""
    from cardhall.clients.client import set_default_validator
    from cardhall.protocol.schemas import FrameValidator

    validator = FrameValidator()
    previous = set_default_validator(validator)
    yield validator
    set_default_validator(previous)


@pytest.fixture(autouse=True)
def _frames_match_the_schemas(frame_validator):
    """Fail the test if any frame it saw did not match the schemas (even one a
    client's reader met while nobody was awaiting it)."""
    before = len(frame_validator.failures)
    yield
    found = frame_validator.failures[before:]
    if found:
        pytest.fail("frames that do not match protocol/schemas:\n" + "\n".join(found[:5]), pytrace=False)
