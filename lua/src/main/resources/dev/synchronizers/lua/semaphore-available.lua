-- semaphore-available.lua: count the permits free now, returning those of grants whose lease ran out to the pool.
--
-- KEYS[1] total     string  the total number of permits
-- KEYS[2] holds     hash    grant -> permits it holds (0: given up, kept until its lease ends); ':sum' -> permits all live grants hold
-- KEYS[3] leases    zset    grant -> end of its lease, server time in ms
--
-- Returns available  the total minus what live grants hold (negative after the total shrank)
local total_key, holds, leases = KEYS[1], KEYS[2], KEYS[3]

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
-- Same purge as semaphore-acquire.lua.
-- shared: purge-grants
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', leases, '-inf', now_ms)) do
  -- 0 - n, not -n: Lua writes minus zero as "-0", which HINCRBY refuses.
  redis.call('HINCRBY', holds, ':sum', 0 - tonumber(redis.call('HGET', holds, gone) or '0'))
  redis.call('HDEL', holds, gone)
end
redis.call('ZREMRANGEBYSCORE', leases, '-inf', now_ms)
-- end shared
return tonumber(redis.call('GET', total_key) or '0') - tonumber(redis.call('HGET', holds, ':sum') or '0')
