"""The live-server fixtures of ``tests/server`` (a real server on loopback, a
real redis-server of the tests' own)."""

from tests.server.conftest import live, redis_server  # noqa: F401  (fixtures)
