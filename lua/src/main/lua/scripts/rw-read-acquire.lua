-- rw-read-acquire.lua: take a read hold unless another owner writes or a writer waits; else record that a reader waits.
--
-- KEYS[1] write     hash    writer -> fencing token of the write hold
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] readers   zset    reader -> end of its read lease, server time in ms
-- KEYS[4] rtokens   hash    reader -> fencing token of its read hold
-- KEYS[5] queue     zset    waiting writer -> arrival order
-- KEYS[6] places    zset    waiting writer -> end of its place's lease, server time in ms
-- KEYS[7] rwait     string  set while a reader waits, so that the writer's release wakes readers
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] lease_ms  lease of the read hold, in milliseconds
--
-- Returns {1, token}    acquired; token is this read hold's fencing token
--         {0, wait_ms}  a writer holds it or waits; wait_ms: how long until that can change without a wake-up
local write, token_key, readers, rtokens, queue, places, rwait = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local owner, lease_ms = ARGV[1], tonumber(ARGV[2])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local now_ms = math.floor(now_us / 1000)

-- Readers and waiting writers whose lease ran out (dead, cut off) are dropped here.
-- include: purge-readers
-- include: purge-places
-- A member queued without a place (left half-written) has no lease to wait for and cannot be
-- served: it goes too, so that it holds up nobody behind it.
local head = redis.call('ZRANGE', queue, 0, 0)[1]
while head and not redis.call('ZSCORE', places, head) do
  redis.call('ZREM', queue, head)
  head = redis.call('ZRANGE', queue, 0, 0)[1]
end

-- The writer itself may read (downgrade); anyone else waits for the writer, and behind waiting
-- writers, so that readers arriving all the time cannot starve a writer.
local writes_self = redis.call('HEXISTS', write, owner) == 1
local blocked_wait = nil
if not writes_self and redis.call('EXISTS', write) == 1 then
  blocked_wait = redis.call('PTTL', write)
elseif not writes_self then
  local first_writer = redis.call('ZRANGE', queue, 0, 0)[1]
  if first_writer then
    blocked_wait = tonumber(redis.call('ZSCORE', places, first_writer)) - now_ms
  end
end
if blocked_wait then
  -- The reader sleeps up to blocked_wait (the writer's remaining lease, or the first writer's
  -- place), which may be far longer than its own lease: the mark must last as long, or the
  -- writer's release would find no mark and wake nobody. Never shorten the mark another reader set.
  redis.call('SET', rwait, 1, 'PX', math.max(lease_ms, blocked_wait, redis.call('PTTL', rwait)))
  return {0, blocked_wait}
end

-- Same token rule as lock-acquire.lua: server clock in microseconds, raised past the last token.
local token = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
redis.call('ZADD', readers, now_ms + lease_ms, owner)
redis.call('HSET', rtokens, owner, token)
for _, key in ipairs({readers, rtokens}) do
  if redis.call('PTTL', key) < lease_ms then
    redis.call('PEXPIRE', key, lease_ms)
  end
end
redis.call('SET', token_key, token, 'PX', math.floor((token - now_us) / 1000) + 1000)
return {1, token}
