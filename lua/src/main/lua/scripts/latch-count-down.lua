-- latch-count-down.lua: decrement the count; at zero, delete the latch, mark the crossing and wake every waiter of every client.
--
-- KEYS[1] latch     string  the count; exists only while it is above zero
-- KEYS[2] epoch     string  when the count last reached zero, server time in microseconds, raised past the one before
-- KEYS[3] wakeups   channel 'released' is published to when the count reaches zero
-- ARGV[1] keep_ms   how long the epoch outlives the crossing, in milliseconds
--
-- A waiter notes the epoch when it starts; an epoch that moved on tells it the count reached zero
-- since, even if the latch was armed again before it looked (CountDownLatch's await returns then).
--
-- Returns the count after the call (0 if it was at zero already: nothing changed)
local latch, epoch, wakeups = KEYS[1], KEYS[2], KEYS[3]
local keep_ms = tonumber(ARGV[1])

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

if redis.call('EXISTS', latch) == 0 then
  return 0
end
local count = redis.call('DECR', latch)
if count <= 0 then
  -- A latch at zero leaves no key behind: "absent" and "zero" are the same state.
  redis.call('DEL', latch)
  -- Server time, so that an epoch that expired and starts again is still later than any noted.
  local now = redis.call('TIME')
  local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local next_epoch = math.max(now_us, tonumber(redis.call('GET', epoch) or '0') + 1)
  redis.call('SET', epoch, string.format('%d', next_epoch), 'PX', keep_ms)
  redis.call(publish, wakeups, 'released')
  return 0
end
return count
