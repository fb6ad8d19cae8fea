-- semaphore-try.lua: take permits for one grant if they are free now, ahead of any queue (tryAcquire() barges).
--
-- KEYS[1] total     string  the total number of permits
-- KEYS[2] holds     hash    grant -> permits it holds (0: given up, kept until its lease ends); ':sum', ':total', ':lmin', ':pmin', ':ttl' (see semaphore-acquire.lua)
-- KEYS[3] leases    zset    grant -> end of its lease, server time in ms
-- ARGV[1] grant     "<client-uuid>:<thread-id>:<attempt>": this acquisition, unique
-- ARGV[2] permits   how many, >= 0; 0 takes what is available ("drain")
-- ARGV[3] lease_ms  lease of the permits, in milliseconds
--
-- Returns {1, taken}  acquired taken permits (for 0: every available permit, possibly none); a second run
--                     of the same call returns what the first took and takes nothing more
--         {0, 0}      not enough free permits; nothing changed
--         {-1, total} more permits asked for than the total; nothing changed
--         {-2, 0}     this acquisition was given up before this call ran; nothing changed
local total_key, holds, leases = KEYS[1], KEYS[2], KEYS[3]
local grant, permits, lease_ms = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
-- Holding only the grants' keys, it refreshes their TTLs itself and leaves ':ttl' alone.
local fields, ttl_keys, queue, places = {grant}, {holds, leases}, nil, nil

-- include: semaphore-load
-- include: purge-grants

local mine = state[6]
if purged then
  mine = redis.call('HGET', holds, grant)
end
if mine then
  if tonumber(mine) <= 0 then
    return finish({-2, 0})
  end
  return finish({1, tonumber(mine)})
end

if permits > total then
  return finish({-1, total})
end
local available = total - sum
local taken = permits
if permits == 0 then
  taken = math.max(available, 0)
end
if permits > 0 and available < permits then
  return finish({0, 0})
end
if taken > 0 then
  pending[grant] = taken
  sum = sum + taken
  pending[':sum'] = sum
  must_write = true
  may_create(leases)
  leased(leases, now_ms + lease_ms, grant)
end
return finish({1, taken})
