-- semaphore-renew.lua: extend the leases of many semaphore grants in one call, each only while that grant still holds permits.
-- The watchdog sends one call per tick for all grants its client holds (batched).
--
-- KEYS[2i-1] holds i   hash  grant -> permits it holds (0: given up); ':sum' -> permits all live grants hold
-- KEYS[2i]   leases i  zset  grant -> end of its lease, server time in ms
-- ARGV[1]    lease_ms  lease to give every grant still holding, in milliseconds
-- ARGV[i+1]  grant i   "<client-uuid>:<thread-id>:<attempt>" holding permits of semaphore i
--
-- Returns {r1, ..., rn}  ri = 1: renewed; ri = 0: grant i no longer holds permits (lost)
local lease_ms = tonumber(ARGV[1])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

local renewed = {}
for i = 1, #KEYS / 2 do
  local holds, leases, grant = KEYS[i * 2 - 1], KEYS[i * 2], ARGV[i + 1]
  -- pcall keeps one key of a foreign type from failing every other grant of the batch. A lease
  -- that ran out counts as lost even before an acquire purges it: its permits are free.
  local lease_end = redis.pcall('ZSCORE', leases, grant)
  local held = redis.pcall('HGET', holds, grant)
  if type(lease_end) == 'string' and tonumber(lease_end) > now_ms and type(held) == 'string'
      and tonumber(held) > 0 then
    redis.call('ZADD', leases, now_ms + lease_ms, grant)
    -- A shorter lease than before moves the end earlier: the ':lmin' hint (see
    -- semaphore-acquire.lua) must stay no later than every lease's end.
    local lmin = redis.call('HGET', holds, ':lmin')
    if lmin and now_ms + lease_ms < tonumber(lmin) then
      redis.call('HSET', holds, ':lmin', now_ms + lease_ms)
    end
    for _, key in ipairs({holds, leases}) do
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
