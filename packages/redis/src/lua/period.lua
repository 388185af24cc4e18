-- tideward Period on Redis: @tideward/limiters' fixed window with under / hit / over, one key per
-- counter, the in-process arithmetic operation for operation.
--
-- KEYS[1]  the counter: hash fields e (the open period's end, ms), c (events admitted in it)
-- ARGV     op, now, the expiry margin (ms: keys expire this long after their state would be
--          fresh), then: op ("take", "peek", "left", "next", "rate"), now (ms, or "" for the server's TIME),
--          quota, period (ms), align (0/1)
-- Reply    one string: take/peek "under", "hit" or "over"; left/next a number; rate "limit,remaining,reset"

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
local quota, period, align = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6] == '1'

local v = redis.call('HMGET', KEYS[1], 'e', 'c')
local ends, count = -math.huge, 0
if v[1] then ends, count = tonumber(v[1]), tonumber(v[2]) end

local function answer(c)
  if c < quota then return 'under' elseif c == quota then return 'hit' end
  return 'over'
end

if op == 'take' then
  if now >= ends then
    if align then
      ends = (math.floor(now / period) + 1) * period
      -- The division can round `now` onto the next multiple; the period must still contain it.
      if not (ends > now) then ends = ends + period end
    else
      ends = now + period
    end
    count = 0
  elseif count >= quota then
    return 'over'
  end
  count = count + 1
  redis.call('HSET', KEYS[1], 'e', fmt(ends), 'c', count)
  -- A closed period is a fresh counter's state.
  redis.call('PEXPIRE', KEYS[1], math.floor(ends - now + margin) + 1)
  return answer(count)
elseif op == 'peek' then
  if now >= ends then return answer(1) end
  return answer(count + 1)
elseif op == 'left' then
  if now >= ends then return fmt(quota) end
  return fmt(quota - count)
elseif op == 'next' then
  if now >= ends or count < quota then return '0' end
  return fmt(ends - now)
else
  if now >= ends then return quota .. ',' .. quota .. ',0' end
  return quota .. ',' .. (quota - count) .. ',' .. fmt(ends - now)
end
