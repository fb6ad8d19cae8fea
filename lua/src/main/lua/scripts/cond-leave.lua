-- cond-leave.lua: take a waiter that stops waiting out of its condition; a signal it had and does not take up passes on to the next live waiter.
--
-- KEYS[1] queue      zset    waiter -> arrival order (server time in microseconds); waiters not yet signalled
-- KEYS[2] places     zset    waiter -> end of its place's lease, server time in ms
-- KEYS[3] signalled  zset    waiter -> end of its signal's lease, server time in ms; signalled, not yet taken up
-- KEYS[4] wakeups    channel '<wakeups>:<client>' carries 'granted:<waiter>' to a waiter that is signalled
-- ARGV[1] waiter     "<client-uuid>:<thread-id>:<attempt>", unique to the wait
-- ARGV[2] take       '1': a signal the waiter had is taken up (it returns signalled); '0': passed on (timeout, interrupt)
-- ARGV[3] place_ms   the client's lease, in milliseconds
--
-- Safe to repeat: a second run finds the waiter nowhere and changes nothing (a signal taken up or
-- passed on by the first run is not touched again).
--
-- Returns 2  the waiter had been signalled (the signal taken up, or passed on)
--         1  the waiter was still waiting, not signalled
--         0  the waiter was nowhere: its place had run out, or it had left already
local queue, places, signalled, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local waiter, take, place_ms = ARGV[1], ARGV[2], tonumber(ARGV[3])

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

-- include: cond-signal

-- Its own signal first: one the waiter takes up, even late, is not passed on as well.
local was_signalled = redis.call('ZREM', signalled, waiter) == 1
local was_waiting = redis.call('ZREM', queue, waiter) == 1
redis.call('ZREM', places, waiter)
if was_signalled and take ~= '1' then
  signal_waiters(queue, places, signalled, wakeups, 1, now_ms, place_ms)
end
pass_on_expired(queue, places, signalled, wakeups, now_ms, place_ms)
if was_signalled then
  return 2
end
return was_waiting and 1 or 0
