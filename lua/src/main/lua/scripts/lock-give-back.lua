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

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

-- include: grant-next

if redis.call('HEXISTS', lock, owner) == 0 then
  return 0
end
local waiting = redis.call('HEXISTS', lock, ':waiting')
redis.call('DEL', lock)
if not grant_next(lock, token_key, queue, places, wakeups) and waiting == 1 then
  redis.call(publish, wakeups, 'released')
end
return 1
