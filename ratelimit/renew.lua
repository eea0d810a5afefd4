-- Renews one concurrency slot (see acquire.lua): its expiry becomes now + TTL.
--
-- KEYS[1] slot set   ARGV[1] token   ARGV[2] slot TTL (ms)
-- Returns 1 when the slot was held and is renewed, 0 when it had expired.

local t = redis.call("TIME")
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])

local cur = redis.call("ZSCORE", KEYS[1], ARGV[1])
if not cur or tonumber(cur) <= now_ms then
  redis.call("ZREM", KEYS[1], ARGV[1])
  return 0
end
redis.call("ZADD", KEYS[1], now_ms + ttl, ARGV[1])
local last = redis.call("ZREVRANGE", KEYS[1], 0, 0, "WITHSCORES")
redis.call("PEXPIRE", KEYS[1], math.max(1, tonumber(last[2]) - now_ms))
return 1
