-- semaphore-set.lua: set the total number of permits, once.
--
-- KEYS[1] total     string  the total number of permits; persists until deleted
-- ARGV[1] permits   the total to set, >= 0
--
-- Returns 1  set
--         0  already set; nothing changed
local total = KEYS[1]
local permits = ARGV[1]

if redis.call('SET', total, permits, 'NX') then
  return 1
end
return 0
