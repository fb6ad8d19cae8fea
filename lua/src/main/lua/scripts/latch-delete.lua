-- latch-delete.lua: delete a latch that is still counting down, releasing its waiters as if it had reached zero.
--
-- KEYS[1] latch     string  the count; exists only while it is above zero
-- KEYS[2] epoch     string  when the count last reached zero, server time in microseconds, raised past the one before
-- KEYS[3] wakeups   channel 'released' is published to when the latch is deleted
-- ARGV[1] keep_ms   how long the epoch outlives the deletion, in milliseconds
--
-- Returns 1  deleted
--         0  the latch was at zero already
local latch, epoch, wakeups = KEYS[1], KEYS[2], KEYS[3]
local keep_ms = tonumber(ARGV[1])

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

if redis.call('DEL', latch) == 0 then
  return 0
end
-- As a crossing of zero does (latch-count-down.lua), so that waiters that look late still return.
local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local next_epoch = math.max(now_us, tonumber(redis.call('GET', epoch) or '0') + 1)
redis.call('SET', epoch, string.format('%d', next_epoch), 'PX', keep_ms)
redis.call(publish, wakeups, 'released')
return 1
