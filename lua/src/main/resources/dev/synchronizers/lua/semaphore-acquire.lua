-- semaphore-acquire.lua: take permits for a waiter if they are free and nobody is in line, claim permits granted to it while it waited, or queue it.
--
-- KEYS[1] total     string  the total number of permits
-- KEYS[2] holds     hash    client -> permits it holds; ':sum' -> permits all live clients hold
-- KEYS[3] leases    zset    client -> end of the lease on its permits, server time in ms
-- KEYS[4] queue     zset    waiter -> arrival order; only waiters not yet served
-- KEYS[5] places    zset    waiter -> end of its place's lease, server time in ms; queued or granted
-- KEYS[6] asks      hash    waiter -> permits it asked for; queued or granted
-- KEYS[7] wakeups   channel 'granted:<waiter>' is published for each waiter served from the line
-- ARGV[1] client    "<client-uuid>": the owner of the permits
-- ARGV[2] waiter    "<client-uuid>:<thread-id>:<attempt>": one acquisition attempt, unique
-- ARGV[3] permits   how many, > 0
-- ARGV[4] lease_ms  lease of the client's permits, in milliseconds
-- ARGV[5] place_ms  lease of a place in the queue, in milliseconds
--
-- A waiter served from the line (by this call or an earlier one) leaves the queue but keeps its
-- place and ask until it claims them here or by message; its client holds the permits meanwhile.
--
-- Returns {1, available}  acquired (now, or granted earlier); available is what is left for others
--         {0, wait_ms}    queued (or kept in place); wait_ms: how long until permits can come free
--                         without a wake-up (the earliest holder lease or first waiter's place ends)
--         {-1, total}     more permits asked for than the total; the waiter left the line
local total_key, holds, leases, queue, places, asks, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local client, waiter, permits = ARGV[1], ARGV[2], tonumber(ARGV[3])
local lease_ms, place_ms = tonumber(ARGV[4]), tonumber(ARGV[5])

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

-- A queued waiter asking for more than the total leaves the line before it is served, so that it
-- neither blocks the waiters behind it nor is told about itself.
if permits > total and redis.call('ZSCORE', queue, waiter) then
  redis.call('ZREM', queue, waiter)
  redis.call('ZREM', places, waiter)
  redis.call('HDEL', asks, waiter)
end

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
    if first ~= waiter then
      redis.call('PUBLISH', wakeups, 'granted:' .. first)
    end
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

-- Granted while it waited (just now, or before): claim, and lease the client's permits a full
-- lease from now, as the caller counts it from this call.
if redis.call('ZSCORE', places, waiter) and not redis.call('ZSCORE', queue, waiter) then
  redis.call('ZREM', places, waiter)
  redis.call('HDEL', asks, waiter)
  redis.call('ZADD', leases, 'GT', now_ms + lease_ms, client)
  for _, key in ipairs({holds, leases}) do
    if redis.call('PTTL', key) < lease_ms then
      redis.call('PEXPIRE', key, lease_ms)
    end
  end
  return {1, free}
end

if permits > total then
  redis.call('ZREM', queue, waiter)
  redis.call('ZREM', places, waiter)
  redis.call('HDEL', asks, waiter)
  return {-1, total}
end

if free >= permits and not redis.call('ZRANGE', queue, 0, 0)[1] then
  redis.call('HINCRBY', holds, client, permits)
  redis.call('HINCRBY', holds, ':sum', permits)
  redis.call('ZADD', leases, 'GT', now_ms + lease_ms, client)
  for _, key in ipairs({holds, leases}) do
    if redis.call('PTTL', key) < lease_ms then
      redis.call('PEXPIRE', key, lease_ms)
    end
  end
  return {1, free - permits}
end

if not redis.call('ZSCORE', queue, waiter) then
  local tail = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')[2]
  redis.call('ZADD', queue, (tonumber(tail) or 0) + 1, waiter)
  redis.call('HSET', asks, waiter, permits)
end
redis.call('ZADD', places, now_ms + place_ms, waiter)
for _, key in ipairs({queue, places, asks}) do
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
local first = redis.call('ZRANGE', queue, 0, 0)[1]
if first ~= waiter then
  wait_ms = math.min(wait_ms, tonumber(redis.call('ZSCORE', places, first)) - now_ms)
end
return {0, wait_ms}
