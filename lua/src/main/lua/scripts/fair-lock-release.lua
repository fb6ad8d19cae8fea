-- fair-lock-release.lua: release the owner's hold (its last local hold) and hand the lock to the first live fair waiter.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- KEYS[3] queue     zset    fair waiter -> arrival order
-- KEYS[4] places    zset    fair waiter -> end of its place's lease, server time in ms
-- KEYS[5] wakeups   channel '<wakeups>:<client>' carries 'granted:<owner>=<token>' to the waiter served
-- ARGV[1] owner     "<client-uuid>:<thread-id>"
-- ARGV[2] token     fencing token of the hold being released
--
-- The waiter served holds the lock from here on, with a new token, leased until its place would
-- have ended (its client renews it from then); it learns so from the message, or, if that is lost,
-- from its next try, which finds it holding the lock and takes it afresh.
--
-- Returns {1, next, token}  released; next is the fair waiter now holding the lock, with its token
--         {1, ''}           released; no fair waiter could be served
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
redis.call('DEL', lock)
local next_waiter, next_token = grant_next(lock, token_key, queue, places, wakeups)
if next_waiter then
  return {1, next_waiter, next_token}
end
return {1, ''}
