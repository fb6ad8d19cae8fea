-- Signals up to count (-1: every) of the oldest waiters whose place has not run out: each moves
-- from the queue to the signalled set, keeping its place's end as its signal's lease, and is named
-- on the channel. A waiter whose place ran out (dead, or cut off for a lease) is dropped on the way.
local function signal_waiters(queue, places, signalled, wakeups, count, now_ms, place_ms)
  local woken = {}
  while count ~= 0 do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then
      break
    end
    local place_end = tonumber(redis.call('ZSCORE', places, head) or '0')
    redis.call('ZREM', queue, head)
    redis.call('ZREM', places, head)
    if place_end > now_ms then
      redis.call('ZADD', signalled, place_end, head)
      -- The set outlives its last signal by a lease, so that a live waiter's renewal finds a
      -- signal whose waiter never took it up, and passes it on.
      if redis.call('PTTL', signalled) < place_end - now_ms + place_ms then
        redis.call('PEXPIRE', signalled, place_end - now_ms + place_ms)
      end
      -- On the waiter's client's channel: only that client hears it (the client: the waiter up to its first ':').
      redis.call(publish, wakeups .. ':' .. (string.match(head, '^([^:]*):') or head), 'granted:' .. head)
      woken[#woken + 1] = head
      count = count - 1
    end
  end
  return woken
end

-- A signal whose waiter did not take it up within its lease (it died, or was cut off) passes on
-- to the oldest live waiter: no signal is swallowed by a dead waiter.
local function pass_on_expired(queue, places, signalled, wakeups, now_ms, place_ms)
  local expired = redis.call('ZRANGEBYSCORE', signalled, '-inf', now_ms)
  if #expired > 0 then
    redis.call('ZREMRANGEBYSCORE', signalled, '-inf', now_ms)
    signal_waiters(queue, places, signalled, wakeups, #expired, now_ms, place_ms)
  end
end
