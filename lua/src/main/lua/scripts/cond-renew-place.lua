-- cond-renew-place.lua: extend the places of many condition waiters in one call, each only while it still waits, and the signal of each that is signalled and has not taken it up yet; pass on signals that their waiters stopped renewing.
-- The watchdog sends one call per tick for all condition waiters of its client (batched).
--
-- KEYS[4i-3] queue i      zset    waiter -> arrival order; waiters not yet signalled
-- KEYS[4i-2] places i     zset    waiter -> end of its place's lease, server time in ms
-- KEYS[4i-1] signalled i  zset    waiter -> end of its signal's lease, server time in ms
-- KEYS[4i]   wakeups i    channel '<wakeups>:<client>' carries 'granted:<waiter>' to a waiter that is signalled
-- ARGV[1]    place_ms     lease to give every place still waiting, in milliseconds
-- ARGV[i+1]  waiter i     "<client-uuid>:<thread-id>:<attempt>" waiting on condition i
--
-- A signalled waiter takes its signal up only once it has the lock again, which may be long after the
-- signal (its signaller keeps the lock): while it renews, its signal is renewed with it and stays its
-- own. A signal passes on only once its lease runs out: its waiter stopped renewing (its client died,
-- or was cut off from Redis for a lease).
--
-- Returns {r1, ..., rn}  ri = 1: place i renewed, waiter i still waits
--                        ri = 2: waiter i is signalled, not yet taken up: its signal renewed
--                        ri = 0: waiter i is nowhere (left, or its place or signal ran out): nothing renewed
local place_ms = tonumber(ARGV[1])

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

-- include: cond-signal

local renewed = {}
for i = 1, #KEYS / 4 do
  local queue, places, signalled, wakeups, waiter = KEYS[i * 4 - 3], KEYS[i * 4 - 2], KEYS[i * 4 - 1], KEYS[i * 4], ARGV[i + 1]
  -- A live waiter's renewal is what finds a signal that a dead waiter never took up.
  pass_on_expired(queue, places, signalled, wakeups, now_ms, place_ms)
  -- Waiters whose place ran out (dead, or cut off for a lease) leave, so that they do not pile up
  -- in a condition that live waiters keep alive and nobody signals.
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', places, '-inf', now_ms)) do
    redis.call('ZREM', queue, gone)
  end
  redis.call('ZREMRANGEBYSCORE', places, '-inf', now_ms)
  -- A place whose lease ran out stays out: renewing it would put back a waiter that stopped renewing.
  local place_end = redis.call('ZSCORE', places, waiter)
  if redis.call('ZSCORE', queue, waiter) and place_end and tonumber(place_end) > now_ms then
    redis.call('ZADD', places, now_ms + place_ms, waiter)
    for _, key in ipairs({queue, places}) do
      if redis.call('PTTL', key) < place_ms then
        redis.call('PEXPIRE', key, place_ms)
      end
    end
    renewed[i] = 1
  elseif redis.call('ZSCORE', signalled, waiter) then
    -- Still live here: pass_on_expired above took out every signal whose lease ran out.
    redis.call('ZADD', signalled, 'XX', now_ms + place_ms, waiter)
    if redis.call('PTTL', signalled) < place_ms + place_ms then
      redis.call('PEXPIRE', signalled, place_ms + place_ms)
    end
    renewed[i] = 2
  else
    renewed[i] = 0
  end
end
return renewed
