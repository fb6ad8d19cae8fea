-- lock-force-unlock.lua: release the lock whoever holds it (administrative) and wake a waiter.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while someone waits
-- KEYS[2] wakeups   channel published to when a waiter is recorded
--
-- Returns 1  the lock was held and is released
--         0  the lock was not held
local lock, wakeups = KEYS[1], KEYS[2]

if redis.call('EXISTS', lock) == 0 then
  return 0
end
local waiting = redis.call('HEXISTS', lock, ':waiting')
redis.call('DEL', lock)
if waiting == 1 then
  redis.call('PUBLISH', wakeups, 'released')
end
return 1
