-- rw-read-try.lua: take a read hold if no other owner writes, ahead of waiting writers (tryLock() barges); never waits.
--
-- KEYS[1] write     hash    writer -> fencing token of the write hold
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] readers   zset    reader -> end of its read lease, server time in ms
-- KEYS[4] rtokens   hash    reader -> fencing token of its read hold
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] lease_ms  lease of the read hold, in milliseconds
--
-- Returns {1, token}  acquired; token is this read hold's fencing token
--         {0, pttl}   another owner writes; pttl is the write hold's remaining lease
local write, token_key, readers, rtokens = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, lease_ms = ARGV[1], tonumber(ARGV[2])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

if redis.call('EXISTS', write) == 1 and redis.call('HEXISTS', write, owner) == 0 then
  return {0, redis.call('PTTL', write)}
end

local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local now_ms = math.floor(now_us / 1000)
-- Same token rule as lock-acquire.lua.
local token = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
redis.call('ZADD', readers, now_ms + lease_ms, owner)
redis.call('HSET', rtokens, owner, token)
for _, key in ipairs({readers, rtokens}) do
  if redis.call('PTTL', key) < lease_ms then
    redis.call('PEXPIRE', key, lease_ms)
  end
end
redis.call('SET', token_key, token, 'PX', math.floor((token - now_us) / 1000) + 1000)
return {1, token}
