-- lock-cache-acquire.lua: take the non-fair lock for a client's cache, with a block of fencing tokens reserved for its local takes.
-- Used by a client with lock caching on (docs/design/lock-caching.md) for its first take of a lock in Redis.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; a cache's owner "<client-uuid>:cache" -> its base
--                           token; ':waiting' -> 1 while someone waits (for a cache: another client asks it back)
-- KEYS[2] token     string  last fencing token issued, or top of the last block reserved, for this name; lives
--                           one second past it
-- ARGV[1] cacher    "<client-uuid>:cache", the cache owner of the caller's client
-- ARGV[2] lease_ms  lease to set, in milliseconds
-- ARGV[3] block     how many tokens to reserve, at least 1: the block is [lo, lo + block - 1]
--
-- Owners: the client is the part of an owner string before its first ':', in every form (Owner.java).
--
-- A cache field of the caller's own client already here is one whose taking reply was lost (the
-- client would not send this while it knew of it): it is replaced by a new cache with a new base,
-- so that a late follow-up of the old one, named by its base, can touch nothing of the new one.
--
-- Returns {1, lo, hi, waiting}  acquired; lo is the cache's base token (its field's value) and [lo, hi]
--                               its first block; waiting is 1 if the waiting mark is set (asked back)
--         {0, pttl}             held by another owner that is no cache; pttl is its remaining lease in
--                               ms (-1: it has none); nothing changed
--         {0, pttl, client}     held by the cache of another client, named: it is now asked back (':waiting')
local lock, token_key = KEYS[1], KEYS[2]
local cacher, lease_ms, block = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

-- include: find-cacher

if redis.call('EXISTS', lock) == 1 and redis.call('HEXISTS', lock, cacher) == 0 then
  local pttl = redis.call('PTTL', lock)
  local other = cacher_of(lock)
  if other then
    -- For a cache, the waiting mark is the ask: its client gives it back when it sees the mark.
    redis.call('HSET', lock, ':waiting', 1)
    return {0, pttl, other}
  end
  return {0, pttl}
end

-- The usual token rule (lock-acquire.lua), for the block's first token; the block's top is kept
-- as the last token, so every later issue, by anyone, is above the whole block.
local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local lo = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
local hi = lo + block - 1
redis.call('HSET', lock, cacher, lo)
redis.call('PEXPIRE', lock, lease_ms)
redis.call('SET', token_key, hi, 'PX', math.floor((hi - now_us) / 1000) + 1000)
return {1, lo, hi, redis.call('HEXISTS', lock, ':waiting')}
