-- semaphore-set.lua: set the total number of permits, once, and wake the waiters that asked for more than the total before it was set.
--
-- KEYS[1] total     string  the total number of permits; persists until deleted
-- KEYS[2] holds     hash    its ':total' field is a copy of the total, dropped here when the total is set; its
--                           ':over' field marks waiters asking for more than the total, ':over-clients' lists
--                           their clients (see semaphore-acquire.lua)
-- KEYS[3] wakeups   the base of the client channels: 'released' is published on '<wakeups>:<client>' for each
--                   client listed when the total set wakes such waiters
-- ARGV[1] permits   the total to set; may be negative (nobody acquires until it is raised)
--
-- Returns 1  set
--         0  already set; nothing changed
local total, holds, wakeups = KEYS[1], KEYS[2], KEYS[3]
local permits = ARGV[1]

-- include: publish

if redis.call('SET', total, permits, 'NX') then
  redis.call('HDEL', holds, ':total')
  -- Before the total was set it counted as 0, so any waiter then waited out of line for it to
  -- grow: a total above 0 wakes them all, to ask again, and ends the mark (as semaphore-add.lua).
  if tonumber(permits) > 0 then
    local clients = redis.call('HGET', holds, ':over-clients')
    if redis.call('HDEL', holds, ':over', ':over-clients') > 0 then
      for client in string.gmatch(clients or '', '%S+') do
        redis.call(publish, wakeups .. ':' .. client, 'released')
      end
    end
  end
  return 1
end
return 0
