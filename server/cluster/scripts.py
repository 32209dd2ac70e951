"""The cluster's Lua scripts: leases with fencing epochs, heartbeats, orphans.

A table's lease (``P:{tag}:id:lease``) holds its owner's fencing token
``node|nonce|epoch`` with a TTL: ``node`` the node id, ``nonce`` random per
process, ``epoch`` the table's counter (``P:{tag}:id:epoch``) incremented by
every claim. Every write of a table's data checks in its own script that the
lease still holds the writer's token (``server/store/redis.py``), so a node
that was paused or cut off past its lease writes nothing, and a counter reset
by lost Redis data cannot let it pass either (the nonce differs).

Each script touches the keys of one hash slot only (``server/STORAGE.md``,
"Cluster"): one table's or one partition's keys (``{tag}``, the partition's
hash tag: :mod:`cardhall.server.store.keys`), or the node registry's
(``{nodes}``); a key name a script builds itself is one of the same
partition. Channels are sharded (``SPUBLISH``), and a table's channel is in
its partition's slot too.
"""

from __future__ import annotations

#: Claim a table. KEYS: lease, epoch, its partition's tables set. ARGV: table id, node, nonce,
#: ttl ms, mode ("0"; "1": a lease held under this node id by an earlier
#: process is taken too; "n": a new table, not stored yet), channel,
#: expected epoch ("": any). A lease reserved for this node by a handover
#: (``node|handover|epoch``) counts as free for it. Returns the new
#: token, or false when the table is not stored, the lease is held, or the
#: epoch moved on since ``expected`` (someone else owned it meanwhile).
#: Publishes ``o`` (owner changed) on the table's channel (``SPUBLISH``: the
#: channel is in the table's slot).
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
redis.call('SPUBLISH', ARGV[6], cmsgpack.pack({'o', ARGV[2]}))
return token
"""

#: Renew leases. KEYS: the leases, all of one partition (the caller sends one
#: call per partition: :meth:`~cardhall.server.cluster.leases.Leases.renew`). ARGV: ttl ms, then one token per lease.
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

#: A node's heartbeat. KEYS: nodes hash, seen sorted set, placing hash (one slot: ``{nodes}``). ARGV:
#: node id, its info (JSON, with ``tables``: the tables it serves now), ttl ms, then the ids of the
#: tables placed on it (PLACE) that its ``tables`` now counts, or whose creation failed: their
#: entries in the placing hash go, in the same script, so a placed table is counted once, either
#: there or in the heartbeat. Uses Redis's clock, so nodes need no synchronised clocks. Forgets
#: nodes unseen for a minute. Returns ``{time, lapsed}``: Redis's time (ms), and 1 when the node's
#: previous heartbeat had expired or is not there (the other nodes counted it gone, or Redis lost
#: its data), else 0.
HEARTBEAT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local before = redis.call('ZSCORE', KEYS[2], ARGV[1])
local lapsed = 0
if not before or tonumber(before) < now then lapsed = 1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
for i = 4, #ARGV do redis.call('HDEL', KEYS[3], ARGV[i]) end
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - 60000)
for _, id in ipairs(gone) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
end
return {now, lapsed}
"""

#: Place a new table on the live node (not stopping) with the fewest tables:
#: its heartbeat's ``tables`` plus the tables placed on it since (the placing
#: hash), so placements from every node at once spread evenly. KEYS: nodes
#: hash, seen sorted set, placing hash. ARGV: table id, the asking node (chosen
#: on a tie: no hop), ms after which a placing entry is dropped (a creation
#: that never reported back). Returns the node id (recorded in the placing
#: hash), or false when no node is live.
PLACE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local load = {}
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], now, '+inf')
for _, id in ipairs(ids) do
  local info = redis.call('HGET', KEYS[1], id)
  if info then
    local ok, data = pcall(cjson.decode, info)
    if ok and type(data) == 'table' and not data['stopping'] then load[id] = tonumber(data['tables']) or 0 end
  end
end
local flat = redis.call('HGETALL', KEYS[3])
for i = 1, #flat, 2 do
  local node, at = string.match(flat[i + 1], '^(.*)|(%d+)$')
  if not at or now - tonumber(at) > tonumber(ARGV[3]) then
    redis.call('HDEL', KEYS[3], flat[i])
  elseif load[node] then
    load[node] = load[node] + 1
  end
end
local best = nil
if load[ARGV[2]] then best = ARGV[2] end
table.sort(ids)
for _, id in ipairs(ids) do
  if load[id] and (best == nil or load[id] < load[best]) then best = id end
end
if best == nil then return false end
redis.call('HSET', KEYS[3], ARGV[1], best .. '|' .. now)
return best
"""

#: The live nodes and the tables placed on them that their heartbeat does not
#: count yet. KEYS: nodes hash, seen sorted set, placing hash. ARGV: ms after
#: which a placing entry no longer counts (as PLACE's). Returns
#: ``{nodes, placing}``: a flat list ``id, info, id, info...`` of the nodes
#: whose heartbeat has not expired, and a flat list ``table, node...`` of the
#: placing entries younger than ARGV[1] (PLACE's count of each node's load,
#: read by the rebalancer so that it sees a burst of creations as placement does).
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
local placing = {}
local flat = redis.call('HGETALL', KEYS[3])
for i = 1, #flat, 2 do
  local node, at = string.match(flat[i + 1], '^(.*)|(%d+)$')
  if at and now - tonumber(at) <= tonumber(ARGV[1]) then
    placing[#placing + 1] = flat[i]
    placing[#placing + 1] = node
  end
end
return {out, placing}
"""

#: A node's registration. KEYS: nodes hash, seen sorted set. ARGV: node id.
#: Returns ``{info or false, expiry (ms) or false}``, read together (a script:
#: redis-py 8.1's cluster transactions fail on replies it converts, such as ``ZSCORE``'s).
HOLDER = """
return {redis.call('HGET', KEYS[1], ARGV[1]), redis.call('ZSCORE', KEYS[2], ARGV[1])}
"""

#: Tables of one partition with no lease, or (ARGV[3] not "") with a lease
#: of an earlier process of node ARGV[3]. KEYS: the partition's tables set.
#: ARGV: the stem of the partition's table keys (``P:{tag}:``), at most how
#: many, node id or "". Builds each lease's key name (stem, id, ``:lease``):
#: a key of the same partition, so of the same slot. Run once per partition
#: (:meth:`~cardhall.server.cluster.leases.Leases.orphans`).
ORPHANS = """
local out = {}
local limit = tonumber(ARGV[2])
local mine = ARGV[3] .. '|'
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local lease = redis.call('GET', ARGV[1] .. id .. ':lease')
  if not lease or (ARGV[3] ~= '' and string.sub(lease, 1, #mine) == mine) then
    out[#out + 1] = id
    if #out >= limit then break end
  end
end
return out
"""
