-- semaphore-set.lua: set the total number of permits, once.
--
-- KEYS[1] total     string  the total number of permits; persists until deleted
-- KEYS[2] holds     hash    its ':total' field is a copy of the total, dropped here when the total is set
-- ARGV[1] permits   the total to set; may be negative (nobody acquires until it is raised)
--
-- Returns 1  set
--         0  already set; nothing changed
local total, holds = KEYS[1], KEYS[2]
local permits = ARGV[1]

if redis.call('SET', total, permits, 'NX') then
  redis.call('HDEL', holds, ':total')
  return 1
end
return 0
