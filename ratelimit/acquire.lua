-- Concurrency slot for one credential: a sorted set whose members are request
-- tokens and whose scores are the slots' expiry times (unix ms, server time),
-- so that slots held by a crashed instance free themselves.
--
-- KEYS[1] slot set   ARGV[1] cap   ARGV[2] token   ARGV[3] slot TTL (ms)
-- Returns {1 if a slot was taken else 0, slots in use}.

local t = redis.call("TIME")
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cap = tonumber(ARGV[1])
local ttl = tonumber(ARGV[3])

redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now_ms)
local n = redis.call("ZCARD", KEYS[1])
if n >= cap then
  return { 0, n }
end
redis.call("ZADD", KEYS[1], now_ms + ttl, ARGV[2])
-- The set lives as long as its last slot.
local last = redis.call("ZREVRANGE", KEYS[1], 0, 0, "WITHSCORES")
redis.call("PEXPIRE", KEYS[1], math.max(1, tonumber(last[2]) - now_ms))
return { 1, n + 1 }
