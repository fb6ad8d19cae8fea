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
