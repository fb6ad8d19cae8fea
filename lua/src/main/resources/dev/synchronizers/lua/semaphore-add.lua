-- semaphore-add.lua: grow (or, negative, shrink) the total number of permits; on growth wake as many waiters as permits are free.
--
-- KEYS[1] total     string  the total number of permits; persists until deleted
-- KEYS[2] holds     hash    client -> permits it holds; ':sum' -> permits all live clients hold
-- KEYS[3] queue     zset    waiter -> arrival order
-- KEYS[4] wakeups   channel a wake-up naming each woken waiter is published to
-- ARGV[1] delta     the change to the total
--
-- Returns {1, new_total}  changed
--         {0, total}      the total would become negative; nothing changed
local total, holds, queue, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local delta = tonumber(ARGV[1])

local current = tonumber(redis.call('GET', total) or '0')
if current + delta < 0 then
  return {0, current}
end
redis.call('SET', total, current + delta)
-- Same wake rule as semaphore-release.lua: as many waiters from the front as permits are free.
local free = current + delta - tonumber(redis.call('HGET', holds, ':sum') or '0')
if delta > 0 and free > 0 then
  for _, waiter in ipairs(redis.call('ZRANGE', queue, 0, math.min(free, 64) - 1)) do
    redis.call('PUBLISH', wakeups, waiter)
  end
end
return {1, current + delta}
