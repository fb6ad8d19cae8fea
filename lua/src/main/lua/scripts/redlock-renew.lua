-- redlock-renew.lua: extend the leases of many Redlock holds on one node in one call, and take a hold back where the
-- node lost it (a restart) while nobody else took the lock or a newer token there.
-- The watchdog of each node sends one call per tick for all Redlock holds of its client (batched).
--
-- KEYS[2i-1] lock i    hash    owner -> fencing token of its hold
-- KEYS[2i]   token i   string  last fencing token issued for name i
-- ARGV[1]    lease_ms  lease to set on every hold, in milliseconds
-- ARGV[2i]   owner i   "<client-uuid>:<thread-id>:<attempt>" of hold i, one per acquisition
-- ARGV[2i+1] token i   fencing token of hold i
--
-- Returns {r1, ..., rn}  ri = 1: hold i renewed
--                        ri = 2: hold i was not on this node (restarted, or its grant never arrived) and is taken back
--                        ri = 0: hold i is gone here: another owner holds the lock, or the node issued a newer
--                                token (another acquirer came, or the lock was forced) since
local lease_ms = tonumber(ARGV[1])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local renewed = {}
for i = 1, #KEYS / 2 do
  local lock, token_key = KEYS[i * 2 - 1], KEYS[i * 2]
  local owner, token = ARGV[i * 2], tonumber(ARGV[i * 2 + 1])
  -- The owner string names one acquisition, so its presence is enough: no other hold has it.
  -- pcall keeps one key of a foreign type from failing every other hold of the batch.
  if redis.pcall('HEXISTS', lock, owner) == 1 then
    redis.call('PEXPIRE', lock, lease_ms)
    renewed[i] = 1
  elseif redis.pcall('EXISTS', lock) == 0 and (tonumber(redis.pcall('GET', token_key)) or 0) <= token then
    -- Taken back only if no token after this hold's was issued here: a force, or any acquirer's
    -- try, raises the node's last token, and the hold stays gone on this node.
    local now = redis.call('TIME')
    local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
    redis.call('HSET', lock, owner, token)
    redis.call('PEXPIRE', lock, lease_ms)
    redis.call('SET', token_key, string.format('%d', token), 'PX', math.max(1, math.floor((token - now_us) / 1000) + 1000))
    renewed[i] = 2
  else
    renewed[i] = 0
  end
end
return renewed
