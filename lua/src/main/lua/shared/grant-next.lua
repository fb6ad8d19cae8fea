-- Hands the free lock to the first waiter in line whose place is still leased and whose client
-- hears the waiter's channel, '<wakeups>:<client>': one message to one client, not to the herd,
-- and nothing for the others to do. A waiter whose client is not subscribed there (gone, cut off,
-- switching masters) leaves the line, as one whose place ran out does: a live one comes back with
-- its next try, which its resubscription makes. The hold gets a new token and is leased until the
-- waiter's place would have ended (its client renews it from then); the waiter learns of it from
-- the message, or, if that is lost, from its next try, which finds it holding the lock.
-- Returns the waiter served and the hold's token, or nothing if nobody could be served.
local function grant_next(lock, token_key, queue, places, wakeups)
  local now = redis.call('TIME')
  local now_us = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local now_ms = math.floor(now_us / 1000)
  -- Places that ran out are dropped as they come to the front, not searched for on every release.
  local next_token = math.max(now_us, tonumber(redis.call('GET', token_key) or '0') + 1)
  while true do
    local next_waiter = redis.call('ZRANGE', queue, 0, 0)[1]
    if not next_waiter then
      return nil
    end
    local place_end = tonumber(redis.call('ZSCORE', places, next_waiter) or '0')
    redis.call('ZREM', queue, next_waiter)
    redis.call('ZREM', places, next_waiter)
    -- The client is the part of the owner string before its first ':' (Owner.java).
    local client = string.match(next_waiter, '^([^:]*):') or next_waiter
    -- The message goes out before the hold is written; nobody sees either before the script ends.
    if place_end > now_ms and redis.call(publish, wakeups .. ':' .. client,
        'granted:' .. next_waiter .. '=' .. string.format('%d', next_token)) > 0 then
      redis.call('HSET', lock, next_waiter, next_token)
      redis.call('PEXPIRE', lock, place_end - now_ms)
      redis.call('SET', token_key, next_token, 'PX', math.floor((next_token - now_us) / 1000) + 1000)
      return next_waiter, next_token
    end
  end
end
