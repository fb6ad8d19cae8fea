-- semaphore-release.lua: give back permits a client holds, and wake the first waiter.
--
-- KEYS[1] holds     hash    client -> permits it holds; ':sum' -> permits all live clients hold
-- KEYS[2] leases    zset    client -> end of the lease on its permits, server time in ms
-- KEYS[3] queue     zset    waiter -> arrival order
-- KEYS[4] places    zset    waiter -> end of its place's lease, server time in ms
-- KEYS[5] wakeups   channel a wake-up naming the first waiter is published to
-- ARGV[1] client    "<client-uuid>": the owner of the permits
-- ARGV[2] permits   how many, > 0
--
-- Returns {1, left}  released; left is what the client still holds
--         {0, held}  the client holds fewer (held); nothing changed
local holds, leases, queue, places, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
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

-- Wake the first live waiter by name; if it cannot use what is free, the others could not either
-- (they wait behind it), and if it can, it passes the wake-up on with whatever is left.
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', places, '-inf', now_ms)) do
  redis.call('ZREM', queue, gone)
end
redis.call('ZREMRANGEBYSCORE', places, '-inf', now_ms)
local first = redis.call('ZRANGE', queue, 0, 0)[1]
if first then
  redis.call('PUBLISH', wakeups, first)
end
return {1, left}
