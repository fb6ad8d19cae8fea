-- fair-lock-acquire.lua: take the lock if it is free and the owner is first in the queue; else queue the owner.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while a non-fair waiter waits
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] queue     zset    waiting owner -> arrival order
-- KEYS[4] places    zset    waiting owner -> end of its place's lease, server time in ms
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] lease_ms  lease of the hold, in milliseconds
-- ARGV[3] place_ms  lease of a place in the queue, in milliseconds
--
-- Returns {1, token}           acquired; token is this hold's fencing token
--         {0, wait_ms, floor}  queued (or kept in place); wait_ms is how long until the lock can change
--                              hands without a wake-up: the holder's remaining lease, or the first
--                              waiter's remaining place lease if the lock is free (-1: the holder has
--                              no lease); floor is at least every token issued so far, so a grant
--                              message with a token at or below it is an old one
local lock, token_key, queue, places = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, lease_ms, place_ms = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

-- Server time only: client clocks are not comparable.
local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local now_ms = math.floor(now_us / 1000)

-- Waiters that stopped renewing their place (dead, paused, cut off) leave the queue here.
-- include: purge-places
-- A member queued without a place (left half-written) has no lease to wait for and cannot be
-- served: it goes too, so that it holds up nobody behind it.
local head = redis.call('ZRANGE', queue, 0, 0)[1]
while head and not redis.call('ZSCORE', places, head) do
  redis.call('ZREM', queue, head)
  head = redis.call('ZRANGE', queue, 0, 0)[1]
end

-- An owner still on record (its last release reply was lost) holds it already: it takes it afresh.
local holds_it = redis.call('HEXISTS', lock, owner) == 1
local held_by_other = not holds_it and redis.call('EXISTS', lock) == 1
if holds_it or not held_by_other and (head == nil or head == owner) then
  redis.call('ZREM', queue, owner)
  redis.call('ZREM', places, owner)
  -- Same token rule as lock-acquire.lua: server clock in microseconds, raised past the last token.
  local token = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
  redis.call('HSET', lock, owner, token)
  redis.call('PEXPIRE', lock, lease_ms)
  redis.call('SET', token_key, token, 'PX', math.floor((token - now_us) / 1000) + 1000)
  return {1, token}
end

-- Queue the owner at the tail unless it has a place already; lease (or renew) its place.
if not redis.call('ZSCORE', queue, owner) then
  local tail = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')[2]
  redis.call('ZADD', queue, (tonumber(tail) or 0) + 1, owner)
end
redis.call('ZADD', places, now_ms + place_ms, owner)
-- The queue outlives every place in it, and nothing outlives its last place.
for _, key in ipairs({queue, places}) do
  if redis.call('PTTL', key) < place_ms then
    redis.call('PEXPIRE', key, place_ms)
  end
end

local floor = math.max(now_us, tonumber(redis.call('GET', token_key) or '0'))
if held_by_other then
  return {0, redis.call('PTTL', lock), floor}
end
return {0, tonumber(redis.call('ZSCORE', places, head)) - now_ms, floor}
