-- latch-count-down.lua: decrement the count; at zero, delete the latch and wake every waiter of every client.
--
-- KEYS[1] latch     string  the count; exists only while it is above zero
-- KEYS[2] wakeups   channel 'released' is published to when the count reaches zero
--
-- Returns the count after the call (0 if it was at zero already: nothing changed)
local latch, wakeups = KEYS[1], KEYS[2]

if redis.call('EXISTS', latch) == 0 then
  return 0
end
local count = redis.call('DECR', latch)
if count <= 0 then
  -- A latch at zero leaves no key behind: "absent" and "zero" are the same state.
  redis.call('DEL', latch)
  redis.call('PUBLISH', wakeups, 'released')
  return 0
end
return count
