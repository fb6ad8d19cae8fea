-- semaphore-acquire.lua: take permits for a waiter if they are free and nobody is in line, claim permits granted to it while it waited, or queue it.
--
-- KEYS[1] total     string  the total number of permits
-- KEYS[2] holds     hash    grant -> permits it holds (0: given up, kept until its lease ends); ':sum' -> permits all live grants hold
-- KEYS[3] leases    zset    grant -> end of its lease, server time in ms
-- KEYS[4] queue     zset    waiter -> arrival order; only waiters not yet served
-- KEYS[5] places    zset    waiter -> end of its place's lease, server time in ms
-- KEYS[6] asks      hash    waiter -> permits it asked for
-- KEYS[7] wakeups   channel 'granted:<waiter>' is published for each waiter served from the line
-- ARGV[1] waiter    "<client-uuid>:<thread-id>:<attempt>": one acquisition, unique; it is also the name of its grant
-- ARGV[2] permits   how many, > 0
-- ARGV[3] lease_ms  lease of the permits, in milliseconds
-- ARGV[4] place_ms  lease of a place in the queue, in milliseconds
--
-- Permits are counted per grant, never per client: a grant is renewed, released and given back
-- under its own name, so nothing done for one acquisition can touch another's permits, and every
-- follow-up of a call whose reply was lost (semaphore-leave.lua) is idempotent.
--
-- Returns {1, available}  acquired (now, granted from the line earlier, or by an earlier run of this same
--                         call); available is what is left for others
--         {0, wait_ms}    queued (or kept in place); wait_ms: how long until permits can come free
--                         without a wake-up (the earliest grant lease or first waiter's place ends)
--         {-1, total}     more permits asked for than the total; the waiter left the line
--         {-2, 0}         this acquisition was given up before this call ran; nothing changed
local total_key, holds, leases, queue, places, asks, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local waiter, permits = ARGV[1], tonumber(ARGV[2])
local lease_ms, place_ms = tonumber(ARGV[3]), tonumber(ARGV[4])

-- shared: publish
-- Wake-ups go out on sharded Pub/Sub from Redis 7 on (SPUBLISH: only the channel's shard carries
-- them; clients SSUBSCRIBE), on classic Pub/Sub before (6.2 has no SPUBLISH; clients SUBSCRIBE).
local publish = redis.REDIS_VERSION_NUM and redis.REDIS_VERSION_NUM >= 0x070000 and 'SPUBLISH' or 'PUBLISH'
-- end shared

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

-- Grants whose lease ran out (dead or cut-off clients, given-up marks) return to the pool; places
-- that ran out (dead waiters) are dropped.
-- shared: purge-grants
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', leases, '-inf', now_ms)) do
  -- 0 - n, not -n: Lua writes minus zero as "-0", which HINCRBY refuses.
  redis.call('HINCRBY', holds, ':sum', 0 - tonumber(redis.call('HGET', holds, gone) or '0'))
  redis.call('HDEL', holds, gone)
end
redis.call('ZREMRANGEBYSCORE', leases, '-inf', now_ms)
-- end shared
-- shared: purge-semaphore-places
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', places, '-inf', now_ms)) do
  redis.call('ZREM', queue, gone)
  redis.call('HDEL', asks, gone)
end
redis.call('ZREMRANGEBYSCORE', places, '-inf', now_ms)
-- end shared

local total = tonumber(redis.call('GET', total_key) or '0')
local free = total - tonumber(redis.call('HGET', holds, ':sum') or '0')

-- Given up before this call ran (a late run of a call whose caller left): change nothing.
if tonumber(redis.call('HGET', holds, waiter) or '1') <= 0 then
  return {-2, 0}
end

-- A queued waiter asking for more than the total leaves the line before it is served, so that it
-- neither blocks the waiters behind it nor is told about itself.
if permits > total then
  redis.call('ZREM', queue, waiter)
  redis.call('ZREM', places, waiter)
  redis.call('HDEL', asks, waiter)
end

-- Serve the line: while the first waiter's ask fits, it takes the permits as its own grant, leased
-- until its place would have ended, and is told by name. A first waiter without a live place or
-- an ask (dead, or left half-written) cannot be served and is dropped.
local served_until = 0
while true do
  local first = redis.call('ZRANGE', queue, 0, 0)[1]
  if not first then
    break
  end
  local ask = tonumber(redis.call('HGET', asks, first) or '0')
  local place_end = tonumber(redis.call('ZSCORE', places, first) or '0')
  if ask <= 0 or place_end <= now_ms then
    redis.call('ZREM', queue, first)
    redis.call('ZREM', places, first)
    redis.call('HDEL', asks, first)
  elseif free <= 0 then
    break
  elseif ask > total then
    -- Asks for more than the total now holds (it shrank): let it learn so and leave the line.
    redis.call(publish, wakeups, first)
    break
  elseif ask > free then
    break
  else
    redis.call('ZREM', queue, first)
    redis.call('ZREM', places, first)
    redis.call('HDEL', asks, first)
    redis.call('HSET', holds, first, ask)
    redis.call('HINCRBY', holds, ':sum', ask)
    redis.call('ZADD', leases, place_end, first)
    served_until = math.max(served_until, place_end)
    free = free - ask
    if first ~= waiter then
      redis.call(publish, wakeups, 'granted:' .. first)
    end
  end
end
if served_until > 0 then
  for _, key in ipairs({holds, leases}) do
    if redis.call('PTTL', key) < served_until - now_ms then
      redis.call('PEXPIRE', key, served_until - now_ms)
    end
  end
end

-- Granted (from the line, just now or earlier, or by an earlier run of this same call): claim it
-- with a full lease from now, as the caller counts it from this call.
if redis.call('HGET', holds, waiter) then
  redis.call('ZADD', leases, now_ms + lease_ms, waiter)
  for _, key in ipairs({holds, leases}) do
    if redis.call('PTTL', key) < lease_ms then
      redis.call('PEXPIRE', key, lease_ms)
    end
  end
  return {1, free}
end

if permits > total then
  return {-1, total}
end

if free >= permits and not redis.call('ZRANGE', queue, 0, 0)[1] then
  redis.call('HSET', holds, waiter, permits)
  redis.call('HINCRBY', holds, ':sum', permits)
  redis.call('ZADD', leases, now_ms + lease_ms, waiter)
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
  wait_ms = math.min(wait_ms, tonumber(redis.call('ZSCORE', places, first) or now_ms + place_ms) - now_ms)
end
return {0, math.max(wait_ms, 1)}
