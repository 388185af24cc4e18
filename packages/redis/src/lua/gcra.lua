-- tideward Gcra on Redis: @tideward/limiters' GCRA, one key per flow. The key holds two
-- little-endian doubles, the in-process flow's own fields exactly: the instant of the latest
-- admission and how far ahead of it the flow then was (its TAT is their sum). Absent = at rest.
--
-- KEYS[1]  the flow
-- ARGV     op ('t' take, 'r' read), now (ms, or '' for the server's TIME), the expiry margin
--          (ms: a key expires this long after the flow is at rest), burst, the emission interval
--          (ms), reach (how far ahead an admission may leave the flow, ms), n (the cost; take only)
-- Reply    take: '1' admitted or '0' refused. read: now (8 bytes), then the 16 bytes held (none
--          when absent), from which the caller answers peek, next, remaining and rateLimit.

local now
if ARGV[2] == '' then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000 + tonumber(tm[2]) / 1000
else
  now = tonumber(ARGV[2])
end
-- Anything else under the name (another type, whose GET answers an error; other bytes; an
-- instant past ±2^45 or a lead past 2^46 ms; NaN) is refused by name.
local v = redis.pcall('GET', KEYS[1])
local at, ahead = -math.huge, 0
if v then
  if #v == 16 then at, ahead = struct.unpack('<dd', v) else at = 0 / 0 end
  if not (at >= -2^45 and at <= 2^45 and ahead >= 0 and ahead <= 2^46) then
    error('tideward: the key ' .. KEYS[1] .. ' holds ' .. (v.err and 'a ' .. redis.call('TYPE', KEYS[1]).ok or #v .. ' bytes') .. ', not a RedisGcra (two doubles)')
  end
end
if ARGV[1] == 'r' then return struct.pack('<d', now) .. (v or '') end

local burst, interval, reach, n = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local lead = ahead - (now - at)
if lead < 0 then lead = 0 end
if n > burst or not (lead + n * interval <= reach) then return '0' end
if now >= at then
  at = now
  ahead = lead + n * interval
else
  -- A reading before the latest admission is taken as the earlier instant it claims: TAT (after
  -- `at`, so after now) moves on by the cost.
  ahead = ahead + n * interval
end
redis.call('SET', KEYS[1], struct.pack('<dd', at, ahead), 'PX', math.floor(at + ahead - now + tonumber(ARGV[3])) + 1)
return '1'
