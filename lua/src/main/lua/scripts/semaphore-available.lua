-- semaphore-available.lua: count the permits free now, returning those of grants whose lease ran out to the pool.
--
-- KEYS[1] total     string  the total number of permits
-- KEYS[2] holds     hash    grant -> permits it holds (0: given up, kept until its lease ends); ':sum', ':total', ':lmin', ':pmin', ':ttl' (see semaphore-acquire.lua)
-- KEYS[3] leases    zset    grant -> end of its lease, server time in ms
--
-- Returns available  the total minus what live grants hold (negative after the total shrank, or started negative)
local total_key, holds, leases = KEYS[1], KEYS[2], KEYS[3]

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local fields, ttl_keys, queue, places = {}, {holds, leases}, nil, nil

-- include: semaphore-load
-- include: purge-grants

return finish(total - sum)
