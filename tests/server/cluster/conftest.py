"""Fixtures of the cluster tests: a throwaway Redis Cluster (:mod:`tests.server.cluster.redis_cluster`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import require
from tests.server.cluster.redis_cluster import REDIS_CLI, RedisCluster
from tests.server.conftest import REDIS_SERVER


@pytest.fixture
def redis_cluster() -> Iterator[RedisCluster]:
    """A Redis Cluster of three masters, no replicas (skipped locally, failed under CI=true, without
    ``redis-server`` and ``redis-cli``)."""
    require(REDIS_SERVER is not None and REDIS_CLI is not None,
            "redis-server or redis-cli is not installed (set CARDHALL_REDIS_SERVER, CARDHALL_REDIS_CLI)")
    with RedisCluster(3) as cluster:
        yield cluster
