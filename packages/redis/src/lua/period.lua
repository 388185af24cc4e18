-- tideward Period on Redis: @tideward/limiters' fixed window with under / hit / over, one key per
-- counter. The key holds two little-endian doubles, the in-process counter's own fields exactly:
-- the open period's end (exclusive) and the events admitted in it. Absent = no period open.
--
-- KEYS[1]  the counter
-- ARGV     op ('t' take, 'r' read), now (ms, or '' for the server's TIME), the expiry margin
--          (ms: a key expires this long after its period closes), quota, period (ms), align (0/1)
-- Reply    take: 'u' under, 'h' hit or 'o' over. read: now (8 bytes), then the 16 bytes held
--          (none when absent), from which the caller answers peek, left, next and rateLimit.

local now
if ARGV[2] == '' then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000 + tonumber(tm[2]) / 1000
else
  now = tonumber(ARGV[2])
end
-- Anything else under the name (another type, whose GET answers an error; other bytes; an end
-- past ±2^46 ms or a count past 2^53; NaN) is refused by name.
local v = redis.pcall('GET', KEYS[1])
local ends, count = -math.huge, 0
if v then
  if #v == 16 then ends, count = struct.unpack('<dd', v) else ends = 0 / 0 end
  if not (ends >= -2^46 and ends <= 2^46 and count >= 0 and count <= 2^53) then
    error('tideward: the key ' .. KEYS[1] .. ' holds ' .. (v.err and 'a ' .. redis.call('TYPE', KEYS[1]).ok or #v .. ' bytes') .. ', not a RedisPeriod (two doubles)')
  end
end
if ARGV[1] == 'r' then return struct.pack('<d', now) .. (v or '') end

local quota, period = tonumber(ARGV[4]), tonumber(ARGV[5])
if now >= ends then
  if ARGV[6] == '1' then
    -- The multiple of the period after the one now falls in, such that start <= now < end holds
    -- for the rounded multiples themselves.
    local k = math.floor(now / period)
    while (k + 1) * period <= now do k = k + 1 end
    while k * period > now do k = k - 1 end
    ends = (k + 1) * period
  else
    ends = now + period
  end
  count = 0
elseif count >= quota then
  return 'o'
end
count = count + 1
redis.call('SET', KEYS[1], struct.pack('<dd', ends, count), 'PX', math.floor(ends - now + tonumber(ARGV[3])) + 1)
if count == quota then return 'h' end
return 'u'
