-- fair-lock-leave.lua: take a waiter that gives up (timed out, interrupted) out of the line; a lock handed to it and not yet taken goes to the next waiter.
-- Serves the fair lock's line and the non-fair lock's (one place per client, its first waiter).
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] queue     zset    waiting owner -> arrival order
-- KEYS[4] places    zset    waiting owner -> end of its place's lease, server time in ms
-- KEYS[5] wakeups   channel '<wakeups>:<client>' carries 'granted:<owner>=<token>' to the waiter served next
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

-- shared: grant-next
-- Hands the free lock to the first waiter in line whose place is still leased and whose client
-- hears the waiter's channel, '<wakeups>:<client>': one message to one client, not to the herd,
-- and nothing for the others to do. A waiter whose client is not subscribed there (gone, cut off,
-- switching masters) leaves the line, as one whose place ran out does: a live one comes back with
-- its next try, which its resubscription makes. The hold gets a new token and is leased until the
-- waiter's place would have ended (its client renews it from then); the waiter learns of it from
-- the message, or, if that is lost, from its next try, which finds it holding the lock.
-- Returns the waiter served and the hold's token, or nothing if nobody could be served.
local function grant_next(lock, token_key, queue, places, wakeups)
  local now = redis.call('TIME')
  local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local now_ms = math.floor(now_us / 1000)
  -- Places that ran out are dropped as they come to the front, not searched for on every release.
  local next_token = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
  while true do
    local next_waiter = redis.call('ZRANGE', queue, 0, 0)[1]
    if not next_waiter then
      return nil
    end
    local place_end = tonumber(redis.call('ZSCORE', places, next_waiter) or '0')
    redis.call('ZREM', queue, next_waiter)
    redis.call('ZREM', places, next_waiter)
    -- The client is the part of the owner string before its first ':' (Owner.java).
    local client = string.match(next_waiter, '^([^:]*):') or next_waiter
    -- The message goes out before the hold is written; nobody sees either before the script ends.
    if place_end > now_ms and redis.call(publish, wakeups .. ':' .. client,
        'granted:' .. next_waiter .. '=' .. string.format('%d', next_token)) > 0 then
      redis.call('HSET', lock, next_waiter, next_token)
      redis.call('PEXPIRE', lock, place_end - now_ms)
      redis.call('SET', token_key, next_token, 'PX', math.floor((next_token - now_us) / 1000) + 1000)
      return next_waiter, next_token
    end
  end
end
-- end shared

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

-- The lock is free and the leaver was next in line (or had it): serve the first live waiter, as a
-- release does, so that it does not wait for nobody.
grant_next(lock, token_key, queue, places, wakeups)
return result
