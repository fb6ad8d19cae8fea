-- lock-renew.lua: extend the leases of many holds in one call, each only while its owner still holds it.
-- The watchdog sends one call per tick for all lock holds of its client (batched).
--
-- KEYS[i]   lock i    hash   owner -> fencing token of its hold
-- ARGV[1]   lease_ms  lease to set on every lock still held, in milliseconds
-- ARGV[i+1] owner i   "<client-uuid>:<thread-id>" that should hold lock i
--
-- Returns {r1, ..., rn}  ri = 1: lock i renewed; ri = 0: owner i no longer holds it (lost)
local lease_ms = tonumber(ARGV[1])

local renewed = {}
for i, lock in ipairs(KEYS) do
  if redis.call('HEXISTS', lock, ARGV[i + 1]) == 1 then
    redis.call('PEXPIRE', lock, lease_ms)
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
