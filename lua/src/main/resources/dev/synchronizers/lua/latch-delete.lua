-- latch-delete.lua: delete a latch that is still counting down, releasing its waiters as if it had reached zero.
--
-- KEYS[1] latch     string  the count; exists only while it is above zero
-- KEYS[2] wakeups   channel 'released' is published to when the latch is deleted
--
-- Returns 1  deleted
--         0  the latch was at zero already
local latch, wakeups = KEYS[1], KEYS[2]

if redis.call('DEL', latch) == 0 then
  return 0
end
redis.call('PUBLISH', wakeups, 'released')
return 1
