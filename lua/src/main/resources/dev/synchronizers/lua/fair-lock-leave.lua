-- fair-lock-leave.lua: take a waiter that gives up (timed out, interrupted) out of the queue; a lock handed to it and not yet taken goes to the next waiter.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] queue     zset    waiting owner -> arrival order
-- KEYS[4] places    zset    waiting owner -> end of its place's lease, server time in ms
-- KEYS[5] wakeups   channel 'granted:<owner>=<token>' for the waiter served next
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
--
-- A waiting owner that is on record in the lock was handed it by a release (a thread never waits
-- for a lock it holds): leaving gives it back.
--
-- Returns 1  the owner had a place and left it
--         2  the owner had been handed the lock: it is passed on to the next live waiter, if any
--         0  the owner had no place (already purged)
local lock, token_key, queue, places, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner = ARGV[1]

-- shared: publish
-- Wake-ups go out on sharded Pub/Sub from Redis 7 on (SPUBLISH: only the channel's shard carries
-- them; clients SSUBSCRIBE), on classic Pub/Sub before (6.2 has no SPUBLISH; clients SUBSCRIBE).
local publish = redis.REDIS_VERSION_NUM and redis.REDIS_VERSION_NUM >= 0x070000 and 'SPUBLISH' or 'PUBLISH'
-- end shared

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local was_head = redis.call('ZRANGE', queue, 0, 0)[1] == owner
local result = redis.call('ZREM', queue, owner)
redis.call('ZREM', places, owner)
if redis.call('HEXISTS', lock, owner) == 1 then
  redis.call('DEL', lock)
  result = 2
end
if result == 0 or result == 1 and not was_head or redis.call('EXISTS', lock) == 1 then
  return result
end

-- The lock is free and the leaver was next in line (or had it): serve the first live waiter, as
-- fair-lock-release.lua does, so that it does not wait for nobody.
local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local now_ms = math.floor(now_us / 1000)
-- shared: purge-places
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', places, '-inf', now_ms)) do
  redis.call('ZREM', queue, gone)
end
redis.call('ZREMRANGEBYSCORE', places, '-inf', now_ms)
-- end shared
local next_waiter = redis.call('ZRANGE', queue, 0, 0)[1]
if not next_waiter then
  return result
end
local place_end = tonumber(redis.call('ZSCORE', places, next_waiter) or '0')
redis.call('ZREM', queue, next_waiter)
redis.call('ZREM', places, next_waiter)
if place_end <= now_ms then
  return result
end
local next_token = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
redis.call('HSET', lock, next_waiter, next_token)
redis.call('PEXPIRE', lock, place_end - now_ms)
redis.call('SET', token_key, next_token, 'PX', math.floor((next_token - now_us) / 1000) + 1000)
redis.call(publish, wakeups, 'granted:' .. next_waiter .. '=' .. string.format('%d', next_token))
return result
