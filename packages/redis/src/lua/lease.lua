-- tideward leases: take a slice of a token bucket's tokens to spend in process, or give unspent
-- tokens back. The bucket is the quota engine's (the same key and state as checkTokenBucket, read
-- and refused as quota.lua reads and refuses it: parts/state.lua), so leases and direct checks
-- share one quota. Its arguments and reply are documented beside the code that sends and reads
-- them: leaseCall, src/lease.ts.

local now = clock(ARGV[2])
local n, cap, perMs = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local margin = tonumber(ARGV[3])
local kind = kindOf(cap, perMs)
local a, b = fresh(now, kind, cap)
local v = redis.pcall('GET', KEYS[1])
if v then
  local _
  _, a, b = decode(KEYS[1], v, kind)
elseif #ARGV > 6 then
  -- The bucket's limit was replaced: ARGV[7] on is its one entry of versions (parts/versions.lua).
  local found, ea, eb = earlier(7, cap, perMs)
  if found then a, b = ea, eb end
end

if kind == 'one' then
  -- A bucket of one number, full again at b: GCRA on its capacity and tick.
  local capacity, tick = cap - 0.5, perMs
  local most = reach(capacity, tick)
  local _, lead = gcra(0, b, now, 0, tick, capacity, most)
  local granted, ahead = 0, lead
  if ARGV[1] == 't' then
    -- The most whole tokens the quota engine's test would pass as one charge.
    granted = math.floor((most - lead) / tick)
    if granted > n then granted = n end
    while granted > 0 and lead + granted * tick > most do granted = granted - 1 end
    if granted < 0 then granted = 0 end
    ahead = lead + granted * tick
  else
    -- Never above capacity: tokens given back cannot mint more than the bucket holds.
    granted = n
    if granted * tick > lead then granted = lead / tick end
    ahead = lead - granted * tick
  end
  local full = b
  if granted > 0 then
    if ahead > 0 then
      full = now + ahead
      local e = expiry(full, margin)
      local value = encode(0, full, kind)
      write(KEYS[1], value, math.floor(e - now) + 1)
    else
      full = now
      redis.call('DEL', KEYS[1])
    end
  end
  return struct.pack('<ddd', granted, full, now)
end

local t = now
if b > t then t = b end
local _, tokens, slack = bucket(a, b, t, 0, cap, perMs)
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
    -- E of the state written (every write that sets an expiry sets E: see parts/state.lua).
    local e = expiry(t + (cap - tokens) / perMs, margin)
    write(KEYS[1], struct.pack('<dd', tokens, t), math.floor(e - now) + 1)
  else
    -- Full is a fresh bucket's state: nothing to keep.
    redis.call('DEL', KEYS[1])
  end
end
return struct.pack('<ddd', granted, tokens, t)
