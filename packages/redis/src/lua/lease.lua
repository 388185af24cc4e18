-- tideward leases: take a slice of a token bucket's tokens to spend in process, or give unspent
-- tokens back. The bucket is the quota engine's (the same key and state as checkTokenBucket), so
-- leases and direct checks share one quota.
--
-- KEYS[1]  the bucket: hash fields a (tokens), b (the latest reading, ms); absent = full
-- ARGV     op, now, the expiry margin (ms: keys expire this long after their state would be
--          fresh), then: op ("take" or "give"), now (ms, or "" for the server's TIME), n (tokens wanted or
--          given back), capacity, refill, window (ms)
-- Reply    "granted,retryAfter,now": whole tokens granted (take) or accepted (give), and when a
--          take granting nothing could grant one

local function fmt(x)
  if x == math.floor(x) and x > -1e15 and x < 1e15 then return string.format('%d', x) end
  if x == math.huge then return 'inf' end
  local s = string.format('%.15g', x)
  if tonumber(s) ~= x then
    s = string.format('%.16g', x)
    if tonumber(s) ~= x then s = string.format('%.17g', x) end
  end
  return s
end

local op = ARGV[1]
local margin = tonumber(ARGV[3])
local now
if ARGV[2] == '' then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000 + tonumber(tm[2]) / 1000
else
  now = tonumber(ARGV[2])
end
local n, cap, refill, width = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local slack = cap * 1e-9
local interval = width / refill

local v = redis.call('HMGET', KEYS[1], 'a', 'b')
local tokens, at = cap, now
if v[1] then tokens, at = tonumber(v[1]), tonumber(v[2]) end
local t = now
if at > t then t = at end
if t > at then
  tokens = tokens + (t - at) * (refill / width)
  if tokens > cap then tokens = cap end
end

local granted = 0
if op == 'take' then
  granted = math.floor(tokens + slack)
  if granted > n then granted = n end
  if granted < 0 then granted = 0 end
  tokens = tokens - granted
else
  -- Never above capacity: tokens given back cannot mint more than the bucket holds.
  granted = n
  if tokens + granted > cap then granted = cap - tokens end
  tokens = tokens + granted
end
if granted > 0 then
  local missing = cap - tokens
  if missing > slack then
    redis.call('HSET', KEYS[1], 'a', fmt(tokens), 'b', fmt(t))
    redis.call('PEXPIRE', KEYS[1], math.floor(missing * interval + margin) + 1)
  else
    redis.call('DEL', KEYS[1])
  end
end
local retry = 0
if granted == 0 and op == 'take' then retry = (1 - tokens) * interval end
return fmt(granted) .. ',' .. fmt(retry) .. ',' .. fmt(t)
