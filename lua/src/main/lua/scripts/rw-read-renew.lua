-- rw-read-renew.lua: extend the leases of many read holds in one call, each only while that very hold still exists.
-- The watchdog sends one call per tick for all read holds of its client (batched).
--
-- KEYS[2i-1] readers i  zset  reader -> end of its read lease, server time in ms
-- KEYS[2i]   rtokens i  hash  reader -> fencing token of its read hold
-- ARGV[1]    lease_ms   lease to give every read hold still held, in milliseconds
-- ARGV[2i]   owner i    "<client-uuid>:<thread-id>" that should hold read lock i
-- ARGV[2i+1] token i    fencing token of that read hold
--
-- Returns {r1, ..., rn}  ri = 1: renewed; ri = 0: read hold i is gone (lost)
local lease_ms = tonumber(ARGV[1])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

local renewed = {}
for i = 1, #KEYS / 2 do
  local readers, rtokens = KEYS[i * 2 - 1], KEYS[i * 2]
  local owner, token = ARGV[i * 2], ARGV[i * 2 + 1]
  local lease_end = redis.pcall('ZSCORE', readers, owner)
  -- A lease that ran out is lost even before an acquire purges it: writers may be past it already.
  if redis.pcall('HGET', rtokens, owner) == token and type(lease_end) == 'string'
      and tonumber(lease_end) > now_ms then
    redis.call('ZADD', readers, now_ms + lease_ms, owner)
    for _, key in ipairs({readers, rtokens}) do
      if redis.call('PTTL', key) < lease_ms then
        redis.call('PEXPIRE', key, lease_ms)
      end
    end
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
