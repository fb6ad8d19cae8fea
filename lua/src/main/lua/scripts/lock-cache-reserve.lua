-- lock-cache-reserve.lua: reserve the next block of fencing tokens for a client's cache whose block ran out.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; a cache's owner "<client-uuid>:cache" -> its base
--                           token; ':waiting' -> 1 while someone waits (for a cache: another client asks it back)
-- KEYS[2] token     string  last fencing token issued, or top of the last block reserved, for this name; lives
--                           one second past it
-- ARGV[1] cacher    "<client-uuid>:cache", the cache owner of the caller's client
-- ARGV[2] base      the cache's base token (lock-cache-acquire.lua's lo)
-- ARGV[3] block     how many tokens to reserve, at least 1: the block is [lo, lo + block - 1]
--
-- Checked by the base, as every hold is by its token: a cache given back, expired, forced or
-- replaced is not this one, and gets no block. The lease is left as it is: the watchdog keeps it.
--
-- Returns {1, lo, hi, waiting}  reserved: [lo, hi] is the next block, above every token issued so far;
--                               waiting is 1 if the waiting mark is set (asked back)
--         {0, 0, 0, 0}          the cache is gone: nothing changed
local lock, token_key = KEYS[1], KEYS[2]
local cacher, base, block = ARGV[1], ARGV[2], tonumber(ARGV[3])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

if redis.call('HGET', lock, cacher) ~= base then
  return {0, 0, 0, 0}
end
local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local lo = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
local hi = lo + block - 1
redis.call('SET', token_key, hi, 'PX', math.floor((hi - now_us) / 1000) + 1000)
return {1, lo, hi, redis.call('HEXISTS', lock, ':waiting')}
