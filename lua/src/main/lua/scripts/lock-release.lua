-- lock-release.lua: release the owner's hold (its last local hold) and hand the lock to the first waiting client's waiter.
-- The non-fair lock's release, and a lock cache's give-back. Its waiters line up one per client:
-- only the first waiter of each client waits in Redis (the others wait behind it in their JVM), so
-- the line holds at most one place per client, and a release serves one of them, not the herd.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while someone waits
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] queue     zset    waiting owner (the first waiter of its client) -> arrival order
-- KEYS[4] places    zset    waiting owner -> end of its place's lease, server time in ms
-- KEYS[5] wakeups   channel '<wakeups>:<client>' carries 'granted:<owner>=<token>' to the waiter
--                           served; '<wakeups>' itself 'released', for waiters of clients of
--                           earlier versions, which only mark the lock (':waiting'), when nobody
--                           in line could be served
-- ARGV[1] owner     "<client-uuid>:<thread-id>", or "<client-uuid>:cache" for a cache's give-back
-- ARGV[2] token     fencing token of the hold being released
--
-- Returns {1, next, token}  released, and handed to the waiter next, whose hold has that token
--         {1, ''}           released; nobody in line could be served
--         {0, ''}           the owner does not hold this hold: its lease ran out, it was forced, or it never held it
local lock, token_key, queue, places, wakeups = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, token = ARGV[1], ARGV[2]

-- include: publish

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

-- include: grant-next

-- Matching the token, not just the owner, makes a late or repeated release (a reply lost to a
-- timeout, a command replayed after a reconnect) unable to end a newer hold of the same thread.
if redis.call('HGET', lock, owner) ~= token then
  return {0, ''}
end
local waiting = redis.call('HEXISTS', lock, ':waiting')
redis.call('DEL', lock)
local next_waiter, next_token = grant_next(lock, token_key, queue, places, wakeups)
if next_waiter then
  return {1, next_waiter, next_token}
end
-- Publish only when someone marked the lock: an unlock nobody waits for costs no Pub/Sub traffic.
if waiting == 1 then
  redis.call(publish, wakeups, 'released')
end
return {1, ''}
