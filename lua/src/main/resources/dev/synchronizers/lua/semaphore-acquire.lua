-- semaphore-acquire.lua: take permits for a client if they are free and the waiter is first in line; else queue the waiter.
--
-- KEYS[1] total     string  the total number of permits
-- KEYS[2] holds     hash    client -> permits it holds; ':sum' -> permits all live clients hold
-- KEYS[3] leases    zset    client -> end of the lease on its permits, server time in ms
-- KEYS[4] queue     zset    waiter -> arrival order
-- KEYS[5] places    zset    waiter -> end of its place's lease, server time in ms
-- KEYS[6] wakeups   channel a wake-up naming the next waiter is published to
-- ARGV[1] client    "<client-uuid>": the owner of the permits
-- ARGV[2] waiter    "<client-uuid>:<thread-id>": the thread that waits
-- ARGV[3] permits   how many, > 0
-- ARGV[4] lease_ms  lease of the client's permits, in milliseconds
-- ARGV[5] place_ms  lease of a place in the queue, in milliseconds
--
-- Returns {1, available}  acquired; available is what is left for others
--         {0, wait_ms}    queued (or kept in place); wait_ms: how long until permits can come free
--                         without a wake-up (the earliest holder lease or first waiter's place ends)
--         {-1, total}     more permits asked for than the total; nothing changed
local total_key, holds, leases, queue, places, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local client, waiter, permits = ARGV[1], ARGV[2], tonumber(ARGV[3])
local lease_ms, place_ms = tonumber(ARGV[4]), tonumber(ARGV[5])

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

-- Permits of clients whose lease ran out (dead, cut off) return to the pool here.
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', leases, '-inf', now_ms)) do
  redis.call('HINCRBY', holds, ':sum', -tonumber(redis.call('HGET', holds, gone) or '0'))
  redis.call('HDEL', holds, gone)
end
redis.call('ZREMRANGEBYSCORE', leases, '-inf', now_ms)
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', places, '-inf', now_ms)) do
  redis.call('ZREM', queue, gone)
end
redis.call('ZREMRANGEBYSCORE', places, '-inf', now_ms)

local total = tonumber(redis.call('GET', total_key) or '0')
if permits > total then
  redis.call('ZREM', queue, waiter)
  redis.call('ZREM', places, waiter)
  return {-1, total}
end
local available = total - tonumber(redis.call('HGET', holds, ':sum') or '0')
local first = redis.call('ZRANGE', queue, 0, 0)[1]

if (first == nil or first == waiter) and available >= permits then
  redis.call('ZREM', queue, waiter)
  redis.call('ZREM', places, waiter)
  redis.call('HINCRBY', holds, client, permits)
  redis.call('HINCRBY', holds, ':sum', permits)
  redis.call('ZADD', leases, now_ms + lease_ms, client)
  for _, key in ipairs({holds, leases}) do
    if redis.call('PTTL', key) < lease_ms then
      redis.call('PEXPIRE', key, lease_ms)
    end
  end
  -- A release wakes several waiters at once; one woken behind this waiter may have tried before
  -- this one was served and gone back to sleep: with permits left over, wake the next in line.
  local next_waiter = redis.call('ZRANGE', queue, 0, 0)[1]
  if next_waiter and available - permits > 0 then
    redis.call('PUBLISH', wakeups, next_waiter)
  end
  return {1, available - permits}
end

if not redis.call('ZSCORE', queue, waiter) then
  local tail = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')[2]
  redis.call('ZADD', queue, (tonumber(tail) or 0) + 1, waiter)
end
redis.call('ZADD', places, now_ms + place_ms, waiter)
for _, key in ipairs({queue, places}) do
  if redis.call('PTTL', key) < place_ms then
    redis.call('PEXPIRE', key, place_ms)
  end
end

-- Sleep no longer than until permits can come free without a wake-up.
local wait_ms = place_ms
local earliest = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')[2]
if earliest then
  wait_ms = math.min(wait_ms, tonumber(earliest) - now_ms)
end
first = redis.call('ZRANGE', queue, 0, 0)[1]
if first ~= waiter then
  wait_ms = math.min(wait_ms, tonumber(redis.call('ZSCORE', places, first)) - now_ms)
end
return {0, wait_ms}
