-- Wake-ups go out on sharded Pub/Sub from Redis 7 on (SPUBLISH: only the channel's shard carries
-- them; clients SSUBSCRIBE), on classic Pub/Sub before (6.2 has no SPUBLISH; clients SUBSCRIBE).
local publish = redis.REDIS_VERSION_NUM and redis.REDIS_VERSION_NUM >= 0x070000 and 'SPUBLISH' or 'PUBLISH'
