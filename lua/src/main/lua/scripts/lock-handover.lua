-- lock-handover.lua: pass a non-fair hold from the thread releasing it to a waiting thread of the same client, in one step.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while a non-fair waiter waits;
--                           ':w:<client-uuid>' -> how many threads of that client wait (see lock-acquire-waiting.lua)
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] queue     zset    waiting owner (the first waiter of a client) -> arrival order
-- KEYS[4] places    zset    waiting owner -> end of its place's lease, server time in ms
-- ARGV[1] owner     "<client-uuid>:<thread-id>" releasing its hold
-- ARGV[2] token     fencing token of the hold being released
-- ARGV[3] next      "<client-uuid>:<thread-id>" taking the lock over
-- ARGV[4] lease_ms  lease of the new hold, in milliseconds
-- ARGV[5] waiters   how many threads of the client still wait for this lock once next has it
--
-- Owners: the client is the part of an owner string before its first ':', in either form (Owner.java).
--
-- The new hold is a hold like any other: a new token by the usual rule (server clock in
-- microseconds, raised past the last token), its own lease. The waiting mark stays, so that the
-- release that ends the new hold still wakes the waiters of other clients. The client's count of
-- waiters becomes the given one, for as long as the new hold lasts: its waiters wait behind it in the
-- client, without asking Redis.
--
-- Returns {1, token, waiting}  handed over; token is the new hold's; waiting is 1 if another client waits
--                              (it has a place in line, or marked the lock)
--         {0, 0, 0}            the owner does not hold this hold (its lease ran out, it was forced): nothing changed
local lock, token_key, queue, places = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, token, next_owner, lease_ms, waiters = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

if redis.call('HGET', lock, owner) ~= token then
  return {0, 0, 0}
end
local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local next_token = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
redis.call('HDEL', lock, owner)
redis.call('HSET', lock, next_owner, next_token)
-- The waiter taking over may have a place in line from a try of its own: it holds the lock now, so
-- it leaves the line, or a release would hand it the lock again once it no longer waits.
redis.call('ZREM', queue, next_owner)
redis.call('ZREM', places, next_owner)
-- One record per client, named as in lock-acquire-waiting.lua: the part of the owner before its first ':'.
local waiters_field = ':w:' .. (string.match(next_owner, '^([^:]*):') or next_owner)
if waiters > 0 then
  redis.call('HSET', lock, waiters_field, string.format('%d', waiters))
else
  redis.call('HDEL', lock, waiters_field)
end
redis.call('PEXPIRE', lock, lease_ms)
redis.call('SET', token_key, next_token, 'PX', math.floor((next_token - now_us) / 1000) + 1000)
local others = (redis.call('ZCARD', queue) > 0 or redis.call('HEXISTS', lock, ':waiting') == 1) and 1 or 0
return {1, next_token, others}
