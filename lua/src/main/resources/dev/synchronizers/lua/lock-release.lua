-- lock-release.lua: release the owner's hold (its last local hold) and wake a waiter if one waits.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while someone waits
-- KEYS[2] wakeups   channel 'released' is published to when a waiter is recorded
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] token     fencing token of the hold being released
--
-- Returns {1, ''}  released
--         {0, ''}  the owner does not hold this hold: its lease ran out, it was forced, or it never held it
local lock, wakeups = KEYS[1], KEYS[2]
local owner, token = ARGV[1], ARGV[2]

-- shared: publish
-- Wake-ups go out on sharded Pub/Sub from Redis 7 on (SPUBLISH: only the channel's shard carries
-- them; clients SSUBSCRIBE), on classic Pub/Sub before (6.2 has no SPUBLISH; clients SUBSCRIBE).
local publish = redis.REDIS_VERSION_NUM and redis.REDIS_VERSION_NUM >= 0x070000 and 'SPUBLISH' or 'PUBLISH'
-- end shared

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
return {1, ''}
