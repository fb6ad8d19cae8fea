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

-- shared: publish
-- Wake-ups go out on sharded Pub/Sub from Redis 7 on (SPUBLISH: only the channel's shard carries
-- them; clients SSUBSCRIBE), on classic Pub/Sub before (6.2 has no SPUBLISH; clients SUBSCRIBE).
local publish = redis.REDIS_VERSION_NUM and redis.REDIS_VERSION_NUM >= 0x070000 and 'SPUBLISH' or 'PUBLISH'
-- end shared

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local fields, ttl_keys, waiter = {leaving}, {holds, leases, queue, places, asks}, nil

-- shared: semaphore-load
-- Besides the grants, the holdings hash keeps what each call would otherwise recompute, read here
-- in one HMGET with the fields the script asks for: ':sum' the permits live grants hold; ':total'
-- a copy of the total (dropped whenever the total changes); ':lmin' and ':pmin' a time no later
-- than the end of any grant's lease and of any place in line, so that the purges look only once
-- one can have run out, and ':pmin' NONE when no place exists (nobody in line: nothing to serve,
-- nothing to read); ':ttl' a time until which every key of the semaphore that exists lives. A
-- missing hint counts as 0 (look, set the TTLs) and is recomputed, so no hint promises more than
-- is true. Changes to the hash are gathered in `pending` and written by finish() in one HSET. The
-- hash stays when nothing is held (its hints with it) and expires with its TTL.
local NONE = 9007199254740991
local state = redis.call('HMGET', holds, ':sum', ':total', ':lmin', ':pmin', ':ttl', unpack(fields))
local existed = state[1] or state[2] or state[3] or state[4] or state[5]
local sum = tonumber(state[1] or '0')
local total = tonumber(state[2] or redis.call('GET', total_key) or '0')
local lmin, pmin, ttl_until = tonumber(state[3] or '0'), tonumber(state[4] or '0'), tonumber(state[5] or '0')
local pending, must_write, fresh, need_until = {}, false, {}, 0
if not state[2] and redis.call('EXISTS', total_key) == 1 then
  pending[':total'] = total
end
local function leased(key, score, member)
  -- Every ZADD of a lease or a place keeps its hint a lower bound.
  redis.call('ZADD', key, score, member)
  if key == leases and score < lmin then
    lmin = score
    pending[':lmin'] = lmin
  elseif key == places and score < pmin then
    pmin = score
    pending[':pmin'] = pmin
  end
  need_until = math.max(need_until, score)
