-- semaphore-leave.lua: take a waiter out of the queue (timed out, interrupted) and wake the next if the leaver was first.
--
-- KEYS[1] queue     zset    waiter -> arrival order
-- KEYS[2] places    zset    waiter -> end of its place's lease, server time in ms
-- KEYS[3] wakeups   channel a wake-up naming the new first waiter is published to
-- ARGV[1] waiter    "<client-uuid>:<thread-id>"
--
-- Returns 1  the waiter had a place and left it
--         0  the waiter had no place
local queue, places, wakeups = KEYS[1], KEYS[2], KEYS[3]
local waiter = ARGV[1]

-- Waiters whose place ran out go first, so that "first" means the first live waiter.
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', places, '-inf', now_ms)) do
  redis.call('ZREM', queue, gone)
end
redis.call('ZREMRANGEBYSCORE', places, '-inf', now_ms)

local was_first = redis.call('ZRANGE', queue, 0, 0)[1] == waiter
local removed = redis.call('ZREM', queue, waiter)
redis.call('ZREM', places, waiter)
-- The first waiter may have been holding back permits others can use: let the next one look.
if was_first then
  local next_first = redis.call('ZRANGE', queue, 0, 0)[1]
  if next_first then
    redis.call('PUBLISH', wakeups, next_first)
  end
end
return removed
