-- rw-force-unlock.lua: release every hold of a read-write lock, the writer's and every reader's (administrative).
--
-- KEYS[1] write     hash    writer -> fencing token of the write hold
-- KEYS[2] readers   zset    reader -> end of its read lease, server time in ms
-- KEYS[3] rtokens   hash    reader -> fencing token of its read hold
-- KEYS[4] queue     zset    waiting writer -> arrival order
-- KEYS[5] rwait     string  set while a reader waits
-- KEYS[6] wakeups   channel the first writer's owner, or 'released' for every reader, is published to
--
-- Returns 1  something was held and is released
--         0  nothing was held
local write, readers, rtokens, queue, rwait, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]

local released = redis.call('DEL', write, readers, rtokens)
if released == 0 then
  return 0
end
local first = redis.call('ZRANGE', queue, 0, 0)[1]
if first then
  redis.call('PUBLISH', wakeups, first)
elseif redis.call('DEL', rwait) == 1 then
  redis.call('PUBLISH', wakeups, 'released')
end
return 1