end
local function may_create(key)
  -- Redis deletes a zset or hash that a call empties: written again, it has no TTL.
  if not fresh[key] then
    fresh[key] = true
    fresh[#fresh + 1] = key
  end
end
local function finish(reply)
  -- The hash first (it may be new), then the TTLs. While the ':ttl' hint promises what this call
  -- needs, the keys that exist live that long already: only a key this call may have created
  -- (may_create) gets a TTL, to that same horizon, and only if it has none. Otherwise every key
  -- is set, for twice as long as needed, so that most calls set none. Scripts that do not hold
  -- every key (ttl_keys) set theirs as long as needed and leave ':ttl' alone.
  local refresh = need_until > 0 and ttl_until < need_until
  local keep_ms = need_until - now_ms
  if refresh and #ttl_keys == 5 then
    keep_ms = 2 * keep_ms
    pending[':ttl'] = now_ms + keep_ms
  end
  if existed or must_write or refresh then
    local args = {}
    for field, value in pairs(pending) do
      args[#args + 1] = field
      args[#args + 1] = value
    end
    if #args > 0 then
      redis.call('HSET', holds, unpack(args))
    end
  end
  if refresh then
    for _, key in ipairs(ttl_keys) do
      local ttl = redis.call('PTTL', key)
      if ttl ~= -2 and ttl < keep_ms then
        redis.call('PEXPIRE', key, keep_ms)
      end
    end
  elseif need_until > 0 then
    for _, key in ipairs(fresh) do
      if redis.REDIS_VERSION_NUM and redis.REDIS_VERSION_NUM >= 0x070000 then
        redis.call('PEXPIRE', key, ttl_until - now_ms, 'NX')
      elseif redis.call('PTTL', key) == -1 then
        redis.call('PEXPIRE', key, ttl_until - now_ms)
      end
    end
  end
  return reply
end
-- end shared
-- shared: purge-grants
-- Grants whose lease ran out (dead or cut-off clients, given-up marks) return to the pool, looked
-- for only once one can have run out; afterwards ':lmin' is the earliest lease left.
local purged = false
if lmin <= now_ms then
  local gone = redis.call('ZRANGEBYSCORE', leases, '-inf', now_ms)
  for i = 1, #gone, 1000 do
    local batch = {unpack(gone, i, math.min(i + 999, #gone))}
    local held = redis.call('HMGET', holds, unpack(batch))
    for j = 1, #batch do
      sum = sum - tonumber(held[j] or '0')
    end
    redis.call('HDEL', holds, unpack(batch))
  end
  if #gone > 0 then
    redis.call('ZREMRANGEBYSCORE', leases, '-inf', now_ms)
    pending[':sum'] = sum
    purged = true
  end
  lmin = tonumber(redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')[2]) or NONE
  pending[':lmin'] = lmin
end
-- Live grants are in leases: while one is, writing to leases cannot create the key afresh.
local live = sum > 0
-- end shared
-- shared: purge-semaphore-places
-- Places that ran out (dead waiters) are dropped, looked for only once one can have run out;
-- afterwards ':pmin' is the earliest place left, or NONE: then nobody waits, and what is left of
-- the line (a waiter half-written by hand, never by a script) goes with the places.
if pmin <= now_ms then
  local gone = redis.call('ZRANGEBYSCORE', places, '-inf', now_ms)
  for i = 1, #gone, 1000 do
    local batch = {unpack(gone, i, math.min(i + 999, #gone))}
    redis.call('ZREM', queue, unpack(batch))
    redis.call('HDEL', asks, unpack(batch))
  end
  if #gone > 0 then
    redis.call('ZREMRANGEBYSCORE', places, '-inf', now_ms)
  end
  pmin = tonumber(redis.call('ZRANGE', places, 0, 0, 'WITHSCORES')[2]) or NONE
  if pmin == NONE then
    redis.call('DEL', queue, asks)
  end
  pending[':pmin'] = pmin
end
-- end shared

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

-- shared: serve-line
-- Serve the line: while the first waiter's ask fits, it takes the permits as its own grant, leased
-- until its place would have ended, and is told by name (unless it is this call's own waiter). A
-- first waiter without a live place or an ask (dead, or left half-written) cannot be served and
-- is dropped. Each waiter asks for one permit at least, so no more than `free` can be served: the
-- line is read that many at a time, with their asks, and not read again while it serves them.
-- An ask is "<permits> <end of its place>" (the place's end copied, so that serving reads one
-- key); a bare "<permits>" has the end read from places. A first waiter asking for more than the
-- total (it shrank since the waiter queued) leaves the line, so that it blocks nobody behind it
-- (dead or alive), is told by its bare name to ask again, and is marked as waiting out of line.
-- ':over' is that mark: a server time in ms until which a waiter asking for more than the total
-- may wait out of line without asking again; semaphore-add.lua and semaphore-set.lua wake such
-- waiters when the total grows, on the channel of each client listed in ':over-clients'.
-- Everything said to one waiter goes to its client's channel, '<wakeups>:<client>' (the client is
-- the waiter's name up to its first ':', Owner.java), which only that client hears. No place
-- (':pmin' NONE) means nobody in line: the line is not read; a line served empty sets it so.
local function client_channel(who)
  return wakeups .. ':' .. (string.match(who, '^([^:]*):') or who)
end
local function over_until(until_ms, who)
  if not pending[':over'] then
    local mark = redis.call('HMGET', holds, ':over', ':over-clients')
    pending[':over'], pending[':over-clients'] = tonumber(mark[1] or '0') or 0, mark[2] or ''
  end
  pending[':over'] = math.max(pending[':over'], until_ms)
  local client = string.match(who, '^([^:]*):') or who
  if not string.find(' ' .. pending[':over-clients'] .. ' ', ' ' .. client .. ' ', 1, true) then
    pending[':over-clients'] = pending[':over-clients'] == '' and client or pending[':over-clients'] .. ' ' .. client
  end
  must_write = true
  need_until = math.max(need_until, until_ms)
end
local served, served_until, blocked = {}, 0, false
while free > 0 and not blocked and pmin < NONE do
  local count = math.min(free, 100)
  local firsts = redis.call('ZRANGE', queue, 0, count - 1)
  local records = #firsts > 0 and redis.call('HMGET', asks, unpack(firsts)) or {}
  local out = {}
  for i, first in ipairs(firsts) do
    local ask, place_end = 0, 0
    if records[i] then
      local a, e = string.match(records[i], '^(%d+) (%d+)$')
      if a then
        ask, place_end = tonumber(a), tonumber(e)
      else
        ask = tonumber(records[i]) or 0
        place_end = tonumber(redis.call('ZSCORE', places, first) or '0')
      end
    end
    if ask <= 0 or place_end <= now_ms then
      out[#out + 1] = first
    elseif free <= 0 then
      blocked = true
    elseif ask > total then
      out[#out + 1] = first
      over_until(place_end, first)
      redis.call(publish, client_channel(first), first)
    elseif ask > free then
      blocked = true
    else
      out[#out + 1] = first
      if not live then
        may_create(leases)
      end
      pending[first] = ask
      sum = sum + ask
      pending[':sum'] = sum
      must_write = true
      leased(leases, place_end, first)
      served[first] = true
      served_until = math.max(served_until, place_end)
      free = free - ask
      if first ~= waiter then
        redis.call(publish, client_channel(first), 'granted:' .. first)
      end
    end
    if blocked then
      break
    end
  end
  if #out > 0 then
    redis.call('ZREM', queue, unpack(out))
    redis.call('ZREM', places, unpack(out))
    redis.call('HDEL', asks, unpack(out))
  end
  if #out == #firsts and #firsts < count then
    pmin = NONE
    pending[':pmin'] = NONE
  end
end
-- end shared

return finish(result)
