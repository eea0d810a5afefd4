-- Rate-limit check for one request, in one round trip.
--
-- Built on the GCRA of github.com/go-redis/redis_rate (itself from
-- rwz/redis-gcra): each bucket stores its "theoretical arrival time" (TAT).
-- A bucket with limit L per period P has an emission interval e = P / L and
-- holds L units; it has avail = L - (TAT - now) / e units left, and a request
-- of cost c passes when avail >= c, which moves TAT to max(TAT, now) + c * e.
--
-- Every bucket that applies is checked first; units are spent from all of
-- them or from none (a burst rejection does not spend hourly units).
--
-- KEYS[1] suspension key (value: suspended-until, unix ms; TTL = suspension)
-- KEYS[2] hourly bucket TAT      KEYS[3] burst bucket TAT
-- KEYS[4] endpoint-group TAT     KEYS[5] burst rejections (sorted set, unix ms)
--
-- ARGV[1]  cost (units)          ARGV[2]  hourly limit (units, 0 = none)
-- ARGV[3]  burst limit (units)   ARGV[4]  group limit (requests, 0 = none)
-- ARGV[5]  "1" = dry run: report without spending or recording anything
-- ARGV[6]  prefix of the credential's hourly usage hash (+ unix hour)
-- ARGV[7]  prefix of the organization's monthly usage hash (+ YYYYMM), "" = none
-- ARGV[8]  hourly usage TTL (s)  ARGV[9]  monthly usage TTL (s)
-- ARGV[10] burst rejections tolerated within the window
-- ARGV[11] rejection window (ms) ARGV[12] suspension length (ms)
-- ARGV[13] hourly period (s)     ARGV[14] burst period (s)
--
-- Optionally, a concurrency slot in the same round trip (as acquire.lua):
-- KEYS[6]  slot set (sorted set: token -> expiry, unix ms)
-- ARGV[15] cap (0 = no slot)     ARGV[16] token   ARGV[17] slot TTL (ms)
-- The slot is taken only when the request is admitted and not a dry run; a
-- request admitted by the buckets whose slot is refused spends nothing.
--
-- ARGV[18] "1" = an extra charge of a request already admitted (Charge):
-- its units are spent and counted, but it is not counted as a request.
--
-- The usage hashes' names depend on the server's clock, so they are built
-- here rather than passed in KEYS: the script is for a single Redis primary
-- (standalone or Sentinel), not Redis Cluster.

-- Scripts that read TIME and then write need effects replication; it is the
-- default since Redis 5 and the call is gone from some later versions.
if redis.replicate_commands then
  redis.replicate_commands()
end

-- Times are microseconds since 2017-01-01 (as in redis_rate), so they stay
-- exact integers in a Lua double.
local EPOCH = 1483228800
local EPS = 1e-6

local cost = tonumber(ARGV[1])
local hourly_limit = tonumber(ARGV[2])
local burst_limit = tonumber(ARGV[3])
local group_limit = tonumber(ARGV[4])
local dry = ARGV[5] == "1"
local usage_prefix = ARGV[6]
local month_prefix = ARGV[7]
local usage_ttl = tonumber(ARGV[8])
local month_ttl = tonumber(ARGV[9])
local tolerated = tonumber(ARGV[10])
local window_ms = tonumber(ARGV[11])
local suspend_ms = tonumber(ARGV[12])
local hourly_period = tonumber(ARGV[13])
local burst_period = tonumber(ARGV[14])
local extra = ARGV[18] == "1"

local t = redis.call("TIME")
local sec = tonumber(t[1])
local usec = tonumber(t[2])
local now = (sec - EPOCH) * 1000000 + usec
local now_ms = sec * 1000 + math.floor(usec / 1000)

local function check(key, limit, period, c)
  local b = { key = key, limit = limit, avail = 0, ok = true, tat = now, e = 0, retry = 0, cost = c }
  if limit <= 0 then
    return b
  end
  b.e = period * 1000000 / limit
  local v = redis.call("GET", key)
  if v then
    b.tat = math.max(tonumber(v), now)
  end
  b.avail = limit - (b.tat - now) / b.e
  if b.avail + EPS < c then
    b.ok = false
    b.retry = (c - b.avail) * b.e
  end
  return b
end

local function spend(b)
  if b.limit <= 0 then
    return
  end
  b.tat = b.tat + b.cost * b.e
  b.avail = b.avail - b.cost
  local ttl = math.max(1, math.ceil((b.tat - now) / 1000))
  redis.call("SET", b.key, string.format("%.3f", b.tat), "PX", ttl)
end

local function report(b)
  if b.limit <= 0 then
    return 0, 0, 0, 0
  end
  local remaining = math.floor(math.max(b.avail, 0) + EPS)
  local reset = EPOCH + math.ceil(b.tat / 1000000)
  local retry = 0
  if not b.ok then
    retry = math.ceil(b.retry / 1000)
  end
  return b.limit, remaining, reset, retry
