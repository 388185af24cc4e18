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
local v = redis.call('GET', KEYS[1])
if ARGV[1] == 'r' then return struct.pack('<d', now) .. (v or '') end

local quota, period = tonumber(ARGV[4]), tonumber(ARGV[5])
local ends, count = -math.huge, 0
if v then ends, count = struct.unpack('<dd', v) end
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
