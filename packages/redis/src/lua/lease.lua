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
--
-- A bucket of one number (capacity not whole: capacity − 0.5, and ms a token in place of tokens a
-- millisecond; see quota.lua) keeps the instant F it is full again, as an integer of 2^-12 ms (or
-- 'd' and the double); its
-- reply is the tokens granted or accepted, F, and the instant read.

local now
if ARGV[2] == '' then
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000 + tonumber(tm[2]) / 1000
else
  now = tonumber(ARGV[2])
end
local n, cap, perMs = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])

-- The state, read as quota.lua reads it: a, b the tokens and their instant, or 0 and F. Anything
-- else under the name (another type, whose GET answers an error; other bytes; an amount past
-- ±2^53 or an instant past ±2^46 ms; NaN) is refused, naming the key and what it holds.
local one = cap % 1 ~= 0
local v = redis.pcall('GET', KEYS[1])
local a, b = cap, now
if one then a = 0 end
if v then
  a, b = 0, 0 / 0
  if not one then
    if #v == 16 then a, b = struct.unpack('<dd', v) end
  elseif #v == 9 and v:byte(1) == 100 then
    b = struct.unpack('<d', v, 2)
  else
    b = tonumber(v)
    if b and b % 1 == 0 then b = b / 4096 else b = 0 / 0 end
  end
  if not (a >= -2^53 and a <= 2^53 and b >= -2^46 and b <= 2^46) then
    local shown
    if v.err then
      shown = 'a ' .. redis.call('TYPE', KEYS[1]).ok
    else
      shown = v:sub(1, 24)
      if shown:find('^[ -~]*$') then shown = '"' .. shown .. '"' else shown = 'bytes ' .. shown:gsub('.', function(c) return string.format('%02x', c:byte()) end) end
      shown = #v .. ' bytes (' .. shown .. ')'
    end
    error('tideward: the key ' .. KEYS[1] .. ' holds ' .. shown .. ', not a token bucket of ' .. (one and 'one number (an integer of 2^-12 ms, or d and a double)' or 'two doubles') .. ': another writer, or the state of another version under this name')
  end
end

if one then
  local capacity, tick = cap - 0.5, perMs
  local slack = capacity * 1e-9
  if slack > 0.0009765625 then slack = 0.0009765625 end
  local reach = capacity * tick + slack * tick
  local full = b
  local lead = 0 - (now - full)
  if lead < 0 then lead = 0 end
  local granted, ahead = 0, lead
  if ARGV[1] == 't' then
    -- The most whole tokens the quota engine's test would pass as one charge.
    granted = math.floor((reach - lead) / tick)
    if granted > n then granted = n end
    while granted > 0 and lead + granted * tick > reach do granted = granted - 1 end
    if granted < 0 then granted = 0 end
    ahead = lead + granted * tick
  else
    -- Never above capacity: tokens given back cannot mint more than the bucket holds.
    granted = n
    if granted * tick > lead then granted = lead / tick end
    ahead = lead - granted * tick
  end
  if granted > 0 then
    if ahead > 0 then
      local f = now + ahead
      full = f
      local margin = tonumber(ARGV[3])
      local e = f + margin
      if margin > 0 then e = math.ceil(e / margin) * margin end
      local steps = f * 4096
      local value
      if steps % 1 == 0 and steps < 9.2e18 and steps > -9.2e18 then value = string.format('%d', steps) else value = 'd' .. struct.pack('<d', f) end
      redis.call('SET', KEYS[1], value, 'PX', math.floor(e - now) + 1)
    else
      full = now
      redis.call('DEL', KEYS[1])
    end
  end
  return struct.pack('<ddd', granted, full, now)
end

local slack = cap * 1e-9
if slack > 0.0009765625 then slack = 0.0009765625 end

local tokens, at = a, b
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
