for _, gone in ipairs(redis.call('ZRANGEBYSCORE', readers, '-inf', now_ms)) do
  redis.call('HDEL', rtokens, gone)
end
redis.call('ZREMRANGEBYSCORE', readers, '-inf', now_ms)
