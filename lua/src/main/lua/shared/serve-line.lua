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
