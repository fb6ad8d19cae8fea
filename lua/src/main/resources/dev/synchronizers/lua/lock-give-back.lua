-- lock-give-back.lua: end the hold an owner may have been handed without learning it (a hand-over whose reply was lost), whatever its token.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while someone waits
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] queue     zset    waiting owner -> arrival order (the non-fair lock's line; empty for a Redlock's)
-- KEYS[4] places    zset    waiting owner -> end of its place's lease, server time in ms
-- KEYS[5] wakeups   channel as in lock-release.lua: the waiter served hears '<wakeups>:<client>',
--                           waiters that only marked the lock '<wakeups>'
-- ARGV[1] owner     "<client-uuid>:<thread-id>" that stopped waiting without the lock
--
-- Sent only while the owner's thread neither holds nor waits for this lock in its JVM: a hold of
-- the owner is then one nobody knows of, so ending it without its token cannot end a hold in use.
--
-- Returns 1  the owner held it: released, and handed to the first waiter in line, or marked waiters told
--         0  the owner did not hold it: nothing changed
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

if redis.call('HEXISTS', lock, owner) == 0 then
  return 0
end
local waiting = redis.call('HEXISTS', lock, ':waiting')
redis.call('DEL', lock)
if not grant_next(lock, token_key, queue, places, wakeups) and waiting == 1 then
  redis.call(publish, wakeups, 'released')
end
return 1
