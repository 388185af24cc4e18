-- tideward Sliding on Redis: @tideward/limiters' exact sliding window, one key per window. The
-- stamps of the last `quota` admitted events are a ring in hash fields 0 .. quota-1 (each a
-- little-endian double; an absent slot is older than any window), and field h holds the head
-- (the oldest slot) and the newest stamp, two doubles. Its arguments and reply are documented
-- beside the code that sends and reads them: RedisLimiter's call (src/limiters/limiter.ts) and
-- RedisSliding (src/limiters/sliding.ts).

local KEPT = 'a RedisSliding (a hash: h the head and the newest stamp, two doubles; 0 .. quota-1 the stamps, one double each)'
local now = clock(ARGV[2])
local op = ARGV[1]
local quota, width = tonumber(ARGV[4]), tonumber(ARGV[5])
-- Anything else under the name (another type, whose HGET answers an error; a head that is not a
-- slot; a stamp that is not 8 bytes within ±2^45 ms; NaN) is refused by name, before any write.
local h = redis.pcall('HGET', KEYS[1], 'h')
local head, last = 0, -math.huge
if h then
  if #h == 16 then head, last = struct.unpack('<dd', h) else head = 0.5 end
  if not (head % 1 == 0 and head >= 0 and head < quota and last >= -2^45 and last <= 2^45) then head = nil end
end
if not h and redis.call('EXISTS', KEYS[1]) == 1 then head = nil end
local s = head and redis.call('HGET', KEYS[1], head)
local oldest = -math.huge
if s then
  if #s == 8 then oldest = struct.unpack('<d', s) end
  if not (oldest >= -2^45 and oldest <= last) then head = nil end
end
-- A clock that steps back stands still at the newest stamp.
local t = now
if head and t < last then t = last end

-- A count: the stamps read oldest first are non-decreasing, so "has fallen out" holds for a
-- prefix, whose length is how many slots are free (a stamp that is not 8 bytes is refused below).
local lo, hi = 0, quota
while op == 'l' and head and lo < hi do
  local mid = math.floor((lo + hi) / 2)
  local i = head + mid
  if i >= quota then i = i - quota end
  local x = redis.call('HGET', KEYS[1], i)
  local stamp = -math.huge
  if x and #x ~= 8 then head = nil elseif x then stamp = struct.unpack('<d', x) end
  if t - stamp >= width then lo = mid + 1 else hi = mid end
end
if not head then
  foreign(KEYS[1], false, KEPT)
end

if op == 't' then
  if t - oldest < width then return '0' end
  local nxt = head + 1
  if nxt == quota then nxt = 0 end
  redis.call('HSET', KEYS[1], head, struct.pack('<d', t), 'h', struct.pack('<dd', nxt, t))
  -- Every stamp has fallen out once the newest has: a fresh window's state.
  redis.call('PEXPIRE', KEYS[1], math.floor(width + (t - now) + tonumber(ARGV[3])) + 1)
  return '1'
end
if op == 'r' then return struct.pack('<ddd', now, last, oldest) end
return struct.pack('<dddd', now, last, oldest, lo)
