-- semaphore-release.lua: release permits of named grants, and serve the waiters first in line with the permits now free.
--
-- KEYS[1] total     string  the total number of permits
-- KEYS[2] holds     hash    grant -> permits it holds (0: given up, kept until its lease ends); ':sum', ':total', ':lmin', ':pmin', ':ttl', ':over', ':over-clients' (see semaphore-acquire.lua)
-- KEYS[3] leases    zset    grant -> end of its lease, server time in ms
-- KEYS[4] queue     zset    waiter -> arrival order; only waiters not yet served
-- KEYS[5] places    zset    waiter -> end of its place's lease, server time in ms
-- KEYS[6] asks      hash    waiter -> "<permits it asked for> <end of its place>"
-- KEYS[7] wakeups   the base of the client channels '<wakeups>:<client>' (client: the waiter's name up to its
--                   first ':'): 'granted:<waiter>' for each waiter served from the line, the bare name of a
--                   waiter that must ask again; nothing is published on '<wakeups>' itself
-- ARGV[1] grants    space-separated "<grant>=<keep>": each grant keeps at most <keep> permits (0: ends)
--
-- Setting what a grant keeps, rather than subtracting, makes the release idempotent: run twice (a
-- retry after a lost reply, a replayed command) it releases once.
--
-- Returns {released, missing}  released: permits released by this call; missing: space-separated grants that
--                              held no permits (lost: their lease ran out, or they were given up), "" if none
local total_key, holds, leases, queue, places, asks, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local grants = ARGV[1]

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local names, keeps = {}, {}
for grant, keep in string.gmatch(grants, '(%S+)=(%d+)') do
  names[#names + 1] = grant
  keeps[#keeps + 1] = tonumber(keep)
end
-- The grants are read with the hints when they are few (nearly always one or two); many are read
-- in batches, as Lua unpacks a few thousand values at most.
local fields, ttl_keys, waiter = names, {holds, leases, queue, places, asks}, nil
if #names > 500 then
  fields = {}
end

-- include: semaphore-load
-- include: purge-grants
-- include: purge-semaphore-places

local heldv = {unpack(state, 6)}
if purged or #fields < #names then
  heldv = {}
  for i = 1, #names, 500 do
    local batch = redis.call('HMGET', holds, unpack(names, i, math.min(i + 499, #names)))
    for j = 1, #batch do
      heldv[i + j - 1] = batch[j]
    end
  end
end
local current = {}
for i, grant in ipairs(names) do
  if current[grant] == nil then
    current[grant] = heldv[i] or false
  end
end
local free = total - sum
local released, missing, ended = 0, {}, {}
for i, grant in ipairs(names) do
  local held, keep = tonumber(current[grant] or '0'), keeps[i]
  if held <= 0 then
    missing[#missing + 1] = grant
  elseif held > keep then
    released = released + held - keep
    sum = sum - (held - keep)
    pending[':sum'] = sum
    must_write = true
    if keep == 0 then
      ended[#ended + 1] = grant
      pending[grant] = nil
      current[grant] = false
    else
      pending[grant] = keep
      current[grant] = tostring(keep)
    end
  end
end
free = free + released

-- include: serve-line

-- Ended grants leave only now, after the served ones joined leases, so that the key is never
-- emptied (and created afresh, without a TTL) in between.
for i = 1, #ended, 500 do
  redis.call('HDEL', holds, unpack(ended, i, math.min(i + 499, #ended)))
  redis.call('ZREM', leases, unpack(ended, i, math.min(i + 499, #ended)))
end
-- Nothing held leaves the holdings in place, hints and all (a ':sum' of 0): the next acquire reads
-- them rather than recompute them, and they expire with their TTL, as every key here does.
return finish({released, table.concat(missing, ' ')})
