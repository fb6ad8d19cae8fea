-- rw-read-release.lua: release a read hold; the last reader out wakes the first waiting writer.
--
-- KEYS[1] write     hash    writer -> fencing token of the write hold
-- KEYS[2] readers   zset    reader -> end of its read lease, server time in ms
-- KEYS[3] rtokens   hash    reader -> fencing token of its read hold
-- KEYS[4] queue     zset    waiting writer -> arrival order
-- KEYS[5] places    zset    waiting writer -> end of its place's lease, server time in ms
-- KEYS[6] wakeups   channel 'released' for every waiting reader; a writer woken by name hears its owner on its
--                           client's channel, '<wakeups>:<client>' (the client: the owner up to its first ':')
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] token     fencing token of the read hold being released
--
-- Returns {1, woken}  released; woken is the writer woken by name, or ''
--         {0, ''}     the owner does not hold this read hold (lease ran out, forced, never held)
local write, readers, rtokens, queue, places, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local owner, token = ARGV[1], ARGV[2]

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

-- A read hold whose lease ran out is lost even if no acquire has purged it yet: a writer may be
-- past it already, so it must not look released (nor wake writers) as if it had been held.
local lease_end = tonumber(redis.call('ZSCORE', readers, owner) or '0')
local held = redis.call('HGET', rtokens, owner) == token
if held and lease_end <= now_ms then
  redis.call('ZREM', readers, owner)
  redis.call('HDEL', rtokens, owner)
end
if not held or lease_end <= now_ms then
  return {0, ''}
end
redis.call('ZREM', readers, owner)
redis.call('HDEL', rtokens, owner)
-- Readers whose lease ran out do not keep a writer waiting.
-- include: purge-readers
-- A writer still holding its write hold (it downgraded) is not waited for: wake nobody yet.
if redis.call('ZCARD', readers) > 0 or redis.call('EXISTS', write) == 1 then
  return {1, ''}
end
-- include: purge-places
local first = redis.call('ZRANGE', queue, 0, 0)[1]
if first then
  redis.call(publish, wakeups .. ':' .. (string.match(first, '^([^:]*):') or first), first)
  return {1, first}
end
return {1, ''}
