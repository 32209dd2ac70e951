"""The cluster's Lua scripts: leases with fencing epochs, heartbeats, orphans.

A table's lease (``P:{id}:lease``) holds its owner's fencing token
``node|nonce|epoch`` with a TTL: ``node`` the node id, ``nonce`` random per
process, ``epoch`` the table's counter (``P:{id}:epoch``) incremented by every
claim. Every write of a table's data checks in its own script that the lease
still holds the writer's token (``server/store/redis.py``), so a node that
was paused or cut off past its lease writes nothing, and a counter reset by
lost Redis data cannot let it pass either (the nonce differs).
"""

from __future__ import annotations

#: Claim a table. KEYS: lease, epoch, tables. ARGV: table id, node, nonce,
#: ttl ms, mode ("0"; "1": a lease held under this node id by an earlier
#: process is taken too; "n": a new table, not stored yet), channel,
#: expected epoch ("": any). A lease reserved for this node by a handover
#: (``node|handover|epoch``) counts as free for it. Returns the new
#: token, or false when the table is not stored, the lease is held, or the
#: epoch moved on since ``expected`` (someone else owned it meanwhile).
#: Publishes ``o`` (owner changed) on the table's channel.
CLAIM = """
if ARGV[5] ~= 'n' and redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 0 then return false end
local current = redis.call('GET', KEYS[1])
if current then
  local reserved = string.sub(current, 1, #ARGV[2] + 10) == ARGV[2] .. '|handover|'
  local mine = ARGV[5] == '1' and string.sub(current, 1, #ARGV[2] + 1) == ARGV[2] .. '|'
  if not (reserved or mine) then return false end
end
if ARGV[7] ~= '' and tonumber(redis.call('GET', KEYS[2]) or '0') ~= tonumber(ARGV[7]) then return false end
local epoch = redis.call('INCR', KEYS[2])
local token = ARGV[2] .. '|' .. ARGV[3] .. '|' .. epoch
redis.call('SET', KEYS[1], token, 'PX', ARGV[4])
redis.call('PUBLISH', ARGV[6], cmsgpack.pack({'o', ARGV[2]}))
return token
"""

#: Renew leases. KEYS: the leases. ARGV: ttl ms, then one token per lease.
#: Returns the 1-based indexes of the leases that are no longer these tokens.
RENEW = """
local lost = {}
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[i + 1] then
    redis.call('PEXPIRE', KEYS[i], ARGV[1])
  else
    lost[#lost + 1] = i
  end
end
return lost
"""

#: Release a lease (handover, shutdown). KEYS: lease. ARGV: token, and for a
#: handover the node it goes to and how long it is reserved for it (ms): the
#: lease then holds ``node|handover|epoch`` (no token of that node: the old
#: owner and every other node are fenced out, and only that node may claim it
#: until the reservation expires). Returns 1 when it was this token's.
RELEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] and ARGV[2] ~= '' then
  redis.call('SET', KEYS[1], ARGV[2] .. '|handover|' .. string.match(ARGV[1], '(%d+)$'), 'PX', ARGV[3])
else
  redis.call('DEL', KEYS[1])
end
return 1
"""

#: A node's heartbeat. KEYS: nodes hash, seen sorted set. ARGV: node id, its
#: info (JSON), ttl ms. Uses Redis's clock, so nodes need no synchronised
#: clocks. Forgets nodes unseen for a minute. Returns ``{time, lapsed}``:
#: Redis's time (ms), and 1 when the node's previous heartbeat had expired or
#: is not there (the other nodes counted it gone, or Redis lost its data), else 0.
HEARTBEAT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local before = redis.call('ZSCORE', KEYS[2], ARGV[1])
local lapsed = 0
if not before or tonumber(before) < now then lapsed = 1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - 60000)
for _, id in ipairs(gone) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
end
return {now, lapsed}
"""

#: The live nodes. KEYS: nodes hash, seen sorted set. Returns a flat list
#: ``id, info, id, info...`` of the nodes whose heartbeat has not expired.
LIVE_NODES = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], now, '+inf')
local out = {}
for _, id in ipairs(ids) do
  local info = redis.call('HGET', KEYS[1], id)
  if info then
    out[#out + 1] = id
    out[#out + 1] = info
  end
end
return out
"""

#: Tables with no lease, or (ARGV[3] not "") with a lease of an earlier
#: process of node ARGV[3]. KEYS: tables. ARGV: the key prefix, at most how
#: many, node id or "". Builds lease key names from the table ids, so it reads
#: keys it was not passed: fine on one Redis; a Redis Cluster deployment runs
#: it per shard over that shard's tables (``server/STORAGE.md``).
ORPHANS = """
local out = {}
local limit = tonumber(ARGV[2])
local mine = ARGV[3] .. '|'
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local lease = redis.call('GET', ARGV[1] .. ':{' .. id .. '}:lease')
  if not lease or (ARGV[3] ~= '' and string.sub(lease, 1, #mine) == mine) then
    out[#out + 1] = id
    if #out >= limit then break end
  end
end
return out
"""
