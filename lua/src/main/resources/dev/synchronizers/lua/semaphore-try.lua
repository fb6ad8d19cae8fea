-- semaphore-try.lua: take permits for one grant if they are free now, ahead of any queue (tryAcquire() barges).
--
-- KEYS[1] total     string  the total number of permits
-- KEYS[2] holds     hash    grant -> permits it holds (0: given up, kept until its lease ends); ':sum' -> permits all live grants hold
-- KEYS[3] leases    zset    grant -> end of its lease, server time in ms
-- ARGV[1] grant     "<client-uuid>:<thread-id>:<attempt>": this acquisition, unique
-- ARGV[2] permits   how many, >= 0; 0 takes what is available ("drain")
-- ARGV[3] lease_ms  lease of the permits, in milliseconds
--
-- Returns {1, taken}  acquired taken permits (for 0: every available permit, possibly none); a second run
--                     of the same call returns what the first took and takes nothing more
--         {0, 0}      not enough free permits; nothing changed
--         {-1, total} more permits asked for than the total; nothing changed
--         {-2, 0}     this acquisition was given up before this call ran; nothing changed
local total_key, holds, leases = KEYS[1], KEYS[2], KEYS[3]
local grant, permits, lease_ms = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

-- Same purge as semaphore-acquire.lua: grants whose lease ran out return to the pool.
-- shared: purge-grants
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', leases, '-inf', now_ms)) do
  -- 0 - n, not -n: Lua writes minus zero as "-0", which HINCRBY refuses.
  redis.call('HINCRBY', holds, ':sum', 0 - tonumber(redis.call('HGET', holds, gone) or '0'))
  redis.call('HDEL', holds, gone)
end
redis.call('ZREMRANGEBYSCORE', leases, '-inf', now_ms)
-- end shared

local mine = redis.call('HGET', holds, grant)
if mine then
  if tonumber(mine) <= 0 then
    return {-2, 0}
  end
  return {1, tonumber(mine)}
end

local total = tonumber(redis.call('GET', total_key) or '0')
if permits > total then
  return {-1, total}
end
local available = total - tonumber(redis.call('HGET', holds, ':sum') or '0')
local taken = permits
if permits == 0 then
  taken = math.max(available, 0)
end
if permits > 0 and available < permits then
  return {0, 0}
end
if taken > 0 then
  redis.call('HSET', holds, grant, taken)
  redis.call('HINCRBY', holds, ':sum', taken)
  redis.call('ZADD', leases, now_ms + lease_ms, grant)
  for _, key in ipairs({holds, leases}) do
    if redis.call('PTTL', key) < lease_ms then
      redis.call('PEXPIRE', key, lease_ms)
    end
  end
end
return {1, taken}
