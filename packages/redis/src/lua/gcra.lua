-- tideward Gcra on Redis: @tideward/limiters' GCRA, one key per flow. The key holds two
-- little-endian doubles, the in-process flow's own fields exactly: the instant of the latest
-- admission and how far ahead of it the flow then was (its TAT is their sum). Absent = at rest.
-- Its arguments and reply are documented beside the code that sends and reads them: RedisLimiter's
-- call (src/limiters/limiter.ts) and RedisGcra (src/limiters/gcra.ts).

-- An instant past ±2^45 ms or a lead past 2^46 is not what tideward writes: refused by name.
local now, v, at, ahead = held(2, 'a RedisGcra (two doubles)', -2^45, 2^45, 0, 2^46)
if not v then at, ahead = -math.huge, 0 end
if ARGV[1] == 'r' then return struct.pack('<d', now) .. (v or '') end

local burst, interval, most, n = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local fits, after = gcra(ahead, at, now, n, interval, burst, most)
if not fits then return '0' end
if now >= at then
  at = now
  ahead = after
else
  -- A reading before the latest admission is taken as the earlier instant it claims: TAT (after
  -- `at`, so after now) moves on by the cost.
  ahead = ahead + n * interval
end
redis.call('SET', KEYS[1], struct.pack('<dd', at, ahead), 'PX', math.floor(at + ahead - now + tonumber(ARGV[3])) + 1)
return '1'
