-- tideward Period on Redis: @tideward/limiters' fixed window with under / hit / over, one key per
-- counter. The key holds two little-endian doubles, the in-process counter's own fields exactly:
-- the open period's end (exclusive) and the events admitted in it. Absent = no period open. Its
-- arguments and reply are documented beside the code that sends and reads them: RedisLimiter's
-- call (src/limiters/limiter.ts) and RedisPeriod (src/limiters/period.ts).

-- An end past ±2^46 ms or a count past 2^53 is not what tideward writes: refused by name.
local now, v, ends, count = held(2, 'a RedisPeriod (two doubles)', -2^46, 2^46, 0, 2^53)
if not v then ends, count = -math.huge, 0 end
if ARGV[1] == 'r' then return struct.pack('<d', now) .. (v or '') end

local quota, period = tonumber(ARGV[4]), tonumber(ARGV[5])
if now >= ends then
  -- A new period: aligned to multiples of the period, or from now.
  local width = period
  if ARGV[6] == '1' then width = -period end
  ends = opens(now, width)
  count = 0
elseif count >= quota then
  return 'o'
end
count = count + 1
redis.call('SET', KEYS[1], struct.pack('<dd', ends, count), 'PX', math.floor(ends - now + tonumber(ARGV[3])) + 1)
if count == quota then return 'h' end
return 'u'
