-- lock-acquire.lua: take the lock for an owner that holds nothing in the JVM; on failure leave no trace but an ask-back.
-- Used by tryLock() and by a waiter's first attempt, made before it subscribes to wake-ups.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; a cache's owner "<client-uuid>:cache" -> its base
--                           token (docs/design/lock-caching.md); ':waiting' -> 1 while someone waits
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] lease_ms  lease to set, in milliseconds
--
-- A failed try leaves no trace, so that a release nobody waits for publishes nothing, except where
-- another client's cache holds the lock: for a cache, the waiting mark is the ask to give it back,
-- and without it a cache nobody uses would keep every tryLock() out for good.
--
-- Returns {1, token}          acquired; token is this hold's fencing token
--         {0, pttl}           held by another owner; pttl is its remaining lease in ms (-1: it has none)
--         {0, pttl, client}   held by the cache of another client, named: it is now asked back (':waiting')
local lock, token_key = KEYS[1], KEYS[2]
local owner, lease_ms = ARGV[1], tonumber(ARGV[2])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

-- include: find-cacher

-- The owner may still be on record if its last release never reached the JVM's reply (a timeout):
-- it holds nothing in the JVM, so this is a fresh acquisition with a fresh token.
if redis.call('EXISTS', lock) == 1 and redis.call('HEXISTS', lock, owner) == 0 then
  local pttl = redis.call('PTTL', lock)
  local cache_client = cacher_of(lock)
  if cache_client and cache_client ~= string.match(owner, '^([^:]*):') then
    redis.call('HSET', lock, ':waiting', 1)
    return {0, pttl, cache_client}
  end
  return {0, pttl}
end

-- Tokens are the server's clock in microseconds, raised past the last token issued in case the
-- clock has not moved on (or stepped back) since: no key has to live forever per name.
local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local token = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
redis.call('HSET', lock, owner, token)
redis.call('PEXPIRE', lock, lease_ms)
redis.call('SET', token_key, token, 'PX', math.floor((token - now_us) / 1000) + 1000)
return {1, token}
