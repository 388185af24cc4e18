-- tideward Sliding on Redis: @tideward/limiters' exact sliding window, one key per window. The
-- stamps of the last `quota` admitted events are a ring in hash fields 0 .. quota-1 (an absent
-- slot is older than any window), with h the head (the oldest) and l the newest stamp.
--
-- KEYS[1]  the window
-- ARGV     op, now, the expiry margin (ms: keys expire this long after their state would be
--          fresh), then: op ("take", "peek", "left", "next", "rate"), now (ms, or "" for the server's TIME),
--          quota, window (ms)
-- Reply    one string: take/peek "1" or "0"; left/next a number; rate "limit,remaining,reset"

local function fmt(x)
  if x == math.floor(x) and x > -1e15 and x < 1e15 then return string.format('%d', x) end
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
local quota, window = tonumber(ARGV[4]), tonumber(ARGV[5])

local v = redis.call('HMGET', KEYS[1], 'h', 'l')
local head, last = 0, -math.huge
if v[1] then head, last = tonumber(v[1]), tonumber(v[2]) end

local function stamp(i)
  local s = redis.call('HGET', KEYS[1], tostring(i))
  if s then return tonumber(s) end
  return -math.huge
end

-- A clock that steps back stands still at the newest stamp.
local t = now
if t < last then t = last end

if op == 'take' then
  if t - stamp(head) < window then return '0' end
  local nxt = head + 1
  if nxt == quota then nxt = 0 end
  redis.call('HSET', KEYS[1], tostring(head), fmt(t), 'h', nxt, 'l', fmt(t))
  -- Every stamp has fallen out once the newest has: a fresh window's state.
  redis.call('PEXPIRE', KEYS[1], math.floor(window + margin) + 1)
  return '1'
elseif op == 'peek' then
  if t - stamp(head) >= window then return '1' end
  return '0'
elseif op == 'next' then
  local oldest = stamp(head)
  if t - oldest >= window then return '0' end
  return fmt(oldest + window - now)
else
  -- Stamps read oldest first are non-decreasing, so "has fallen out" holds for a prefix.
  local lo, hi = 0, quota
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local i = head + mid
    if i >= quota then i = i - quota end
    if t - stamp(i) >= window then lo = mid + 1 else hi = mid end
  end
  if op == 'left' then return fmt(lo) end
  local reset = 0
  if lo ~= quota then reset = last + window - now end
  return quota .. ',' .. lo .. ',' .. fmt(reset)
end
