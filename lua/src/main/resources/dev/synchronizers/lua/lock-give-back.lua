-- lock-give-back.lua: end the hold an owner may have been handed without learning it (a hand-over whose reply was lost), whatever its token.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while someone waits
-- KEYS[2] wakeups   channel 'released' is published to when a waiter is recorded
-- ARGV[1] owner     "<client-uuid>:<thread-id>" that stopped waiting without the lock
--
-- Sent only while the owner's thread neither holds nor waits for this lock in its JVM: a hold of
-- the owner is then one nobody knows of, so ending it without its token cannot end a hold in use.
--
-- Returns 1  the owner held it: released, and a recorded waiter is told
--         0  the owner did not hold it: nothing changed
local lock, wakeups = KEYS[1], KEYS[2]
local owner = ARGV[1]

-- shared: publish
-- Wake-ups go out on sharded Pub/Sub from Redis 7 on (SPUBLISH: only the channel's shard carries
-- them; clients SSUBSCRIBE), on classic Pub/Sub before (6.2 has no SPUBLISH; clients SUBSCRIBE).
local publish = redis.REDIS_VERSION_NUM and redis.REDIS_VERSION_NUM >= 0x070000 and 'SPUBLISH' or 'PUBLISH'
-- end shared

if redis.call('HEXISTS', lock, owner) == 0 then
  return 0
end
local waiting = redis.call('HEXISTS', lock, ':waiting')
redis.call('DEL', lock)
if waiting == 1 then
  redis.call(publish, wakeups, 'released')
end
return 1
