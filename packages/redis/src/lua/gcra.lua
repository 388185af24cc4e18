-- tideward Gcra on Redis: @tideward/limiters' GCRA, one key per flow, the in-process arithmetic
-- operation for operation.
--
-- KEYS[1]  the flow: hash field t (the theoretical arrival time, ms); absent = at rest
-- ARGV     op, now, the expiry margin (ms: keys expire this long after their state would be
--          fresh), then: op ("take", "peek", "next", "remaining", "rate"), now (ms, or "" for the server's
--          TIME), rate (a second), burst, n (the cost)
-- Reply    one string: take/peek "1" or "0"; next/remaining a number; rate "limit,remaining,reset"

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
local interval = 1000 / rate
local ahead = burst * interval
local slack = ahead * 1e-9

local stored = redis.call('HGET', KEYS[1], 't')
local tat = -math.huge
if stored then tat = tonumber(stored) end
local base = now
if tat > now then base = tat end

local function remaining()
  local behind = 0
  if tat > now then behind = tat - now end
  local whole = math.floor(burst - (behind - slack) / interval)
  if whole < 0 then return 0 elseif whole > burst then return math.floor(burst) end
  return whole
end

if op == 'take' then
  local t = base + n * interval
  if t - now > ahead + slack or n > burst then return '0' end
  redis.call('HSET', KEYS[1], 't', fmt(t))
  -- At rest once now reaches TAT: a fresh flow's state.
  redis.call('PEXPIRE', KEYS[1], math.floor(t - now + margin) + 1)
  return '1'
elseif op == 'peek' then
  if base + n * interval - now <= ahead + slack and n <= burst then return '1' end
  return '0'
elseif op == 'next' then
  if n > burst then return 'inf' end
  if base + n * interval - now <= ahead + slack then return '0' end
  return fmt(base + (n - burst) * interval - now)
elseif op == 'remaining' then
  return fmt(remaining())
else
  local reset = 0
  if tat > now then reset = tat - now end
  return math.floor(burst) .. ',' .. remaining() .. ',' .. fmt(reset)
end
