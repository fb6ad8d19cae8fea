-- semaphore-leave.lua: settle an acquisition its caller gave up on (timed out, interrupted, reply lost): out of the line, permits granted to it given back, and later runs of it refused.
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
-- ARGV[1] waiter    "<client-uuid>:<thread-id>:<attempt>": the acquisition, and the name of its grant
-- ARGV[2] keep_ms   how long to remember that it was given up, in milliseconds (a place's lease)
--
-- Idempotent, and safe before the acquisition's own call: the given-up mark (the grant at 0
-- permits, leased keep_ms) makes a late run of semaphore-acquire.lua or semaphore-try.lua for this
-- waiter change nothing.
--
-- Returns 1  the waiter was queued and left the line
--         2  the waiter held a grant (served from the line, or its reply was lost): the permits went back and on
--         0  neither
local total_key, holds, leases, queue, places, asks, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local leaving, keep_ms = ARGV[1], tonumber(ARGV[2])

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local fields, ttl_keys, waiter = {leaving}, {holds, leases, queue, places, asks}, nil

-- include: semaphore-load
-- include: purge-grants
-- include: purge-semaphore-places

local free = total - sum
local result = 0
if redis.call('ZSCORE', queue, leaving) then
  result = 1
end
redis.call('ZREM', queue, leaving)
redis.call('ZREM', places, leaving)
redis.call('HDEL', asks, leaving)
local held = tonumber(state[6] or '0')
if purged then
  held = tonumber(redis.call('HGET', holds, leaving) or '0')
end
if held > 0 then
  result = 2
  sum = sum - held
  pending[':sum'] = sum
  free = free + held
end
-- The mark: the grant at 0, leased keep_ms (the key may be created here, so its TTL is set now).
pending[leaving] = 0
must_write = true
may_create(leases)
leased(leases, now_ms + keep_ms, leaving)

-- include: serve-line

return finish(result)
