-- rw-write-acquire.lua: take the write hold if nobody else reads or writes and the owner is the first waiting writer; else queue it.
--
-- KEYS[1] write     hash    writer -> fencing token of the write hold
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] readers   zset    reader -> end of its read lease, server time in ms
-- KEYS[4] rtokens   hash    reader -> fencing token of its read hold
-- KEYS[5] queue     zset    waiting writer -> arrival order
-- KEYS[6] places    zset    waiting writer -> end of its place's lease, server time in ms
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] lease_ms  lease of the write hold, in milliseconds
-- ARGV[3] place_ms  lease of a place in the queue, in milliseconds
--
-- Returns {1, token}    acquired; token is this write hold's fencing token
--         {0, wait_ms}  queued (or kept in place); wait_ms: how long until that can change without a wake-up
local write, token_key, readers, rtokens, queue, places = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local owner, lease_ms, place_ms = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local now_ms = math.floor(now_us / 1000)

-- Same purge as rw-read-acquire.lua.
-- include: purge-readers
-- include: purge-places
-- A member queued without a place (left half-written) has no lease to wait for and cannot be
-- served: it goes too, so that it holds up nobody behind it.
local head = redis.call('ZRANGE', queue, 0, 0)[1]
while head and not redis.call('ZSCORE', places, head) do
  redis.call('ZREM', queue, head)
  head = redis.call('ZRANGE', queue, 0, 0)[1]
end

-- An owner still on record as the writer (its last release reply was lost) takes it afresh.
local writes_self = redis.call('HEXISTS', write, owner) == 1
local wait_ms = nil
if not writes_self and redis.call('EXISTS', write) == 1 then
  wait_ms = redis.call('PTTL', write)
elseif not writes_self then
  -- Readers other than the owner itself (a writer may hold a read hold after downgrading) block it.
  local live = redis.call('ZRANGE', readers, 0, -1, 'WITHSCORES')
  for i = 1, #live, 2 do
    if live[i] ~= owner then
      local left = tonumber(live[i + 1]) - now_ms
      wait_ms = wait_ms and math.min(wait_ms, left) or left
    end
  end
  local first = redis.call('ZRANGE', queue, 0, 0)[1]
  if not wait_ms and first and first ~= owner then
    wait_ms = tonumber(redis.call('ZSCORE', places, first)) - now_ms
  end
end

if not wait_ms then
  redis.call('ZREM', queue, owner)
  redis.call('ZREM', places, owner)
  -- Same token rule as lock-acquire.lua.
  local token = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
  redis.call('DEL', write)
  redis.call('HSET', write, owner, token)
  redis.call('PEXPIRE', write, lease_ms)
  redis.call('SET', token_key, token, 'PX', math.floor((token - now_us) / 1000) + 1000)
  return {1, token}
end

if not redis.call('ZSCORE', queue, owner) then
  local tail = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')[2]
  redis.call('ZADD', queue, (tonumber(tail) or 0) + 1, owner)
end
redis.call('ZADD', places, now_ms + place_ms, owner)
for _, key in ipairs({queue, places}) do
  if redis.call('PTTL', key) < place_ms then
    redis.call('PEXPIRE', key, place_ms)
  end
end
return {0, wait_ms}
