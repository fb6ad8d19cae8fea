-- lock-cache-renew.lua: extend the leases of many caches in one call, each only while that very cache still exists, and say which are asked back.
-- The watchdog sends one call per tick for all lock caches of its client (batched); its reply is the
-- backstop of the ask-back message (docs/design/lock-caching.md).
--
-- KEYS[i]    lock i    hash   owner -> fencing token of its hold; a cache's owner "<client-uuid>:cache" -> its base
--                             token; ':waiting' -> 1 while someone waits (for a cache: another client asks it back)
-- ARGV[1]    lease_ms  lease to set on every cache still held, in milliseconds
-- ARGV[2i]   cacher i  "<client-uuid>:cache" that should hold lock i
-- ARGV[2i+1] base i    base token of that cache
--
-- Returns {r1, ..., rn}  ri = 1: cache i renewed; ri = 2: renewed, and asked back (someone waits);
--                        ri = 0: cache i is gone (lost)
local lease_ms = tonumber(ARGV[1])

local renewed = {}
for i, lock in ipairs(KEYS) do
  -- The base check keeps a renewal that raced a give-back from stretching a newer cache of the same
  -- client; pcall keeps one key of a foreign type from failing every other cache of the batch.
  if redis.pcall('HGET', lock, ARGV[i * 2]) == ARGV[i * 2 + 1] then
    redis.call('PEXPIRE', lock, lease_ms)
    renewed[i] = 1 + redis.call('HEXISTS', lock, ':waiting')
  else
    renewed[i] = 0
  end
end
return renewed
