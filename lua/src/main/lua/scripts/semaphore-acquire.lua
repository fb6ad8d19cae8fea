-- semaphore-acquire.lua: take permits for a waiter if they are free and nobody is in line, claim permits granted to it while it waited, or queue it.
--
-- KEYS[1] total     string  the total number of permits
-- KEYS[2] holds     hash    grant -> permits it holds (0: given up, kept until its lease ends); ':sum', ':total', ':lmin', ':pmin', ':ttl', ':over', ':over-clients' (see below)
-- KEYS[3] leases    zset    grant -> end of its lease, server time in ms
-- KEYS[4] queue     zset    waiter -> arrival order; only waiters not yet served
-- KEYS[5] places    zset    waiter -> end of its place's lease, server time in ms
-- KEYS[6] asks      hash    waiter -> "<permits it asked for> <end of its place>"
-- KEYS[7] wakeups   the base of the client channels '<wakeups>:<client>' (client: the waiter's name up to its
--                   first ':'): 'granted:<waiter>' for each waiter served from the line, the bare name of a
--                   waiter that must ask again; nothing is published on '<wakeups>' itself
-- ARGV[1] waiter    "<client-uuid>:<thread-id>:<attempt>": one acquisition, unique; it is also the name of its grant
-- ARGV[2] permits   how many, > 0
-- ARGV[3] lease_ms  lease of the permits, in milliseconds
-- ARGV[4] place_ms  lease of a place in the queue, in milliseconds
-- ARGV[5] above     "wait": asking for more than the total, the caller waits for it to grow (marked
--                   for semaphore-add.lua and semaphore-set.lua to wake); "refuse": the caller fails, and nothing is written
--
-- Permits are counted per grant, never per client: a grant is renewed, released and given back
-- under its own name, so nothing done for one acquisition can touch another's permits, and every
-- follow-up of a call whose reply was lost (semaphore-leave.lua) is idempotent.
--
-- Returns {1, available}  acquired (now, granted from the line earlier, or by an earlier run of this same
--                         call); available is what is left for others
--         {0, wait_ms}    queued (or kept in place); wait_ms: how long until permits can come free
--                         without a wake-up (no later than the earliest grant lease or place ends)
--         {-1, total}     more permits asked for than the total; the waiter left the line (and, for
--                         "wait", growth of the total will publish 'released')
--         {-2, 0}         this acquisition was given up before this call ran; nothing changed
local total_key, holds, leases, queue, places, asks, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local waiter, permits = ARGV[1], tonumber(ARGV[2])
local lease_ms, place_ms, above = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local fields, ttl_keys = {waiter}, {holds, leases, queue, places, asks}

-- include: semaphore-load
-- include: purge-grants
-- include: purge-semaphore-places

local mine = state[6]
if purged then
  mine = redis.call('HGET', holds, waiter)
end
-- Given up before this call ran (a late run of a call whose caller left): change nothing more.
if mine and tonumber(mine) <= 0 then
  return finish({-2, 0})
end

local free = total - sum

-- A queued waiter asking for more than the total leaves the line before it is served, so that it
-- neither blocks the waiters behind it nor is told about itself.
if permits > total then
  redis.call('ZREM', queue, waiter)
  redis.call('ZREM', places, waiter)
  redis.call('HDEL', asks, waiter)
end

-- include: serve-line

-- Granted (from the line, just now or earlier, or by an earlier run of this same call): claim it
-- with a full lease from now, as the caller counts it from this call.
if mine or served[waiter] then
  leased(leases, now_ms + lease_ms, waiter)
  return finish({1, free})
end

-- More than the total: the caller waits out of line for the total to grow, at most place_ms before
-- it asks again, and ':over' (see serve-line) asks semaphore-add.lua and semaphore-set.lua to wake
-- it then. The holdings, which keep the mark, live at least that long.
if permits > total then
  if above == 'wait' then
    over_until(now_ms + place_ms, waiter)
    may_create(holds)
  end
  return finish({-1, total})
end

if free >= permits and (pmin == NONE or not redis.call('ZRANGE', queue, 0, 0)[1]) then
  if not live then
    may_create(leases)
  end
  pending[waiter] = permits
  sum = sum + permits
  pending[':sum'] = sum
  must_write = true
  leased(leases, now_ms + lease_ms, waiter)
  return finish({1, free - permits})
end

-- Queue it (a waiter already in line keeps its turn) and lease its place. An empty line means the
-- queue's keys are created afresh: they get their TTLs now, whatever ':ttl' says.
local tail = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')[2]
if not tail then
  may_create(queue)
  may_create(places)
  may_create(asks)
end
redis.call('ZADD', queue, 'NX', (tonumber(tail) or 0) + 1, waiter)
redis.call('HSET', asks, waiter, permits .. ' ' .. (now_ms + place_ms))
leased(places, now_ms + place_ms, waiter)

-- Sleep no longer than until permits can come free without a wake-up: the hints are no later
-- than the earliest grant lease and place end.
local wait_ms = math.min(place_ms, lmin - now_ms, pmin - now_ms)
return finish({0, math.max(wait_ms, 1)})
