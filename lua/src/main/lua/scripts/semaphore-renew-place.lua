-- semaphore-renew-place.lua: extend the queue places of many semaphore waiters in one call, each only while it is still queued.
-- The watchdog sends one call per tick for all semaphore waiters of its client (batched).
--
-- KEYS[3i-2] queue i    zset   waiter -> arrival order; only waiters not yet served
-- KEYS[3i-1] places i   zset   waiter -> end of its place's lease, server time in ms; queued or granted
-- KEYS[3i]   asks i     hash   waiter -> "<permits it asked for> <end of its place>"
-- ARGV[1]    place_ms   lease to give every place still queued, in milliseconds
-- ARGV[i+1]  waiter i   "<client-uuid>:<thread-id>:<attempt>" waiting in queue i
--
-- Returns {r1, ..., rn}  ri = 1: place i renewed; ri = 0: waiter i is no longer queued (served, or gone), or its place ran out
local place_ms = tonumber(ARGV[1])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

local renewed = {}
for i = 1, #KEYS / 3 do
  local queue, places, asks, waiter = KEYS[i * 3 - 2], KEYS[i * 3 - 1], KEYS[i * 3], ARGV[i + 1]
  -- pcall keeps one key of a foreign type from failing every other item of the batch. A place
  -- whose lease ran out stays out, purged or not: renewing it would put a waiter that stopped
  -- renewing (dead, cut off) back at its old position.
  local place_end = redis.pcall('ZSCORE', places, waiter)
  if type(redis.pcall('ZSCORE', queue, waiter)) == 'string' and type(place_end) == 'string'
      and tonumber(place_end) > now_ms then
    -- Never earlier than it was (the ':pmin' hint stays a lower bound), and copied into the ask,
    -- which serving reads.
    local place_end = math.max(tonumber(place_end), now_ms + place_ms)
    redis.call('ZADD', places, place_end, waiter)
    local ask = redis.call('HGET', asks, waiter)
    if ask then
      redis.call('HSET', asks, waiter, string.match(ask, '^(%d+)') .. ' ' .. place_end)
    end
    for _, key in ipairs({queue, places, asks}) do
      if redis.call('PTTL', key) < place_ms then
        redis.call('PEXPIRE', key, place_ms)
      end
    end
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
