for _, gone in ipairs(redis.call('ZRANGEBYSCORE', places, '-inf', now_ms)) do
  redis.call('ZREM', queue, gone)
end
redis.call('ZREMRANGEBYSCORE', places, '-inf', now_ms)
