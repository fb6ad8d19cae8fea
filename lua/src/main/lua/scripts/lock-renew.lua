-- lock-renew.lua: extend the leases of many holds in one call, each only while that very hold still exists.
-- The watchdog sends one call per tick for all lock holds of its client (batched).
--
-- KEYS[i]    lock i    hash   owner -> fencing token of its hold
-- ARGV[1]    lease_ms  lease to set on every hold still held, in milliseconds
-- ARGV[2i]   owner i   "<client-uuid>:<thread-id>" that should hold lock i
-- ARGV[2i+1] token i   fencing token of that hold
--
-- Returns {r1, ..., rn}  ri = 1: hold i renewed; ri = 0: hold i is gone (lost)
local lease_ms = tonumber(ARGV[1])

local renewed = {}
for i, lock in ipairs(KEYS) do
  -- The token check keeps a renewal that raced an unlock from stretching a newer hold of the same
  -- thread; pcall keeps one key of a foreign type from failing every other hold of the batch.
  if redis.pcall('HGET', lock, ARGV[i * 2]) == ARGV[i * 2 + 1] then
    redis.call('PEXPIRE', lock, lease_ms)
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
