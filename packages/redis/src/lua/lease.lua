-- tideward leases: take a slice of a token bucket's tokens to spend in process, or give unspent
-- tokens back. The bucket is the quota engine's (the same key and state as checkTokenBucket: two
-- little-endian doubles, the tokens held and the instant they were counted), so leases and
-- direct checks share one quota.
--
-- KEYS[1]  the bucket; absent = full
-- ARGV     op ('t' take or 'g' give), now (ms, or '' for the server's TIME), the expiry margin
--          (ms), n (tokens wanted or given back), capacity, tokens a millisecond
-- Reply    three doubles: whole tokens granted (take) or accepted (give), the tokens left, and
--          the instant they were counted (from which the caller finds when a dry bucket has one)

local now
if ARGV[2] == '' then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000 + tonumber(tm[2]) / 1000
else
  now = tonumber(ARGV[2])
end
local n, cap, perMs = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local slack = cap * 1e-9
if slack > 0.0009765625 then slack = 0.0009765625 end

local v = redis.call('GET', KEYS[1])
local tokens, at = cap, now
if v then tokens, at = struct.unpack('<dd', v) end
local t = now
if at > t then t = at end
if t > at then
  tokens = tokens + (t - at) * perMs
  if tokens > cap then tokens = cap end
end

local granted = 0
if ARGV[1] == 't' then
  granted = math.floor(tokens + slack)
  if granted > n then granted = n end
  if granted < 0 then granted = 0 end
  tokens = tokens - granted
else
  -- Never above capacity: tokens given back cannot mint more than the bucket holds.
  granted = n
  if tokens + granted > cap then granted = cap - tokens end
  tokens = tokens + granted
end
if granted > 0 then
  if cap - tokens > slack then
    -- The quota engine's expiry, E: full again plus the margin, rounded up to a multiple of it (its
    -- writes keep a key's expiry when E does not move later, so every write must set E).
    local margin = tonumber(ARGV[3])
    local e = t + (cap - tokens) / perMs + margin
    if margin > 0 then e = math.ceil(e / margin) * margin end
    redis.call('SET', KEYS[1], struct.pack('<dd', tokens, t), 'PX', math.floor(e - now) + 1)
  else
    -- Full is a fresh bucket's state: nothing to keep.
    redis.call('DEL', KEYS[1])
  end
end
return struct.pack('<ddd', granted, tokens, t)
