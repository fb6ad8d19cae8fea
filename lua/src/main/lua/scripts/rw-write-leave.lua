-- rw-write-leave.lua: take a waiting writer out of the queue (timed out, interrupted) and wake who it held back.
--
-- KEYS[1] write     hash    writer -> fencing token of the write hold
-- KEYS[2] queue     zset    waiting writer -> arrival order
-- KEYS[3] places    zset    waiting writer -> end of its place's lease, server time in ms
-- KEYS[4] rwait     string  set while a reader waits
-- KEYS[5] wakeups   channel 'released' for every waiting reader; a writer woken by name hears its owner on its
--                           client's channel, '<wakeups>:<client>' (the client: the owner up to its first ':')
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
--
-- Returns 1  the writer had a place and left it
--         0  it had no place
local write, queue, places, rwait, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner = ARGV[1]

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

-- Writers whose place ran out go first, so that "first" means the first live writer.
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
-- include: purge-places

local was_first = redis.call('ZRANGE', queue, 0, 0)[1] == owner
local removed = redis.call('ZREM', queue, owner)
redis.call('ZREM', places, owner)
if was_first and redis.call('EXISTS', write) == 0 then
  -- The next writer may go now; with none left, the readers it kept out may.
  local next_first = redis.call('ZRANGE', queue, 0, 0)[1]
  if next_first then
    redis.call(publish, wakeups .. ':' .. (string.match(next_first, '^([^:]*):') or next_first), next_first)
  elseif redis.call('DEL', rwait) == 1 then
    redis.call(publish, wakeups, 'released')
  end
end
return removed
