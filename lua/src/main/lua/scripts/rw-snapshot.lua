-- rw-snapshot.lua: read a read-write lock's writer, readers and waiters at one moment, for monitoring; changes nothing.
--
-- KEYS[1] write     hash    writer -> fencing token of the write hold
-- KEYS[2] readers   zset    reader -> end of its read lease, server time in ms
-- KEYS[3] rtokens   hash    reader -> fencing token of its read hold
-- KEYS[4] places    zset    waiting writer -> end of its place's lease, server time in ms
-- KEYS[5] rwait     string  set while a reader waits
--
-- Returns {write_pttl, waiting_writers, readers_waiting, {writer, token, ...}, {reader, token, remaining_ms, ...}}
--         write_pttl       the write hold's remaining lease in ms (-2: no writer, -1: no lease)
--         waiting_writers  writers whose place in the queue is live
--         readers_waiting  1 if a reader is marked as waiting, else 0
--         readers          only those whose read lease is live
local write, readers, rtokens, places, rwait = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]

-- TIME makes this script non-deterministic: replicate its effects, not the script (6.2; always so on 7).
-- It writes nothing, so nothing is replicated.
redis.replicate_commands()

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local live_readers = {}
local ends = redis.call('ZRANGEBYSCORE', readers, '(' .. now_ms, '+inf', 'WITHSCORES')
for i = 1, #ends, 2 do
  local reader = ends[i]
  live_readers[#live_readers + 1] = reader
  live_readers[#live_readers + 1] = redis.call('HGET', rtokens, reader) or '-1'
  live_readers[#live_readers + 1] = tonumber(ends[i + 1]) - now_ms
end
return {redis.call('PTTL', write), redis.call('ZCOUNT', places, '(' .. now_ms, '+inf'),
        redis.call('EXISTS', rwait), redis.call('HGETALL', write), live_readers}
