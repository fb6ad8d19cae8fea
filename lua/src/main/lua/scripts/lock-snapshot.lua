-- lock-snapshot.lua: read a lock's holders and queue at one moment, for monitoring; changes nothing.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while a non-fair waiter
--                           waits; ':w:<client-uuid>' -> how many threads of that client wait (non-fair),
--                           "<count>:<until_ms>" or "<count>" (see lock-acquire-waiting.lua)
-- KEYS[2] places    zset    waiting owner -> end of its place's lease, server time in ms (fair: every
--                           waiter; non-fair: the first waiter of each waiting client)
--
-- Returns {pttl, queued, {owner, token, ...}, {client, count, ...}}
--         pttl     the hold's remaining lease in ms (-2: no hold, -1: no lease)
--         queued   waiters in line whose place is live and whose client has no count in 'waiting'
--                  (that count includes them)
--         holders  the owners in the lock hash, with their tokens
--         waiting  the non-fair waiting counts per client that still count at this moment
local lock, places = KEYS[1], KEYS[2]

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
-- It writes nothing, so nothing is replicated.
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
-- A place whose lease ran out is not a waiter, though no script has purged it yet.
local live = redis.call('ZRANGEBYSCORE', places, '(' .. now_ms, '+inf')
local holders, waiting, counted = {}, {}, {}
local fields = redis.call('HGETALL', lock)
for i = 1, #fields, 2 do
  local field, value = fields[i], fields[i + 1]
  local client = string.match(field, '^:w:(.+)$')
  if client then
    -- A count from a failed try lasts until that waiter's next try was due: one past it is over
    -- (the waiter gave up or died); a count without an end lasts as long as the hold.
    local count, until_ms = string.match(value, '^(%d+):(%d+)$')
    if not count then
      count = value
    end
    if tonumber(count) and (not until_ms or tonumber(until_ms) > now_ms) then
      waiting[#waiting + 1] = client
      waiting[#waiting + 1] = tonumber(count)
      counted[client] = true
    end
  elseif string.sub(field, 1, 1) ~= ':' then
    holders[#holders + 1] = field
    holders[#holders + 1] = value
  end
end
local queued = 0
for _, waiter in ipairs(live) do
  if not counted[string.match(waiter, '^([^:]*):') or waiter] then
    queued = queued + 1
  end
end
return {redis.call('PTTL', lock), queued, holders, waiting}
