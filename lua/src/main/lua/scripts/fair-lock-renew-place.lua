-- fair-lock-renew-place.lua: extend the queue places of many waiters in one call, each only while it is still queued.
-- The watchdog sends one call per tick for all fair-lock waiters of its client (batched).
--
-- KEYS[2i-1] queue i    zset   waiting owner -> arrival order
-- KEYS[2i]   places i   zset   waiting owner -> end of its place's lease, server time in ms
-- ARGV[1]    place_ms   lease to give every place still queued, in milliseconds
-- ARGV[i+1]  owner i    "<client-uuid>:<thread-id>" waiting in queue i
--
-- Returns {r1, ..., rn}  ri = 1: place i renewed; ri = 0: owner i is no longer queued, or its place ran out
local place_ms = tonumber(ARGV[1])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

local renewed = {}
for i = 1, #KEYS / 2 do
  local queue, places, owner = KEYS[i * 2 - 1], KEYS[i * 2], ARGV[i + 1]
  -- pcall keeps one key of a foreign type from failing every other item of the batch. A place
  -- whose lease ran out stays out, purged or not: renewing it would put a waiter that stopped
  -- renewing (dead, cut off) back at its old position.
  local place_end = redis.pcall('ZSCORE', places, owner)
  if type(redis.pcall('ZSCORE', queue, owner)) == 'string' and type(place_end) == 'string'
      and tonumber(place_end) > now_ms then
    redis.call('ZADD', places, now_ms + place_ms, owner)
    for _, key in ipairs({queue, places}) do
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
