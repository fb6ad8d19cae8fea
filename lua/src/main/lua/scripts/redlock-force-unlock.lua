-- redlock-force-unlock.lua: on one Redlock node, release the lock whoever holds it (administrative), wake whoever
-- waits, and keep the holder from taking it back in its renewal.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while someone waits
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] wakeups   channel 'released' is published to when a waiter is recorded
-- ARGV[1] fence_ms  how long the raised token must last: longer than the holder's watchdog takes to renew
--
-- Returns 1  the lock was held here and is released
--         0  the lock was not held here
local lock, token_key, wakeups = KEYS[1], KEYS[2], KEYS[3]
local fence_ms = tonumber(ARGV[1])

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

-- A token issued now is greater than the holder's: redlock-renew.lua then refuses to take the
-- hold back here, and reports it gone.
local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local fence = math.max(now_us, (tonumber(redis.call('GET', token_key)) or 0) + 1)
redis.call('SET', token_key, string.format('%d', fence), 'PX', math.max(fence_ms, math.floor((fence - now_us) / 1000) + 1000))

if redis.call('EXISTS', lock) == 0 then
  return 0
end
local waiting = redis.call('HEXISTS', lock, ':waiting')
redis.call('DEL', lock)
if waiting == 1 then
  redis.call(publish, wakeups, 'released')
end
return 1
