"""Fixtures of the cluster tests: real ``redis-server``, ``cardhall serve``
processes and nginx (tests/cluster/harness.py).

* ``cluster``: a started :class:`~tests.cluster.harness.Cluster` of three nodes
  behind nginx, stopped after the test.
* ``make_cluster``: ``await make_cluster(size, **kw)`` starts one with other
  arguments (:class:`~tests.cluster.harness.Cluster`'s), stopped after the test.

Both skip without ``redis-server`` or nginx (and fail under CI=true). When the
test fails, the end of every node's log and of nginx's is printed (pytest
shows it under "Captured stdout teardown").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from typing import Any

import pytest

from tests.cluster.harness import NGINX, Cluster
from tests.conftest import require
from tests.server.conftest import REDIS_SERVER

_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    if report.failed:
        item.stash[_FAILED] = True
    return report


def require_cluster_tools() -> None:
    """Skip (fail under CI=true) without redis-server or nginx."""
    require(REDIS_SERVER is not None, "redis-server is not installed (set CARDHALL_REDIS_SERVER)")
    require(NGINX is not None, "nginx is not installed (apt-get install nginx; or set CARDHALL_NGINX)")


@pytest.fixture
async def make_cluster(request: pytest.FixtureRequest) -> AsyncIterator[Callable[..., Awaitable[Cluster]]]:
    require_cluster_tools()
    clusters: list[Cluster] = []

    async def make(size: int = 3, **kw: Any) -> Cluster:
        cluster = Cluster(size, **kw)
        clusters.append(cluster)
        return await cluster.start()

    try:
        yield make
    finally:
        for cluster in clusters:
            if request.node.stash.get(_FAILED, False):
                print(cluster.log_tails())
            await cluster.stop()


@pytest.fixture
async def cluster(make_cluster: Callable[..., Awaitable[Cluster]]) -> Cluster:
    return await make_cluster()


@pytest.fixture
def redis_cluster(request: pytest.FixtureRequest) -> Generator[Any, None, None]:
    """A started :class:`~tests.cluster.redis_cluster.RedisClusterProcs`: a Redis
    Cluster of three masters with a replica each on free loopback ports,
    whole (every node ``cluster_state:ok``, one slot map, replicas linked);
    killed and removed after the test (its servers' logs printed if the test
    failed). Skips without ``redis-server`` or ``redis-cli`` (fails under CI=true)."""
    from tests.cluster.redis_cluster import REDIS_CLI, RedisClusterProcs

    require(REDIS_SERVER is not None, "redis-server is not installed (set CARDHALL_REDIS_SERVER)")
    require(REDIS_CLI is not None, "redis-cli is not installed (set CARDHALL_REDIS_CLI)")
    procs = RedisClusterProcs().start()
    try:
        yield procs
    finally:
        if request.node.stash.get(_FAILED, False):
            print(procs.log_tails())
        procs.close()
