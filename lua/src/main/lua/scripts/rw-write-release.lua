-- rw-write-release.lua: release the write hold; wake the first waiting writer, or else every waiting reader.
--
-- KEYS[1] write     hash    writer -> fencing token of the write hold
-- KEYS[2] queue     zset    waiting writer -> arrival order
-- KEYS[3] places    zset    waiting writer -> end of its place's lease, server time in ms
-- KEYS[4] rwait     string  set while a reader waits
-- KEYS[5] wakeups   channel 'released' for every waiting reader; a writer woken by name hears its owner on its
--                           client's channel, '<wakeups>:<client>' (the client: the owner up to its first ':')
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] token     fencing token of the hold being released
--
-- Returns {1, woken}  released; woken is the writer woken by name, 'released' if the readers were, or ''
--         {0, ''}     the owner does not hold this write hold (lease ran out, forced, never held)
local write, queue, places, rwait, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, token = ARGV[1], ARGV[2]

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

-- Token-checked, as in lock-release.lua: a late release cannot end a newer hold.
if redis.call('HGET', write, owner) ~= token then
  return {0, ''}
end
redis.call('DEL', write)

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
-- include: purge-places
-- Writers first: readers could not get past a waiting writer anyway.
local first = redis.call('ZRANGE', queue, 0, 0)[1]
if first then
  redis.call(publish, wakeups .. ':' .. (string.match(first, '^([^:]*):') or first), first)
  return {1, first}
end
if redis.call('DEL', rwait) == 1 then
  redis.call(publish, wakeups, 'released')
  return {1, 'released'}
end
return {1, ''}
