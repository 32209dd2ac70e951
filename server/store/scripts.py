"""The Redis store's Lua scripts: the group commit (events, full states or
the input log), delete, quarantine, partition markers, key migration.

Every script that writes a table's data checks its fencing token (the
table's lease) first and writes nothing of a table whose token is not the
current one (``server/STORAGE.md``, "The commit script", "Cluster"). Every
script touches the keys of one partition only (one hash slot of a Redis
Cluster), named in its KEYS, except the group commit on a standalone Redis
(tables of several partitions in one call) and the migration from the layout
before partitions (standalone only).
"""

from __future__ import annotations

import hashlib

from cardhall.server.store.format import EVENT_VERSION

#: error prefix the commit script returns when the marker key is missing
EMPTY = "CARDHALL_EMPTY"
#: stream entry field holding an event record (named by the record's format version)
EVENT_FIELD = str(EVENT_VERSION).encode()

#: KEYS, per table (11): its partition's meta, tables and lobby, then its
#: state, events, hands, handseq, lease, epoch, log, logn (every key of one
#: table in its partition's slot: on a Redis Cluster the store sends the
#: tables of one partition per call, on a standalone Redis any mix). ARGV:
#: mode ("c": commit, refused without the marker; "r": rewrite), stream
#: bound, lease TTL (ms), then per table (in KEYS order): id, fencing token
#: ("" without a cluster), state (msgpack bytes as they are stored; "" for a
#: checkpoint of the input log alone), one msgpack list ``[events, hands,
#: log, logged]`` of its new events ``[seq, record, ...]``, finished hands
#: ``[seq, hand, ...]`` and input log steps ``[n, entry, ...]`` (records,
#: hands and entries are msgpack bytes themselves) and the number of the last
#: step it holds or covers, a sharded channel (in the table's slot) and a
#: message to ``SPUBLISH`` with the table's write ("" for none: the cluster
#: publishes the table's events and view changes on the table's own channel,
#: so a stored event is never left unpublished), and the table's public info
#: ("" when unchanged). In commit mode every table's partition marker is
#: checked before anything is written: one missing (that partition's shard,
#: or the whole Redis, lost its data) refuses the whole call with
#: :data:`EMPTY`. A state replaces the log (it covers every step up to
#: ``logged``); without one, each step above the stored ``logn`` is appended.
#: The state travels as its own argument: Redis then copies it once, instead
#: of unpacking it from a larger message. Returns the ids of the
#: tables refused because their token is not the current lease; in rewrite
#: mode a free lease is taken with the token (and the epoch counter raised to
#: the token's) before writing.
COMMIT_SCRIPT = f"""
local bound, ttl = ARGV[2], ARGV[3]
if ARGV[1] == 'c' then
  local checked = {{}}
  for k = 1, #KEYS, 11 do
    local meta = KEYS[k]
    if not checked[meta] then
      if redis.call('EXISTS', meta) == 0 then
        return redis.error_reply('{EMPTY} the store holds no cardhall data (' .. meta .. ')')
      end
      checked[meta] = true
    end
  end
end
-- RPUSH each item of ``items`` ({{number, bytes, ...}}) numbered above the counter
-- key's value (each written once), then raise the counter to the last one
local function append_new(list, counter, items)
  local done = tonumber(redis.call('GET', counter) or '0')
  for i = 1, #items, 2 do
    if items[i] > done then
      redis.call('RPUSH', list, items[i + 1])
      done = items[i]
    end
  end
  redis.call('SET', counter, string.format('%d', done))
end
local k = 1
local refused = {{}}
for a = 4, #ARGV, 7 do
  local id, token = ARGV[a], ARGV[a + 1]
  local tkey, lobkey = KEYS[k + 1], KEYS[k + 2]
  local skey, ekey, hkey, hskey, lkey, epkey = KEYS[k + 3], KEYS[k + 4], KEYS[k + 5], KEYS[k + 6], KEYS[k + 7], KEYS[k + 8]
  local logkey, lognkey = KEYS[k + 9], KEYS[k + 10]
  k = k + 11
  local owned = true
  if token ~= '' then
    local current = redis.call('GET', lkey)
    if current ~= token then
      if ARGV[1] == 'r' and not current then
        redis.call('SET', lkey, token, 'PX', ttl)
        local epoch = tonumber(string.match(token, '(%d+)$'))
        if tonumber(redis.call('GET', epkey) or '0') < epoch then redis.call('SET', epkey, epoch) end
      else
        owned = false
      end
    end
  end
  if owned then
    local parts = cmsgpack.unpack(ARGV[a + 3])
    local events, hands, steps, logged = parts[1], parts[2], parts[3], parts[4]
    if #events > 0 then
      local last = 0
      local top = redis.call('XREVRANGE', ekey, '+', '-', 'COUNT', 1)
      if top[1] then last = tonumber(string.match(top[1][1], '^%d+')) end
      for i = 1, #events, 2 do
        local seq = events[i]
        if seq > last then
          redis.call('XADD', ekey, 'MAXLEN', '~', bound, string.format('%d-0', seq), '{EVENT_VERSION}', events[i + 1])
        end
      end
    end
    if ARGV[a + 2] ~= '' then
      redis.call('SET', skey, ARGV[a + 2])
      redis.call('DEL', logkey)
      redis.call('SET', lognkey, string.format('%d', logged))
    elseif #steps > 0 then
      append_new(logkey, lognkey, steps)
    end
    if #hands > 0 then append_new(hkey, hskey, hands) end
    redis.call('SADD', tkey, id)
    if ARGV[a + 6] ~= '' then redis.call('HSET', lobkey, id, ARGV[a + 6]) end
    if ARGV[a + 4] ~= '' then redis.call('SPUBLISH', ARGV[a + 4], ARGV[a + 5]) end
  else
    refused[#refused + 1] = id
  end
end
return refused
"""

