"""The Redis store's Lua scripts: the group commit (events, full states or the input log), delete, quarantine, key migration.

Every script that writes a table's data checks its fencing token (the
table's lease) first and writes nothing of a table whose token is not the
current one (``server/STORAGE.md``, "The commit script", "Cluster").
"""

from __future__ import annotations

import hashlib

from cardhall.server.store.format import EVENT_VERSION

#: error prefix the commit script returns when the marker key is missing
EMPTY = "CARDHALL_EMPTY"
#: stream entry field holding an event record (named by the record's format version)
EVENT_FIELD = str(EVENT_VERSION).encode()

#: KEYS: meta, tables, lobby, then per table: state, events, hands, handseq,
#: lease, epoch, log, logn. ARGV: mode ("c": commit, refused without the
#: marker; "r": rewrite), stream bound, lease TTL (ms), then per table (in
#: KEYS order): id, fencing token ("" without a cluster), state (msgpack bytes
#: as they are stored; "" for a checkpoint of the input log alone), one
#: msgpack list ``[events, hands, log, logged]`` of its new events ``[seq,
#: record, ...]``, finished hands ``[seq, hand, ...]`` and input log steps
#: ``[n, entry, ...]`` (records, hands and entries are msgpack bytes
#: themselves) and the number of the last step it holds or covers, a channel
#: and a message to publish with the table's write ("" for none: the cluster
#: publishes the table's events and view changes on the table's own channel,
#: so a stored event is never left unpublished), and the table's public info
#: ("" when unchanged). A state replaces the log (it covers every step up to
#: ``logged``); without one, each step above the stored ``logn`` is appended.
#: The state travels as its own argument: Redis then copies it once, instead
#: of unpacking it from a larger message. Returns the ids of the
#: tables refused because their token is not the current lease; in rewrite
#: mode a free lease is taken with the token (and the epoch counter raised to
#: the token's) before writing.
COMMIT_SCRIPT = f"""
if ARGV[1] == 'c' and redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('{EMPTY} the store holds no cardhall data')
end
local bound, ttl = ARGV[2], ARGV[3]
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
local k = 4
local refused = {{}}
for a = 4, #ARGV, 7 do
  local id, token = ARGV[a], ARGV[a + 1]
  local skey, ekey, hkey, hskey, lkey, epkey = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5]
  local logkey, lognkey = KEYS[k + 6], KEYS[k + 7]
  k = k + 8
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
    redis.call('SADD', KEYS[2], id)
    if ARGV[a + 6] ~= '' then redis.call('HSET', KEYS[3], id, ARGV[a + 6]) end
    if ARGV[a + 4] ~= '' then redis.call('PUBLISH', ARGV[a + 4], ARGV[a + 5]) end
  else
    refused[#refused + 1] = id
  end
end
return refused
"""

#: Forgets a closed table (its state, input log, stream, lease, epoch, lobby entry; its
#: hands stay), only while ``token`` is its lease (or with no token: no
#: cluster). KEYS: tables, lobby, state, events, lease, epoch, log, logn.
#: ARGV: id, token. Returns 1, or 0 when refused.
DELETE_SCRIPT = """
if ARGV[2] ~= '' and redis.call('GET', KEYS[5]) ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8])
redis.call('SREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
"""

#: Sets an unreadable table aside (out of ``P:tables`` and the lobby, its
#: reason in ``P:quarantine``, its keys untouched), only while ``token`` is its
#: lease (or with no token). KEYS: tables, lobby, quarantine, lease. ARGV: id,
#: note, token. Returns 1, or 0 when refused; the lease is released.
QUARANTINE_SCRIPT = """
if ARGV[3] ~= '' and redis.call('GET', KEYS[4]) ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('SREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if ARGV[3] ~= '' then redis.call('DEL', KEYS[4]) end
return 1
"""

#: Moves the keys of one table stored before keys were hash-tagged
#: (``P:t:{id}``, ``...:events``, ``...:hands``, ``...:handseq``) to their
#: names now. KEYS: the four old names, then the four new ones. Returns the
#: number of keys moved (0 when already moved).
MIGRATE_KEYS_SCRIPT = """
local moved = 0
for i = 1, 4 do
  if redis.call('EXISTS', KEYS[i]) == 1 and redis.call('EXISTS', KEYS[i + 4]) == 0 then
    redis.call('RENAME', KEYS[i], KEYS[i + 4])
    moved = moved + 1
  end
end
return moved
"""
COMMIT_SHA = hashlib.sha1(COMMIT_SCRIPT.encode()).hexdigest()
