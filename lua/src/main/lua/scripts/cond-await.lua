-- cond-await.lua: register a waiter of a lock's condition, while its lock is held by the caller, before the caller releases the lock.
--
-- KEYS[1] lock       hash    owner -> fencing token of its hold (the write hold of a read-write lock)
-- KEYS[2] queue      zset    waiter -> arrival order (server time in microseconds); waiters not yet signalled
-- KEYS[3] places     zset    waiter -> end of its place's lease, server time in ms
-- KEYS[4] signalled  zset    waiter -> end of its signal's lease, server time in ms; signalled, not yet taken up
-- KEYS[5] wakeups    channel '<wakeups>:<client>' carries 'granted:<waiter>' to a waiter that is signalled
-- ARGV[1] owner      "<client-uuid>:<thread-id>", the caller that holds the lock
-- ARGV[2] token      fencing token of the caller's hold
-- ARGV[3] waiter     "<client-uuid>:<thread-id>:<attempt>", unique to this wait
-- ARGV[4] place_ms   lease of the waiter's place, in milliseconds
--
-- Checking the hold here, in the same script, makes a registration of a caller whose hold is gone
-- impossible: such a caller must not wait, since it never released anything.
--
-- Returns 1  registered (or, run again, already registered or already signalled)
--         0  the caller does not hold the lock with this token: nothing changed
local lock, queue, places, signalled, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, token, waiter, place_ms = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

if redis.call('HGET', lock, owner) ~= token then
  return 0
end

local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local now_ms = math.floor(now_us / 1000)

-- include: cond-signal

pass_on_expired(queue, places, signalled, wakeups, now_ms, place_ms)
if redis.call('ZSCORE', signalled, waiter) then
  return 1
end
redis.call('ZADD', queue, 'NX', now_us, waiter)
redis.call('ZADD', places, now_ms + place_ms, waiter)
for _, key in ipairs({queue, places}) do
  if redis.call('PTTL', key) < place_ms then
    redis.call('PEXPIRE', key, place_ms)
  end
end
return 1
