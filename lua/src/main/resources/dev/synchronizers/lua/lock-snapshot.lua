-- lock-snapshot.lua: read a lock's holders and queue at one moment, for monitoring; changes nothing.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while a non-fair waiter
--                           waits; ':w:<client-uuid>' -> how many threads of that client wait (non-fair)
-- KEYS[2] places    zset    waiting owner -> end of its place's lease, server time in ms (fair lock)
--
-- Returns {pttl, queued, {field, value, ...}}
--         pttl    the hold's remaining lease in ms (-2: no hold, -1: no lease)
--         queued  waiters of the fair queue whose place is live
--         fields  the lock hash as it is: holders, and the non-fair waiting counts
local lock, places = KEYS[1], KEYS[2]

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
-- It writes nothing, so nothing is replicated.
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
-- A place whose lease ran out is not a waiter, though no script has purged it yet.
local queued = redis.call('ZCOUNT', places, '(' .. now_ms, '+inf')
return {redis.call('PTTL', lock), queued, redis.call('HGETALL', lock)}
