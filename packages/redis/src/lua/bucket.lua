-- tideward Bucket on Redis: @tideward/limiters' token bucket, one key per bucket, operation for
-- operation the in-process arithmetic (IEEE doubles both), so the two decide alike.
--
-- KEYS[1]  the bucket: hash fields t (tokens), a (the latest reading, ms); absent = full
-- ARGV     op, now, the expiry margin (ms: keys expire this long after their state would be
--          fresh), then: op ("take", "peek", "next", "tokens", "rate"), now (ms, or "" for the server's TIME),
--          rate (tokens a second), burst (tokens), n (the cost)
-- Reply    one string: take/peek "1" or "0"; next/tokens a number; rate "limit,remaining,reset"

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
local rate, burst, n = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local perMs = rate / 1000
local slack = burst * 1e-9

local v = redis.call('HMGET', KEYS[1], 't', 'a')
local tokens, at = burst, now
if v[1] then tokens, at = tonumber(v[1]), tonumber(v[2]) end

-- The tokens held at `t` without settling: the latest reading when `t` is earlier.
local function settled(t)
  if not (t > at) then return tokens end
  local x = tokens + (t - at) * perMs
  if x > burst then return burst end
  return x
end

local function store(x, a)
  if x >= burst then
    -- Full is a fresh bucket's state: nothing to keep.
    redis.call('DEL', KEYS[1])
    return
  end
  redis.call('HSET', KEYS[1], 't', fmt(x), 'a', fmt(a))
  redis.call('PEXPIRE', KEYS[1], math.floor((burst - x) / perMs + margin) + 1)
end

if op == 'take' then
  local x = tokens
  if now > at then
    x = x + (now - at) * perMs
    if x > burst then x = burst end
    at = now
  end
  if x + slack < n or n > burst then
    if v[1] then store(x, at) end
    return '0'
  end
  store(x - n, at)
  return '1'
elseif op == 'peek' then
  if n <= burst and settled(now) + slack >= n then return '1' end
  return '0'
elseif op == 'next' then
  if n > burst then return 'inf' end
  local from = now
  if at > now then from = at end
  local x = settled(from)
  if x + slack >= n then return '0' end
  return fmt(from + (n - x) / perMs - now)
elseif op == 'tokens' then
  local x = settled(now)
  if x > 0 then return fmt(x) end
  return '0'
else
  local from = now
  if at > now then from = at end
  local x = settled(from)
  local limit = math.floor(burst)
  local whole = math.floor(x + slack)
  if whole < 0 then whole = 0 elseif whole > limit then whole = limit end
  local missing = burst - x
  local reset = 0
  if missing > slack then reset = from + missing / perMs - now end
  return limit .. ',' .. whole .. ',' .. fmt(reset)
end
