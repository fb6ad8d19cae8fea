-- semaphore-renew.lua: extend the leases on many clients' permits in one call, each only while the client holds some.
-- The watchdog sends one call per tick for all semaphores its client holds permits of (batched).
--
-- KEYS[2i-1] holds i   hash  client -> permits it holds; ':sum' -> permits all live clients hold
-- KEYS[2i]   leases i  zset  client -> end of the lease on its permits, server time in ms
-- ARGV[1]    lease_ms  lease to give every client still holding, in milliseconds
-- ARGV[i+1]  client i  "<client-uuid>" holding permits of semaphore i
--
-- Returns {r1, ..., rn}  ri = 1: renewed; ri = 0: the client no longer holds permits of semaphore i (lost)
local lease_ms = tonumber(ARGV[1])

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

local renewed = {}
for i = 1, #KEYS / 2 do
  local holds, leases, client = KEYS[i * 2 - 1], KEYS[i * 2], ARGV[i + 1]
  local lease_end = redis.pcall('ZSCORE', leases, client)
  -- A lease that ran out counts as lost even before an acquire purges it: its permits are free.
  if type(lease_end) == 'string' and tonumber(lease_end) > now_ms then
    redis.call('ZADD', leases, now_ms + lease_ms, client)
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