#: Forgets a closed table (its state, input log, stream, lease, epoch, lobby entry; its
#: hands stay), only while ``token`` is its lease (or with no token: no
#: cluster). KEYS: tables, lobby (of the table's partition), state, events, lease, epoch, log, logn.
#: ARGV: id, token. Returns 1, or 0 when refused.
DELETE_SCRIPT = """
if ARGV[2] ~= '' and redis.call('GET', KEYS[5]) ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8])
redis.call('SREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
"""

#: Sets an unreadable table aside (out of its partition's index and lobby, its
#: reason in the partition's quarantine, its keys untouched), only while ``token`` is its
#: lease (or with no token). KEYS: tables, lobby, quarantine (of the table's partition), lease. ARGV: id,
#: note, token. Returns 1, or 0 when refused; the lease is released.
QUARANTINE_SCRIPT = """
if ARGV[3] ~= '' and redis.call('GET', KEYS[4]) ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('SREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if ARGV[3] ~= '' then redis.call('DEL', KEYS[4]) end
return 1
"""

#: Marks a partition as holding cardhall's data. KEYS: the partition's meta.
#: ARGV: format version, time, a new generation (kept only when the marker has
#: none: the first node to mark after a loss sets it). Returns the generation.
MARK_SCRIPT = """
redis.call('HSET', KEYS[1], 'format', ARGV[1], 'marked', ARGV[2])
redis.call('HSETNX', KEYS[1], 'generation', ARGV[3])
return redis.call('HGET', KEYS[1], 'generation')
"""

#: Moves a member of a partition's table index that is no table id (not
#: UTF-8) to the partition's quarantine. KEYS: tables, quarantine (of one
#: partition). ARGV: the member, its printable name, the note. Returns 1 when
#: the member was still in the index.
SET_ASIDE_SCRIPT = """
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return redis.call('SREM', KEYS[1], ARGV[1])
"""

#: Moves one table of the layout before partitions (one standalone Redis
#: only: its keys lie in many slots) to its partition: each of its keys whose
#: new name is free is renamed from its name under ``P:{id}`` or, for the four
#: oldest kinds, from its name before hash tags (``P:t:{id}``, ``:events``,
#: ``:hands``, ``:handseq``); its id moves from the old index to its
#: partition's, its lobby and quarantine entries to its partition's hashes.
#: KEYS: the 8 new names (state, events, hands, handseq, log, logn, lease,
#: epoch), the 8 names under ``P:{id}``, the 4 names before hash tags, the
#: old tables, lobby and quarantine, the partition's tables, lobby and
#: quarantine. ARGV: the id. Returns the number of keys and entries moved (0
#: when already moved: idempotent, and atomic per table, so nodes starting
#: together may both run it).
MIGRATE_TABLE_SCRIPT = """
local id = ARGV[1]
local moved = 0
for i = 1, 8 do
  if redis.call('EXISTS', KEYS[i]) == 0 then
    local from = nil
    if redis.call('EXISTS', KEYS[i + 8]) == 1 then
      from = KEYS[i + 8]
    elseif i <= 4 and redis.call('EXISTS', KEYS[i + 16]) == 1 then
      from = KEYS[i + 16]
    end
    if from then
      redis.call('RENAME', from, KEYS[i])
      moved = moved + 1
    end
  end
end
if redis.call('SREM', KEYS[21], id) == 1 then
  redis.call('SADD', KEYS[24], id)
  moved = moved + 1
end
for _, pair in ipairs({{22, 25}, {23, 26}}) do
  local entry = redis.call('HGET', KEYS[pair[1]], id)
  if entry then
    redis.call('HSETNX', KEYS[pair[2]], id, entry)
    redis.call('HDEL', KEYS[pair[1]], id)
    moved = moved + 1
  end
end
return moved
"""
#: the commit script's SHA1 (``EVALSHA``)
COMMIT_SHA = hashlib.sha1(COMMIT_SCRIPT.encode()).hexdigest()
