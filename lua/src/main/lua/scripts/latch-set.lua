-- latch-set.lua: set the count of a latch that is at zero (or was never set).
--
-- KEYS[1] latch     string  the count; exists only while it is above zero
-- ARGV[1] count     the count to set, > 0
--
-- Returns 1  set
--         0  the latch is still counting down; nothing changed
local latch = KEYS[1]
local count = ARGV[1]

if redis.call('SET', latch, count, 'NX') then
  return 1
end
return 0
