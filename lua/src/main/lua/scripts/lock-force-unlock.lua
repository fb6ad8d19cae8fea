-- lock-force-unlock.lua: release the lock whoever holds it (administrative) and wake whoever waits.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while a non-fair waiter waits
-- KEYS[2] queue     zset    waiting owner -> arrival order (fair: every waiter; non-fair: the first of each client)
-- KEYS[3] places    zset    waiting owner -> end of its place's lease, server time in ms
-- KEYS[4] wakeups   channel 'released' for waiters that only marked the lock (clients of earlier
--                           versions); '<wakeups>:<client>' carries the owner of the first waiter in line
--
-- Returns {1, ''}      the lock was held and is released
--         {1, client}  the lock was held and is released, and among its fields was the cache of that client
--                      id (docs/design/lock-caching.md), which the caller tells at once: that client's
--                      threads take the lock locally while they believe the cache is in Redis
--         {0, ''}      the lock was not held
local lock, queue, places, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

if redis.call('EXISTS', lock) == 0 then
  return {0, ''}
end
local cacher = ''
for _, field in ipairs(redis.call('HKEYS', lock)) do
  if string.sub(field, -6) == ':cache' then
    cacher = string.sub(field, 1, -7)
  end
end
local waiting = redis.call('HEXISTS', lock, ':waiting')
redis.call('DEL', lock)
if waiting == 1 then
  redis.call(publish, wakeups, 'released')
end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
-- include: purge-places
local next_waiter = redis.call('ZRANGE', queue, 0, 0)[1]
if next_waiter then
  -- Named on its client's channel, '<wakeups>:<client>' (the client: the owner up to its first ':').
  redis.call(publish, wakeups .. ':' .. (string.match(next_waiter, '^([^:]*):') or next_waiter), next_waiter)
end
return {1, cacher}
