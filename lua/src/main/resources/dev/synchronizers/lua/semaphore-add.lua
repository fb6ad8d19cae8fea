-- semaphore-add.lua: grow (or, negative, shrink) the total number of permits, and wake the first waiter on growth.
--
-- KEYS[1] total     string  the total number of permits; persists until deleted
-- KEYS[2] queue     zset    waiter -> arrival order
-- KEYS[3] wakeups   channel a wake-up naming the first waiter is published to
-- ARGV[1] delta     the change to the total
--
-- Returns {1, new_total}  changed
--         {0, total}      the total would become negative; nothing changed
local total, queue, wakeups = KEYS[1], KEYS[2], KEYS[3]
local delta = tonumber(ARGV[1])

local current = tonumber(redis.call('GET', total) or '0')
if current + delta < 0 then
  return {0, current}
end
redis.call('SET', total, current + delta)
if delta > 0 then
  local first = redis.call('ZRANGE', queue, 0, 0)[1]
  if first then
    redis.call('PUBLISH', wakeups, first)
  end
end
return {1, current + delta}
