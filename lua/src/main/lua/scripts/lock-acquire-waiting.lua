-- lock-acquire-waiting.lua: as lock-acquire.lua, and on failure put the waiter in line, so that a release hands it the lock.
-- Used by the first waiter of a client (the others wait behind it in the JVM), so the line holds
-- one place per waiting client; a release serves the first place (lock-release.lua), so one
-- release wakes one client, not every waiting one. A free lock is taken whoever is in line: the
-- non-fair lock lets a newcomer barge; the line decides only who is handed it at a release.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; a cache's owner "<client-uuid>:cache" -> its base
--                           token (docs/design/lock-caching.md); ':waiting' -> 1 while someone waits (for a cache:
--                           another client asks it back);
--                           ':w:<client-uuid>' -> how many threads of that client wait, for snapshots:
--                           "<count>:<until_ms>" from a failed try (it counts until server time until_ms,
--                           by when the waiter has tried again), "<count>" from a try that took the lock
--                           (it lasts as long as the hold)
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] queue     zset    waiting owner -> arrival order
-- KEYS[4] places    zset    waiting owner -> end of its place's lease, server time in ms (renewed by
--                           its client's watchdog while it waits: fair-lock-renew-place.lua)
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] lease_ms  lease to set, in milliseconds
-- ARGV[3] waiters   how many threads of the owner's client wait for this lock, the owner included
-- ARGV[4] grace_ms  how long after the holder's lease runs out the owner's next try may come, at most
-- ARGV[5] place_ms  lease of a place in line, in milliseconds; 0: mark the lock only, no place in line (a
--                   Redlock's waiter, whose nodes' releases wake the marked waiters on the lock's channel)
--
-- Owners: the client is the part of an owner string before its first ':', in either form (Owner.java).
--
-- Returns {1, token}                 acquired; token is this hold's fencing token
--         {0, pttl, client, floor}   held by another owner; pttl is its remaining lease in ms (-1: it has
--                                    none); client is '' or, if the cache of another client holds it, that
--                                    client, so that the caller tells it (the waiting mark asks it back);
--                                    floor is at least every token issued so far, so a grant message
--                                    with a token at or below it is an old one
local lock, token_key, queue, places = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, lease_ms, waiters, grace_ms = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local place_ms = tonumber(ARGV[5])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

-- include: find-cacher

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
  -- In line at the tail unless it has a place already; lease (or renew) its place.
  if place_ms > 0 then
    local now_ms = math.floor(now_us / 1000)
    if not redis.call('ZSCORE', queue, owner) then
      local tail = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')[2]
      redis.call('ZADD', queue, (tonumber(tail) or 0) + 1, owner)
    end
    redis.call('ZADD', places, now_ms + place_ms, owner)
    -- The line outlives every place in it, and nothing outlives its last place.
    for _, key in ipairs({queue, places}) do
      if redis.call('PTTL', key) < place_ms then
        redis.call('PEXPIRE', key, place_ms)
      end
    end
  end
  local floor = math.max(now_us, tonumber(redis.call('GET', token_key) or '0'))
  local cache_client = cacher_of(lock)
  if cache_client and cache_client ~= string.match(owner, '^([^:]*):') then
    return {0, pttl, cache_client, floor}
  end
  return {0, pttl, '', floor}
end

-- Same token rule as lock-acquire.lua: server clock in microseconds, raised past the last token.
local token = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
redis.call('HSET', lock, owner, token)
-- Out of line, if it was in it: it holds the lock.
redis.call('ZREM', queue, owner)
redis.call('ZREM', places, owner)
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