end

-- Civil year and month (UTC) of a unix time, as the number YYYYMM
-- (H. Hinnant's days-to-civil algorithm; os.date is not available here).
local function yyyymm(s)
  local z = math.floor(s / 86400) + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local m
  if mp < 10 then
    m = mp + 3
  else
    m = mp - 9
  end
  if m <= 2 then
    y = y + 1
  end
  return y * 100 + m
end

local hourly = check(KEYS[2], hourly_limit, hourly_period, cost)
local burst = check(KEYS[3], burst_limit, burst_period, cost)
local group = check(KEYS[4], group_limit, hourly_period, 1)

local rejected_by = ""
local retry = 0 -- microseconds
local suspended_until = 0
local new_suspension = 0

local susp = redis.call("GET", KEYS[1])
if susp and tonumber(susp) > now_ms then
  suspended_until = tonumber(susp)
  rejected_by = "suspended"
  retry = (suspended_until - now_ms) * 1000
else
  -- The rejecting bucket reported is the one that frees up last.
  local order = { { "hourly", hourly }, { "burst", burst }, { "group", group } }
  for _, nb in ipairs(order) do
    local b = nb[2]
    if not b.ok and (rejected_by == "" or b.retry > retry) then
      rejected_by = nb[1]
      retry = b.retry
    end
  end
  if not burst.ok and not dry then
    -- Record the burst rejection; one too many within the window suspends.
    redis.call("ZREMRANGEBYSCORE", KEYS[5], "-inf", now_ms - window_ms)
    -- The member only has to be unique: the time, plus the count so far for
    -- rejections within the same microsecond.
    local count = redis.call("ZCARD", KEYS[5])
    redis.call("ZADD", KEYS[5], now_ms, string.format("%.0f", now) .. ":" .. count)
    redis.call("PEXPIRE", KEYS[5], window_ms)
    if count + 1 > tolerated then
      suspended_until = now_ms + suspend_ms
      redis.call("SET", KEYS[1], string.format("%.0f", suspended_until), "PX", suspend_ms)
      redis.call("DEL", KEYS[5])
      rejected_by = "suspended"
      retry = suspend_ms * 1000
      new_suspension = 1
    end
  end
end

local allowed = 0
local hour_key = usage_prefix .. string.format("%.0f", math.floor(sec / 3600))
local hour_req, hour_units
if rejected_by == "" then
  allowed = 1
end

-- The concurrency slot, before anything is spent: -1 when none was asked
-- for (or the request was not admitted), else 1 taken or 0 refused (the cap
-- is full), with the slots in use. A request refused for its slot spends
-- and counts nothing.
local slot_taken, slot_used = -1, 0
local slot_cap = tonumber(ARGV[15] or "0")
if allowed == 1 and not dry and slot_cap > 0 and KEYS[6] then
  local slot_ttl = tonumber(ARGV[17])
  redis.call("ZREMRANGEBYSCORE", KEYS[6], "-inf", now_ms)
  slot_used = redis.call("ZCARD", KEYS[6])
  if slot_used >= slot_cap then
    slot_taken = 0
  else
    redis.call("ZADD", KEYS[6], now_ms + slot_ttl, ARGV[16])
    -- The set lives as long as its last slot.
    local last = redis.call("ZREVRANGE", KEYS[6], 0, 0, "WITHSCORES")
    redis.call("PEXPIRE", KEYS[6], math.max(1, tonumber(last[2]) - now_ms))
    slot_taken, slot_used = 1, slot_used + 1
  end
end

if allowed == 1 and not dry and slot_taken ~= 0 then
  spend(hourly)
  spend(burst)
  spend(group)
  local counted = 1
  if extra then
    counted = 0
  end
  hour_req = redis.call("HINCRBY", hour_key, "req", counted)
  hour_units = redis.call("HINCRBY", hour_key, "units", cost)
  redis.call("EXPIRE", hour_key, usage_ttl)
  if month_prefix ~= "" then
    local month_key = month_prefix .. string.format("%.0f", yyyymm(sec))
    redis.call("HINCRBY", month_key, "req", counted)
    redis.call("HINCRBY", month_key, "units", cost)
    redis.call("EXPIRE", month_key, month_ttl)
  end
else
  local u = redis.call("HMGET", hour_key, "req", "units")
  hour_req = (u[1] and tonumber(u[1])) or 0
  hour_units = (u[2] and tonumber(u[2])) or 0
end

local hl, hr, hs, ht = report(hourly)
local bl, br, bs, bt = report(burst)
local gl, gr, gs, gt = report(group)

return {
  allowed, rejected_by, math.ceil(retry / 1000), suspended_until, new_suspension,
  hl, hr, hs, ht,
  bl, br, bs, bt,
  gl, gr, gs, gt,
  hour_req, hour_units, now_ms,
  slot_taken, slot_used,
}
