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
