-- tideward Bucket on Redis: @tideward/limiters' token bucket, one key per bucket. The key holds
-- three little-endian doubles, the in-process bucket's own fields exactly: the tokens held at
-- `at`, `at`, and the latest reading (a reading before it stands still there). Absent = full.
--
-- KEYS[1]  the bucket
-- ARGV     op ('t' take, 'r' read), now (ms, or '' for the server's TIME), the expiry margin
--          (ms: a key expires this long after it would be full again), burst, tokens a
--          millisecond, n (the cost; take only)
-- Reply    take: '1' taken or '0' refused. read: now (8 bytes), then the 24 bytes held (none
--          when absent), from which the caller answers peek, next, tokens and rateLimit with the
--          in-process formulas.

local now
if ARGV[2] == '' then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000 + tonumber(tm[2]) / 1000
else
  now = tonumber(ARGV[2])
end
-- Anything else under the name (another type, whose GET answers an error; other bytes; numbers
-- past what tideward writes: tokens past ±2^53, instants past ±2^45; NaN) is refused by name.
local v = redis.pcall('GET', KEYS[1])
local burst, perMs, n = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local tokens, at, latest = burst, now, -math.huge
if v then
  if #v == 24 then tokens, at, latest = struct.unpack('<ddd', v) else tokens = 0 / 0 end
  if not (tokens >= -2^53 and tokens <= 2^53 and at >= -2^45 and at <= 2^45 and latest >= -2^45 and latest <= 2^45) then
    error('tideward: the key ' .. KEYS[1] .. ' holds ' .. (v.err and 'a ' .. redis.call('TYPE', KEYS[1]).ok or #v .. ' bytes') .. ', not a RedisBucket (three doubles)')
  end
end
if ARGV[1] == 'r' then return struct.pack('<d', now) .. (v or '') end
local t = now
local moved = t > latest
if moved then latest = t else t = latest end
local level = tokens
if t > at then
  level = tokens + (t - at) * perMs
  if level > burst then level = burst end
end
local slack = burst * 1e-9
if slack > 0.0009765625 then slack = 0.0009765625 end
if n <= burst and level + slack >= n then
  level = level - n
  -- Full again after (burst - level) / perMs: none when it holds more (a burst lowered since).
  local d = burst - level
  if d < 0 then d = 0 end
  redis.call('SET', KEYS[1], struct.pack('<ddd', level, t, t), 'PX', math.floor(d / perMs + (t - now) + tonumber(ARGV[3])) + 1)
  return '1'
end
-- A refusal keeps the tokens and their instant, so a wait computed before it still holds; only a
-- later reading is written.
if moved then
  local d = burst - level
  if d < 0 then d = 0 end
  redis.call('SET', KEYS[1], struct.pack('<ddd', tokens, at, latest), 'PX', math.floor(d / perMs + tonumber(ARGV[3])) + 1)
end
return '0'
