-- cond-signal.lua: signal one waiter, or every waiter, of a lock's condition, for a caller that holds the lock; a repeated signal does nothing.
--
-- KEYS[1] lock       hash    owner -> fencing token of its hold (the write hold of a read-write lock)
-- KEYS[2] queue      zset    waiter -> arrival order (server time in microseconds); waiters not yet signalled
-- KEYS[3] places     zset    waiter -> end of its place's lease, server time in ms
-- KEYS[4] signalled  zset    waiter -> end of its signal's lease, server time in ms; signalled, not yet taken up
-- KEYS[5] signals    zset    signal id -> when it ran, server time in ms; kept for a lease
-- KEYS[6] wakeups    channel '<wakeups>:<client>' carries 'granted:<waiter>' to each waiter signalled
-- ARGV[1] owner      "<client-uuid>:<thread-id>", the caller that holds the lock
-- ARGV[2] token      fencing token of the caller's hold
-- ARGV[3] signal     id of this signal, unique in the client: a repeat (its reply was lost) is recognised
-- ARGV[4] count      1 for signal(), 0 for signalAll()
-- ARGV[5] place_ms   the client's lease, in milliseconds: how long a signal's id is remembered
--
-- A signal is not remembered when nobody waits, as in java.util.concurrent.
--
-- Returns {1, waiter...}  signalled now, the waiters named (none if nobody waited)
--         {2}             this signal had run already: nothing changed
--         {0}             the caller does not hold the lock with this token: nothing changed
local lock, queue, places, signalled, signals, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local owner, token, signal, count, place_ms = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

if redis.call('HGET', lock, owner) ~= token then
  return {0}
end

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

redis.call('ZREMRANGEBYSCORE', signals, '-inf', now_ms - place_ms)
if redis.call('ZSCORE', signals, signal) then
  return {2}
end
redis.call('ZADD', signals, now_ms, signal)
redis.call('PEXPIRE', signals, place_ms)

-- include: cond-signal

pass_on_expired(queue, places, signalled, wakeups, now_ms, place_ms)
local woken = signal_waiters(queue, places, signalled, wakeups, count == 0 and -1 or count, now_ms, place_ms)
local reply = {1}
for _, waiter in ipairs(woken) do
  reply[#reply + 1] = waiter
end
return reply
