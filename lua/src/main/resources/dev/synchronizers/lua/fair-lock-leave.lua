-- fair-lock-leave.lua: take a waiter out of the queue (timed out, interrupted) and wake the next one if that matters.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold
-- KEYS[2] queue     zset    waiting owner -> arrival order
-- KEYS[3] places    zset    waiting owner -> end of its place's lease, server time in ms
-- KEYS[4] wakeups   channel a wake-up naming the new first waiter is published to
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
--
-- Returns 1  the owner had a place and left it
--         0  the owner had no place (already purged)
local lock, queue, places, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner = ARGV[1]

local was_head = redis.call('ZRANGE', queue, 0, 0)[1] == owner
local removed = redis.call('ZREM', queue, owner)
redis.call('ZREM', places, owner)
-- A free lock whose first waiter leaves would otherwise wait for nobody: wake the next one.
if was_head and redis.call('EXISTS', lock) == 0 then
  -- Skip waiters whose place ran out: waking a dead one would leave the live ones sleeping.
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', places, '-inf', now_ms)) do
    redis.call('ZREM', queue, gone)
  end
  redis.call('ZREMRANGEBYSCORE', places, '-inf', now_ms)
  local next_head = redis.call('ZRANGE', queue, 0, 0)[1]
  if next_head then
    redis.call('PUBLISH', wakeups, next_head)
  end
end
return removed
