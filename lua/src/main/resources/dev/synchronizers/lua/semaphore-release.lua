-- semaphore-release.lua: release permits of named grants, and serve the waiters first in line with the permits now free.
--
-- KEYS[1] total     string  the total number of permits
-- KEYS[2] holds     hash    grant -> permits it holds (0: given up, kept until its lease ends); ':sum' -> permits all live grants hold
-- KEYS[3] leases    zset    grant -> end of its lease, server time in ms
-- KEYS[4] queue     zset    waiter -> arrival order; only waiters not yet served
-- KEYS[5] places    zset    waiter -> end of its place's lease, server time in ms
-- KEYS[6] asks      hash    waiter -> permits it asked for
-- KEYS[7] wakeups   channel 'granted:<waiter>' is published for each waiter served from the line
-- ARGV[1] grants    space-separated "<grant>=<keep>": each grant keeps at most <keep> permits (0: ends)
--
-- Setting what a grant keeps, rather than subtracting, makes the release idempotent: run twice (a
-- retry after a lost reply, a replayed command) it releases once.
--
-- Returns {released, missing}  released: permits released by this call; missing: space-separated grants that
--                              held no permits (lost: their lease ran out, or they were given up), "" if none
local total_key, holds, leases, queue, places, asks, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local grants = ARGV[1]

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

local released, missing = 0, {}
for grant, keep in string.gmatch(grants, '(%S+)=(%d+)') do
  keep = tonumber(keep)
  local held = tonumber(redis.call('HGET', holds, grant) or '0')
  if held <= 0 then
    missing[#missing + 1] = grant
  elseif held > keep then
    released = released + held - keep
    redis.call('HINCRBY', holds, ':sum', keep - held)
    if keep == 0 then
      redis.call('HDEL', holds, grant)
      redis.call('ZREM', leases, grant)
    else
      redis.call('HSET', holds, grant, keep)
    end
  end
end
free = free + released

-- shared: serve-line
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
    redis.call(publish, wakeups, 'granted:' .. first)
  end
end
if served_until > 0 then
  for _, key in ipairs({holds, leases}) do
    if redis.call('PTTL', key) < served_until - now_ms then
      redis.call('PEXPIRE', key, served_until - now_ms)
    end
  end
end
-- end shared

if tonumber(redis.call('HGET', holds, ':sum') or '0') <= 0 and redis.call('HLEN', holds) <= 1 then
  redis.call('DEL', holds)
end
return {released, table.concat(missing, ' ')}
