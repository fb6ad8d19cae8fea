-- redlock-settle.lua: on one Redlock node, give the acquirer's hold the fencing token it settled on (the largest its
-- quorum proposed) and make the node's last token at least that, so that every later quorum, which shares a node
-- with this one, proposes a greater token.
--
-- KEYS[1] lock      hash    owner -> fencing token of its hold; ':waiting' -> 1 while someone waits
-- KEYS[2] token     string  last fencing token issued for this name; lives one second past its issue
-- ARGV[1] owner     "<client-uuid>:<thread-id>:<attempt>", one per acquisition
-- ARGV[2] token     the token the acquirer settled on
--
-- Sent to every node that may hold the grant, the nodes that proposed the token included: a grant can end before
-- the acquisition is decided (forced, or its lease run out early on a clock that jumped ahead).
--
-- Returns 1  the owner holds the lock here and this node proposed no more than the settled token: its hold now
--            carries the settled token, and the node knows it; the node counts for the acquisition
--         2  the owner holds the lock here, but this node proposed more than the settled token (its grant's reply
--            came after the acquirer took the largest proposal): its hold now carries the settled token, so that
--            every node records the same token for it, but the node does not count for the acquisition
--         0  the owner does not hold it here (its lease ran out, it was forced): nothing changed
local lock, token_key = KEYS[1], KEYS[2]
local owner, token = ARGV[1], tonumber(ARGV[2])

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
redis.replicate_commands()

-- Only while held: a node whose lease already ran out may serve another acquirer by now, and
-- learning the token afterwards would not keep that acquirer's token above it.
local held = redis.call('HGET', lock, owner)
if not held then
  return 0
end
-- Counted only under a token at least its own proposal: the node granted after every earlier hold it had ended, so
-- its proposal is above their tokens, and the acquirer's token is above them only if it is at least that proposal.
local counted = tonumber(held) <= token
local now = redis.call('TIME')
local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local last = math.max(token, tonumber(redis.call('GET', token_key) or '0'))
redis.call('HSET', lock, owner, token)
-- Kept until this node's clock passes the token by a second: from then on the clock alone proposes more.
redis.call('SET', token_key, string.format('%d', last), 'PX', math.max(1, math.floor((last - now_us) / 1000) + 1000))
if counted then
  return 1
end
return 2
