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

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

-- include: grant-next

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
