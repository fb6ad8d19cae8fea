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
