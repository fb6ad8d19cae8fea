-- rw-write-try.lua: take the write hold if nobody else reads or writes, ahead of waiting writers (tryLock() barges); never waits.
--
-- KEYS[1] write     hash    writer -> fencing token of the write hold
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] readers   zset    reader -> end of its read lease, server time in ms
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] lease_ms  lease of the write hold, in milliseconds
--
-- Returns {1, token}    acquired; token is this write hold's fencing token
--         {0, wait_ms}  held by others; wait_ms: the write hold's or the earliest reader's remaining lease
local write, token_key, readers = KEYS[1], KEYS[2], KEYS[3]
local owner, lease_ms = ARGV[1], tonumber(ARGV[2])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

if redis.call('EXISTS', write) == 1 and redis.call('HEXISTS', write, owner) == 0 then
  return {0, redis.call('PTTL', write)}
end
local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local now_ms = math.floor(now_us / 1000)
-- Readers whose lease ran out do not count; they are left for the next acquire to purge.
local live = redis.call('ZRANGEBYSCORE', readers, now_ms + 1, '+inf', 'WITHSCORES')
for i = 1, #live, 2 do
  if live[i] ~= owner then
    return {0, tonumber(live[i + 1]) - now_ms}
  end
end
-- Same token rule as lock-acquire.lua.
local token = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
redis.call('DEL', write)
redis.call('HSET', write, owner, token)
redis.call('PEXPIRE', write, lease_ms)
redis.call('SET', token_key, token, 'PX', math.floor((token - now_us) / 1000) + 1000)
return {1, token}
