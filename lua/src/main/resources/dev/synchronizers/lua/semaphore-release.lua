-- semaphore-release.lua: give back permits a client holds, and serve the waiters first in line with the permits now free.
--
-- KEYS[1] total     string  the total number of permits
-- KEYS[2] holds     hash    client -> permits it holds; ':sum' -> permits all live clients hold
-- KEYS[3] leases    zset    client -> end of the lease on its permits, server time in ms
-- KEYS[4] queue     zset    waiter -> arrival order; only waiters not yet served
-- KEYS[5] places    zset    waiter -> end of its place's lease, server time in ms; queued or granted
-- KEYS[6] asks      hash    waiter -> permits it asked for; queued or granted
-- KEYS[7] wakeups   channel 'granted:<waiter>' is published for each waiter served from the line
-- ARGV[1] client    "<client-uuid>": the owner of the permits
-- ARGV[2] permits   how many, > 0
-- ARGV[3] claimed   space-separated waiters of this client that claimed their grant by message: their records go
--
-- Returns {1, left}  released; left is what the client still holds
--         {0, held}  the client holds fewer (held); nothing else changed (the claimed records still go)
local total_key, holds, leases, queue, places, asks, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local client, permits, claimed = ARGV[1], tonumber(ARGV[2]), ARGV[3]

for granted in string.gmatch(claimed, '%S+') do
  if not redis.call('ZSCORE', queue, granted) then
    redis.call('ZREM', places, granted)
    redis.call('HDEL', asks, granted)
  end
end

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

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

-- Permits of clients whose lease ran out (dead, cut off) return to the pool; places that ran out
-- (dead waiters, unclaimed grants) are dropped.
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', leases, '-inf', now_ms)) do
  redis.call('HINCRBY', holds, ':sum', -tonumber(redis.call('HGET', holds, gone) or '0'))
  redis.call('HDEL', holds, gone)
end
redis.call('ZREMRANGEBYSCORE', leases, '-inf', now_ms)
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', places, '-inf', now_ms)) do
  redis.call('ZREM', queue, gone)
  redis.call('HDEL', asks, gone)
end
redis.call('ZREMRANGEBYSCORE', places, '-inf', now_ms)

local total = tonumber(redis.call('GET', total_key) or '0')
local free = total - tonumber(redis.call('HGET', holds, ':sum') or '0')

-- Serve the line: while the first waiter's ask fits, its client takes the permits, leased until
-- the waiter's place would have ended, and the waiter is told by name.
local served_until = 0
while free > 0 do
  local first = redis.call('ZRANGE', queue, 0, 0)[1]
  if not first then
    break
  end
  local ask = tonumber(redis.call('HGET', asks, first) or '0')
  local place_end = tonumber(redis.call('ZSCORE', places, first) or '0')
  if ask > total then
    -- Asks for more than the total now holds (it shrank): let it learn so and leave the line.
    redis.call('PUBLISH', wakeups, first)
    break
  end
  if ask > free then
    break
  end
  redis.call('ZREM', queue, first)
  if ask > 0 and place_end > now_ms then
    local owner = string.match(first, '^[^:]*')
    redis.call('HINCRBY', holds, owner, ask)
    redis.call('HINCRBY', holds, ':sum', ask)
    redis.call('ZADD', leases, 'GT', place_end, owner)
    served_until = math.max(served_until, place_end)
    free = free - ask
    redis.call('PUBLISH', wakeups, 'granted:' .. first)
  else
    -- A queued waiter without a place or an ask was left half-written: drop it.
    redis.call('ZREM', places, first)
    redis.call('HDEL', asks, first)
  end
end
if served_until > 0 then
  for _, key in ipairs({holds, leases}) do
    if redis.call('PTTL', key) < served_until - now_ms then
      redis.call('PEXPIRE', key, served_until - now_ms)
    end
  end
end

if tonumber(redis.call('HGET', holds, ':sum') or '0') <= 0 and redis.call('HLEN', holds) <= 1 then
  redis.call('DEL', holds)
end
return {1, left}
