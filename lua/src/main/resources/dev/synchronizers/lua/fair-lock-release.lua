-- fair-lock-release.lua: release the owner's hold (its last local hold) and wake whoever waits: the first fair waiter by name.
-- A release wakes only fair waiters here; the non-fair lock's release is lock-release.lua.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while a non-fair waiter waits
-- KEYS[2] queue     zset    fair waiter -> arrival order
-- KEYS[3] places    zset    fair waiter -> end of its place's lease, server time in ms
-- KEYS[4] wakeups   channel wake-ups are published to: 'released' for non-fair waiters, a fair waiter's owner
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] token     fencing token of the hold being released
--
-- Returns {1, next}  released; next is the first live fair waiter, now woken, or '' if none
--         {0, ''}    the owner does not hold this hold: its lease ran out, it was forced, or it never held it
local lock, queue, places, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, token = ARGV[1], ARGV[2]

-- Matching the token, not just the owner, makes a late or repeated release (a reply lost to a
-- timeout, a command replayed after a reconnect) unable to end a newer hold of the same thread.
if redis.call('HGET', lock, owner) ~= token then
  return {0, ''}
end
local waiting = redis.call('HEXISTS', lock, ':waiting')
redis.call('DEL', lock)
-- Publish only when someone waits: an unlock nobody waits for costs no Pub/Sub traffic.
if waiting == 1 then
  redis.call('PUBLISH', wakeups, 'released')
end

-- The first fair waiter whose place is still leased is woken by name: one waiter, not the herd.
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', places, '-inf', now_ms)) do
  redis.call('ZREM', queue, gone)
end
redis.call('ZREMRANGEBYSCORE', places, '-inf', now_ms)
local next_waiter = redis.call('ZRANGE', queue, 0, 0)[1]
if next_waiter then
  redis.call('PUBLISH', wakeups, next_waiter)
  return {1, next_waiter}
end
return {1, ''}
