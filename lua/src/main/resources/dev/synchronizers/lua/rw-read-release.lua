-- rw-read-release.lua: release a read hold; the last reader out wakes the first waiting writer.
--
-- KEYS[1] readers   zset    reader -> end of its read lease, server time in ms
-- KEYS[2] rtokens   hash    reader -> fencing token of its read hold
-- KEYS[3] queue     zset    waiting writer -> arrival order
-- KEYS[4] places    zset    waiting writer -> end of its place's lease, server time in ms
-- KEYS[5] wakeups   channel the woken writer's owner is published to
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] token     fencing token of the read hold being released
--
-- Returns {1, woken}  released; woken is the writer woken by name, or ''
--         {0, ''}     the owner does not hold this read hold (lease ran out, forced, never held)
local readers, rtokens, queue, places, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, token = ARGV[1], ARGV[2]

if redis.call('HGET', rtokens, owner) ~= token then
  return {0, ''}
end
redis.call('ZREM', readers, owner)
redis.call('HDEL', rtokens, owner)

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
-- Readers whose lease ran out do not keep a writer waiting.
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', readers, '-inf', now_ms)) do
  redis.call('HDEL', rtokens, gone)
end
redis.call('ZREMRANGEBYSCORE', readers, '-inf', now_ms)
if redis.call('ZCARD', readers) > 0 then
  return {1, ''}
end
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', places, '-inf', now_ms)) do
  redis.call('ZREM', queue, gone)
end
redis.call('ZREMRANGEBYSCORE', places, '-inf', now_ms)
local first = redis.call('ZRANGE', queue, 0, 0)[1]
if first then
  redis.call('PUBLISH', wakeups, first)
  return {1, first}
end
return {1, ''}
