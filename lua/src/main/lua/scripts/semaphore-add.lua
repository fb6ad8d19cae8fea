-- semaphore-add.lua: grow (or, negative, shrink) the total number of permits, and serve the waiters first in line with the permits now free.
--
-- KEYS[1] total     string  the total number of permits; persists until deleted
-- KEYS[2] holds     hash    grant -> permits it holds (0: given up, kept until its lease ends); ':sum', ':total', ':lmin', ':pmin', ':ttl', ':over', ':over-clients' (see semaphore-acquire.lua)
-- KEYS[3] leases    zset    grant -> end of its lease, server time in ms
-- KEYS[4] queue     zset    waiter -> arrival order; only waiters not yet served
-- KEYS[5] places    zset    waiter -> end of its place's lease, server time in ms
-- KEYS[6] asks      hash    waiter -> "<permits it asked for> <end of its place>"
-- KEYS[7] wakeups   the base of the client channels '<wakeups>:<client>' (client: the waiter's name up to its
--                   first ':'): 'granted:<waiter>' for each waiter served from the line, the bare name of a
--                   waiter that must ask again, 'released' to each client with a waiter above the total; nothing is published on '<wakeups>' itself
-- ARGV[1] delta     the change to the total
--
-- Returns {1, new_total}  changed
--         {0, total}      a shrink would make the total negative; nothing changed (growth is always
--                         taken, also of a total that starts negative)
local total_key, holds, leases, queue, places, asks, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local delta = tonumber(ARGV[1])

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local current = tonumber(redis.call('GET', total_key) or '0')
if delta < 0 and current + delta < 0 then
  return {0, current}
end
redis.call('SET', total_key, current + delta)
-- The copy in the holdings goes (finish() writes the new one only if the hash exists).
redis.call('HDEL', holds, ':total')

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local fields, ttl_keys, waiter = {':over', ':over-clients'}, {holds, leases, queue, places, asks}, nil

-- include: semaphore-load
-- include: purge-grants
-- include: purge-semaphore-places

local free = total - sum

-- include: serve-line

-- Waiters that asked for more than the total wait out of line for it to grow (':over', see
-- serve-line): growth wakes them all, to ask again, with 'released' on the channel of each client
-- that has one ('<wakeups>:<client>', listed in ':over-clients'), and ends the mark; those still
-- asking for more than the total mark it again.
if delta > 0 and (state[6] or pending[':over']) then
  local clients = pending[':over-clients'] or state[7] or ''
  pending[':over'], pending[':over-clients'] = nil, nil
  redis.call('HDEL', holds, ':over', ':over-clients')
  for client in string.gmatch(clients, '%S+') do
    redis.call(publish, wakeups .. ':' .. client, 'released')
  end
end

return finish({1, current + delta})
