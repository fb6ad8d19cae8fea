-- lock-ask.lua: tell a client that caches a lock that another client wants it (docs/design/lock-caching.md).
-- Sent, without waiting for its reply, after a try whose reply named the cacher; the try's waiting
-- mark is the ask itself, and the cacher's next renewal sees it if this message is lost.
--
-- KEYS[1] asks      channel the cacher's client channel, "<prefix>:client:{<client-uuid>}:asks"; passed as
--                           a key so that a cluster runs the script on the channel's shard
-- ARGV[1] lock      the lock's key, by which the cacher finds its cache
--
-- Returns the number of clients that received the message (0: the cacher is not listening)
local asks = KEYS[1]
local lock = ARGV[1]

-- include: publish

return redis.call(publish, asks, lock)
