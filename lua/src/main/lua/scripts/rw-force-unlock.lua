-- rw-force-unlock.lua: release every hold of a read-write lock, the writer's and every reader's (administrative).
--
-- KEYS[1] write     hash    writer -> fencing token of the write hold
-- KEYS[2] readers   zset    reader -> end of its read lease, server time in ms
-- KEYS[3] rtokens   hash    reader -> fencing token of its read hold
-- KEYS[4] queue     zset    waiting writer -> arrival order
-- KEYS[5] places    zset    waiting writer -> end of its place's lease, server time in ms
-- KEYS[6] rwait     string  set while a reader waits
-- KEYS[7] wakeups   channel 'released' for every waiting reader; a writer woken by name hears its owner on its
--                           client's channel, '<wakeups>:<client>' (the client: the owner up to its first ':')
--
-- Returns 1  something was held and is released
--         0  nothing was held
local write, readers, rtokens, queue, places, rwait, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local released = redis.call('DEL', write, readers, rtokens)
if released == 0 then
  return 0
end
-- Skip writers whose place ran out: waking a dead one would leave the live ones sleeping.
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
-- include: purge-places
local first = redis.call('ZRANGE', queue, 0, 0)[1]
if first then
  redis.call(publish, wakeups .. ':' .. (string.match(first, '^([^:]*):') or first), first)
elseif redis.call('DEL', rwait) == 1 then
  redis.call(publish, wakeups, 'released')
end
return 1
