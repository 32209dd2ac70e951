"""Token buckets in Redis, and the table passwords counted with them (SPEC "Limits").

A bucket is a hash (``t``: tokens, ``at``: Redis ms of ``t``) that expires
once it would be full again; :data:`BUCKET` takes a token, :data:`GIVE`
gives one back. Each script touches one key (one hash slot of a Redis
Cluster). :class:`PasswordTries` counts the table passwords tried
(``server/STORAGE.md``, "Redis key layout"): per player
(``P:limit:passwords:<player id>``) and per client address
(``P:limit:passwords-address:<address>``), on every node together; a
``join``'s right password is given back, so the wrong ones count. Unlike
the other buckets (:mod:`cardhall.server.store.redis_limits`) a refusal is
not held on the node: a right password given back on another node is
seen at once, and each connection's own tries are bounded on its node
before Redis is asked (:mod:`cardhall.server.private_access`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from cardhall.server.limits import PASSWORD_EVERY, PASSWORD_TRIES, too_many_passwords

#: Take one token of the bucket in hash KEYS[1] (``t``: tokens, ``at``: Redis
#: ms of ``t``). ARGV: burst, tokens per second. Returns 0 when taken, else the
#: ms until the next token. The hash expires once it would be full again.
BUCKET = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2]) / 1000
local kept = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = burst
if kept[1] and kept[2] then
  tokens = math.min(burst, tonumber(kept[1]) + math.max(0, now - tonumber(kept[2])) * rate)
end
if tokens < 1 then return math.max(1, math.ceil((1 - tokens) / rate)) end
tokens = tokens - 1
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate) + 1000)
return 0
"""

#: Give one token back to the bucket in hash KEYS[1] (as :data:`BUCKET`;
#: ARGV: burst, tokens per second), never past the burst: a full bucket is
#: deleted (as one that expired). Returns 0.
GIVE = """
local kept = redis.call('HMGET', KEYS[1], 't', 'at')
if not (kept[1] and kept[2]) then return 0 end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2]) / 1000
local tokens = math.min(burst, tonumber(kept[1]) + math.max(0, now - tonumber(kept[2])) * rate + 1)
if tokens >= burst then
  redis.call('DEL', KEYS[1])
  return 0
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate) + 1000)
return 0
"""

#: the password buckets: tries at once, tries per second
_BURST, _RATE = float(PASSWORD_TRIES), 1.0 / PASSWORD_EVERY


class PasswordTries:
    """The table passwords tried, counted in the Redis of ``client`` under
    ``prefix`` (see the module docstring). ``exchange`` runs one exchange
    with Redis, turning its trouble into ProtocolError ``unavailable``
    (``RedisLimits._redis``)."""

    def __init__(self, client: Any, prefix: str, exchange: Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]
                 ) -> None:
        self.client = client
        self.prefix = prefix
        self.exchange = exchange

    def of_player(self, player: str) -> str:
        """Hash: the token bucket of the table passwords ``player`` tried."""
        return f"{self.prefix}:limit:passwords:{player}"

    def of_address(self, address: str) -> str:
        """Hash: the token bucket of the table passwords tried from client ``address``."""
        return f"{self.prefix}:limit:passwords-address:{address}"

    async def take(self, player: str | None, address: str) -> None:
        """:meth:`cardhall.server.limits.Limits.password_try`: the player's
        token (when a player tries), then the address's. ProtocolError
        ``rate_limited``, ``unavailable``."""
        keys = ([self.of_player(player)] if player is not None else []) + [self.of_address(address)]
        for key in keys:
            wait = int(await self.exchange(partial(self.client.eval, BUCKET, 1, key, _BURST, _RATE)))
            if wait:
                raise too_many_passwords(wait / 1000)

    async def give(self, player: str, address: str) -> None:
        """:meth:`cardhall.server.limits.Limits.password_right`: both tokens
        back (one pipeline). Raises what Redis raises (the caller logs it)."""
        async with self.client.pipeline(transaction=False) as pipe:
            for key in (self.of_player(player), self.of_address(address)):
                pipe.eval(GIVE, 1, key, _BURST, _RATE)
            await pipe.execute()
