-- fair-lock-release.lua: release the owner's hold (its last local hold) and hand the lock to the first live fair waiter.
-- A release serves only fair waiters here; the non-fair lock's release is lock-release.lua.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while a non-fair waiter waits
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] queue     zset    fair waiter -> arrival order
-- KEYS[4] places    zset    fair waiter -> end of its place's lease, server time in ms
-- KEYS[5] wakeups   channel 'released' for non-fair waiters; 'granted:<owner>=<token>' for the fair waiter served
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] token     fencing token of the hold being released
--
-- The waiter served holds the lock from here on, with a new token, leased until its place would
-- have ended (its client renews it from then); it learns so from the message, or, if that is lost,
-- from its next try, which finds it holding the lock and takes it afresh.
--
-- Returns {1, next, token}  released; next is the fair waiter now holding the lock, with its token
--         {1, ''}           released; no fair waiter waits
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

-- Matching the token, not just the owner, makes a late or repeated release (a reply lost to a
-- timeout, a command replayed after a reconnect) unable to end a newer hold of the same thread.
if redis.call('HGET', lock, owner) ~= token then
  return {0, ''}
end
local waiting = redis.call('HEXISTS', lock, ':waiting')
redis.call('DEL', lock)
-- Publish only when someone waits: an unlock nobody waits for costs no Pub/Sub traffic.
if waiting == 1 then
  redis.call(publish, wakeups, 'released')
end

-- Serve the first fair waiter whose place is still leased: one waiter, not the herd, and no
-- second round trip for it.
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
  return {1, ''}
end
local place_end = tonumber(redis.call('ZSCORE', places, next_waiter) or '0')
redis.call('ZREM', queue, next_waiter)
redis.call('ZREM', places, next_waiter)
if place_end <= now_ms then
  -- Queued without a place: left half-written; drop it and let the next release serve the rest.
  return {1, ''}
end
-- Same token rule as lock-acquire.lua: server clock in microseconds, raised past the last token.
local next_token = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
redis.call('HSET', lock, next_waiter, next_token)
redis.call('PEXPIRE', lock, place_end - now_ms)
redis.call('SET', token_key, next_token, 'PX', math.floor((next_token - now_us) / 1000) + 1000)
redis.call(publish, wakeups, 'granted:' .. next_waiter .. '=' .. string.format('%d', next_token))
return {1, next_waiter, next_token}
