-- The client whose cache holds the lock, if one does: a cache's field is "<client-uuid>:cache".
local function cacher_of(hash)
  for _, field in ipairs(redis.call('HKEYS', hash)) do
    local client = string.match(field, '^([^:]+):cache$')
    if client then
      return client
    end
  end
  return nil
end
