-- tideward Bucket on Redis: @tideward/limiters' token bucket, one key per bucket. The key holds
-- three little-endian doubles, the in-process bucket's own fields exactly: the tokens held at
-- `at`, `at`, and the latest reading (a reading before it stands still there). Absent = full.
-- Its arguments and reply are documented beside the code that sends and reads them: RedisLimiter's
-- call (src/limiters/limiter.ts) and RedisBucket (src/limiters/bucket.ts).

-- Tokens past ±2^53 or instants past ±2^45 ms are not what tideward writes: refused by name.
local now, v, tokens, at, latest = held(3, 'a RedisBucket (three doubles)', -2^53, 2^53, -2^45, 2^45, -2^45, 2^45)
local burst, perMs, n = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
if not v then tokens, at, latest = burst, now, -math.huge end
if ARGV[1] == 'r' then return struct.pack('<d', now) .. (v or '') end

local t = now
local moved = t > latest
if moved then latest = t else t = latest end
local fits, level = bucket(tokens, at, t, n, burst, perMs)
local margin = tonumber(ARGV[3])
if fits then
  level = level - n
  -- Full again after (burst - level) / perMs: none when it holds more (a burst lowered since).
  local d = burst - level
  if d < 0 then d = 0 end
  redis.call('SET', KEYS[1], struct.pack('<ddd', level, t, t), 'PX', math.floor(d / perMs + (t - now) + margin) + 1)
  return '1'
end
-- A refusal keeps the tokens and their instant, so a wait computed before it still holds; only a
-- later reading is written.
if moved then
  local d = burst - level
  if d < 0 then d = 0 end
  redis.call('SET', KEYS[1], struct.pack('<ddd', tokens, at, latest), 'PX', math.floor(d / perMs + margin) + 1)
end
return '0'
