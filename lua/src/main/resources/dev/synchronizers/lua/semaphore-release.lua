-- semaphore-release.lua: give back permits a client holds, and wake as many waiters, first in line first, as permits are free.
--
-- KEYS[1] total     string  the total number of permits
-- KEYS[2] holds     hash    client -> permits it holds; ':sum' -> permits all live clients hold
-- KEYS[3] leases    zset    client -> end of the lease on its permits, server time in ms
-- KEYS[4] queue     zset    waiter -> arrival order
-- KEYS[5] places    zset    waiter -> end of its place's lease, server time in ms
-- KEYS[6] wakeups   channel a wake-up naming each woken waiter is published to
-- ARGV[1] client    "<client-uuid>": the owner of the permits
-- ARGV[2] permits   how many, > 0
--
-- Returns {1, left}  released; left is what the client still holds
--         {0, held}  the client holds fewer (held); nothing changed
local total_key, holds, leases, queue, places, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local client, permits = ARGV[1], tonumber(ARGV[2])

local held = tonumber(redis.call('HGET', holds, client) or '0')
if held < permits then
  return {0, held}
end
local left = held - permits
redis.call('HINCRBY', holds, ':sum', -permits)
if left == 0 then
  redis.call('HDEL', holds, client)
  redis.call('ZREM', leases, client)
else
  redis.call('HSET', holds, client, left)
end
if tonumber(redis.call('HGET', holds, ':sum') or '0') <= 0 and redis.call('HLEN', holds) <= 1 then
  redis.call('DEL', holds)
end

-- Wake, by name, as many live waiters from the front of the line as there are free permits: each
-- asks for at least one, and those further back could not go before them anyway.
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', places, '-inf', now_ms)) do
  redis.call('ZREM', queue, gone)
end
redis.call('ZREMRANGEBYSCORE', places, '-inf', now_ms)
local free = tonumber(redis.call('GET', total_key) or '0') - tonumber(redis.call('HGET', holds, ':sum') or '0')
if free > 0 then
  for _, waiter in ipairs(redis.call('ZRANGE', queue, 0, math.min(free, 64) - 1)) do
    redis.call('PUBLISH', wakeups, waiter)
  end
end
return {1, left}
