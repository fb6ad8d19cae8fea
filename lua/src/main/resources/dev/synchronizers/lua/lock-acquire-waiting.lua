-- lock-acquire-waiting.lua: as lock-acquire.lua, and on failure record that a waiter is subscribed,
-- so that the release publishes a wake-up. Used by a waiter after its subscription is active.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; a cache's owner "<client-uuid>:cache" -> its base
--                           token (docs/design/lock-caching.md); ':waiting' -> 1 while someone waits (for a cache:
--                           another client asks it back);
--                           ':w:<client-uuid>' -> how many threads of that client wait, for snapshots:
--                           "<count>:<until_ms>" from a failed try (it counts until server time until_ms,
--                           by when the waiter has tried again), "<count>" from a try that took the lock
--                           (it lasts as long as the hold)
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] lease_ms  lease to set, in milliseconds
-- ARGV[3] waiters   how many threads of the owner's client wait for this lock, the owner included
-- ARGV[4] grace_ms  how long after the holder's lease runs out the owner's next try may come, at most
--
-- Owners: the client is the part of an owner string before its first ':', in either form (Owner.java).
--
-- Returns {1, token}          acquired; token is this hold's fencing token
--         {0, pttl}           held by another owner; pttl is its remaining lease in ms (-1: it has none)
--         {0, pttl, client}   held by the cache of another client, named, so that the caller tells it; the
--                             waiting mark asks it back
local lock, token_key = KEYS[1], KEYS[2]
local owner, lease_ms, waiters, grace_ms = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

-- shared: find-cacher
-- The client whose cache holds the lock, if one does: a cache's field is "<client-uuid>:cache".
local function cacher_of(hash)
  for _, field in ipairs(redis.call('HKEYS', hash)) do
    local client = string.match(field, '^([^:]+):cache$')
    if client then
      return client
    end
  end
  return nil
end
-- end shared

local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
-- The owner's client: the part before the first ':' (a Redlock's owners go on with a thread and an
-- attempt number), so that the record is one per client, overwritten by each of its tries.
local waiters_field = ':w:' .. (string.match(owner, '^([^:]*):') or owner)

if redis.call('EXISTS', lock) == 1 and redis.call('HEXISTS', lock, owner) == 0 then
  -- The mark lives in the holder's hash, so it goes with the hold and needs no lease of its own.
  -- So does the client's count of waiters, an estimate that lock-snapshot.lua sums over clients;
  -- it counts only until this waiter's next try is due (it sleeps at most the holder's remaining
  -- lease), so that waiters that gave up or died stop counting though the hold goes on.
  local pttl = redis.call('PTTL', lock)
  local count = string.format('%d', waiters)
  if pttl >= 0 then
    count = count .. ':' .. string.format('%d', math.floor(now_us / 1000) + pttl + grace_ms)
  end
  redis.call('HSET', lock, ':waiting', 1, waiters_field, count)
  local cache_client = cacher_of(lock)
  if cache_client and cache_client ~= string.match(owner, '^([^:]*):') then
    return {0, pttl, cache_client}
  end
  return {0, pttl}
end

-- Same token rule as lock-acquire.lua: server clock in microseconds, raised past the last token.
local token = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
redis.call('HSET', lock, owner, token)
-- The client's other waiters wait behind this hold in the client, without asking Redis: counted
-- here for as long as the hold lasts (lock-handover.lua updates the count as it passes the lock on).
if waiters > 1 then
  redis.call('HSET', lock, waiters_field, string.format('%d', waiters - 1))
else
  redis.call('HDEL', lock, waiters_field)
end
redis.call('PEXPIRE', lock, lease_ms)
redis.call('SET', token_key, token, 'PX', math.floor((token - now_us) / 1000) + 1000)
return {1, token}
