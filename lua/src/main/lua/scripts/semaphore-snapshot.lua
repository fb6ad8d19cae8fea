-- semaphore-snapshot.lua: read a semaphore's total, grants and waiters at one moment, for monitoring; changes nothing.
--
-- KEYS[1] total     string  the total number of permits
-- KEYS[2] holds     hash    grant -> permits it holds (0: given up); ':sum' -> permits all live grants hold
-- KEYS[3] leases    zset    grant -> end of its lease, server time in ms
-- KEYS[4] places    zset    queued waiter -> end of its place's lease, server time in ms
--
-- Returns {total, queued, {grant, permits, remaining_ms, ...}}
--         total    the total (0 if never set)
--         queued   waiters whose place is live
--         grants   only those whose lease is live and that hold permits; a grant whose lease ran out
--                  counts as returned, as the next call that purges will make it
local total_key, holds, leases, places = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
-- It writes nothing, so nothing is replicated.
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local grants = {}
local ends = redis.call('ZRANGEBYSCORE', leases, '(' .. now_ms, '+inf', 'WITHSCORES')
for i = 1, #ends, 2 do
  local permits = tonumber(redis.call('HGET', holds, ends[i]) or '0')
  if permits > 0 then
    grants[#grants + 1] = ends[i]
    grants[#grants + 1] = permits
    grants[#grants + 1] = tonumber(ends[i + 1]) - now_ms
  end
end
return {tonumber(redis.call('GET', total_key) or '0'), redis.call('ZCOUNT', places, '(' .. now_ms, '+inf'), grants}
