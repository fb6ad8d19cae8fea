-- fair-lock-release.lua: release the owner's hold (its last local hold) and hand the lock to the first live fair waiter.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] queue     zset    fair waiter -> arrival order
-- KEYS[4] places    zset    fair waiter -> end of its place's lease, server time in ms
-- KEYS[5] wakeups   channel '<wakeups>:<client>' carries 'granted:<owner>=<token>' to the waiter served
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] token     fencing token of the hold being released
--
-- The waiter served holds the lock from here on, with a new token, leased until its place would
-- have ended (its client renews it from then); it learns so from the message, or, if that is lost,
-- from its next try, which finds it holding the lock and takes it afresh.
--
-- Returns {1, next, token}  released; next is the fair waiter now holding the lock, with its token
--         {1, ''}           released; no fair waiter could be served
--         {0, ''}           the owner does not hold this hold: its lease ran out, it was forced, or it never held it
local lock, token_key, queue, places, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, token = ARGV[1], ARGV[2]

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

-- Matching the token, not just the owner, makes a late or repeated release (a reply lost to a
-- timeout, a command replayed after a reconnect) unable to end a newer hold of the same thread.
if redis.call('HGET', lock, owner) ~= token then
  return {0, ''}
end
redis.call('DEL', lock)
local next_waiter, next_token = grant_next(lock, token_key, queue, places, wakeups)
if next_waiter then
  return {1, next_waiter, next_token}
end
return {1, ''}
