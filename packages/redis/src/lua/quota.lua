-- tideward quota engine: one charge set (all or nothing), a peek of one, or a batch (each input on
-- its own, in order), in one round trip. Every key is in KEYS; nothing is named in here.
--
-- A key's state is a string of two little-endian doubles (struct.pack '<dd'), the in-process
-- engine's two numbers exactly: a bucket's tokens and the instant they were counted, a window's
-- end (exclusive) and the units used in it, a GCRA flow's lead and the instant of its latest
-- admission. No decimal is printed or parsed on the way, so nothing is rounded.
--
-- A key expires when its state would be a fresh key's again (a bucket full, a window closed, a
-- flow at rest) plus the margin, rounded up to a multiple of the margin: E(state). A write sets
-- that expiry (PX) only when it moves E later; otherwise it keeps the key's own (KEEPTTL, about
-- half the cost). Every write that sets an expiry sets E of the state it writes, so a key's
-- expiry is never before E of the state it holds.
--
-- The script decides and writes; it reports what it read. The reply carries the state each key
-- held before the call (16 bytes; two NaNs when absent), and the caller computes the figures of
-- every decision (remaining, retryAfter, resetAfter, a set's retry) from that with the in-process
-- engine's own formulas. The decision here is the same arithmetic on the same doubles, operation
-- for operation; the waits, searched onto the float grid, are computed in one place only.
--
-- Short form, one token-bucket charge on the caller's clock with no request id (the hot path):
--   KEYS[1] the bucket; ARGV now (ms), cost, capacity, tokens a millisecond, expiry margin (ms)
--   reply   '1' charged or '0' refused, then the 16 bytes read (none when the key was absent)
--
-- General form:
--   ARGV[1] now in ms on the caller's clock, or '' to read the server's TIME
--   ARGV[2] 'c' commit a set, 'p' peek a set, 's' a batch
--   ARGV[3] how long a request id is remembered (ms), '0' for none; its key is the last of KEYS
--   ARGV[4] expiry margin (ms): a key expires this long after its state would be a fresh key's
--   a set: KEYS[c] the state charge c touches (repeated when charges repeat a bucket), and from
--     ARGV[5] four fields a charge: kind, cost, p1, p2. Kinds: 'b' a bucket (p1 capacity, p2
--     tokens a millisecond), 'w' a window or 'a' an aligned one (p1 capacity, p2 window in ms),
--     'g' GCRA (p1 burst, p2 the emission interval in ms); in upper case, a shadow charge (charged
--     when it fits, never refusing the set).
--     reply '1' committed (a peek: always) or '0' refused, now (8 bytes), 16 bytes a charge; or
--     'R' and the reply stored under the request id, when it was seen (nothing is charged again).
--   a batch: KEYS[i] the state input i touches; ARGV[5] kind, ARGV[6] p1, ARGV[7] p2, then two
--     fields an input: cost, now ('' for ARGV[1]'s).
--     reply '1', now (8 bytes), 16 bytes for each distinct key in the order first met.

if #ARGV == 5 then
  -- Written out ahead of every definition below: in a script, defining a function costs about
  -- what this whole check does. Numbers are read with `+ 0` (the same conversion as tonumber,
  -- without a function call: less than half its cost).
  local key = KEYS[1]
  local v = redis.call('GET', key)
  local now, cap, perMs = ARGV[1] + 0, ARGV[3] + 0, ARGV[4] + 0
  local cost = ARGV[2]
  if cost == '1' then cost = 1 else cost = cost + 0 end
  local tokens, at = cap, now
  if v then tokens, at = struct.unpack('<dd', v) else v = '' end
  -- Never behind the bucket's own reading: a late or skewed writer cannot move it back in time.
  local t = now
  if at > t then t = at end
  local level = tokens
  if t > at then
    level = tokens + (t - at) * perMs
    if level > cap then level = cap end
  end
  local slack = cap * 1e-9
  if slack > 0.0009765625 then slack = 0.0009765625 end
  if cost <= cap and level + slack >= cost then
    level = level - cost
    local margin = ARGV[5] + 0
    -- E: full again, plus the margin, rounded up to a multiple of it.
    local e = t + (cap - level) / perMs + margin
    if margin > 0 then e = math.ceil(e / margin) * margin end
    local old = -1
    if v ~= '' then
      old = at + (cap - tokens) / perMs + margin
      if margin > 0 then old = math.ceil(old / margin) * margin end
    end
    if e <= old then
      redis.call('SET', key, struct.pack('<dd', level, t), 'KEEPTTL')
    else
      redis.call('SET', key, struct.pack('<dd', level, t), 'PX', math.floor(e - now) + 1)
    end
    return '1' .. v
  end
  return '0' .. v
end

local unpack, pack, floor = struct.unpack, struct.pack, math.floor
local ABSENT = '\0\0\0\0\0\0\248\127\0\0\0\0\0\0\248\127'
local mode = ARGV[2]
local m = #KEYS
local rid = nil
if ARGV[3] ~= '0' then
  rid = KEYS[m]
  m = m - 1
  local seen = redis.call('GET', rid)
  if seen then return 'R' .. seen end
end

local now
if ARGV[1] == '' then
  local tm = redis.call('TIME')
  now = tm[1] * 1000 + tm[2] / 1000
else
  now = ARGV[1] + 0
end

local read = {}
if mode == 'p' then
  for c = 1, m do read[c] = redis.call('GET', KEYS[c]) or ABSENT end
  return '1' .. pack('<d', now) .. table.concat(read)
end

-- One step of `kind` on state (a, b) at t for cost, as the in-process engine takes it: whether it
-- fits and, if so, the state after it and the instant that state is a fresh key's.
local function step(kind, a, b, t, cost, p1, p2)
  if kind == 'b' or kind == 'B' then
    local level = a
    if t > b then
      level = a + (t - b) * p2
      if level > p1 then level = p1 end
    end
    local slack = p1 * 1e-9
    if slack > 0.0009765625 then slack = 0.0009765625 end
    if cost <= p1 and level + slack >= cost then
      local since = b
      if t > b then since = t end
      level = level - cost
      return true, level, since, since + (p1 - level) / p2
    end
    return false
  elseif kind == 'g' or kind == 'G' then
    local lead = a - (t - b)
    if lead < 0 then lead = 0 end
    local slack = p1 * 1e-9
    if slack > 0.0009765625 then slack = 0.0009765625 end
    local ahead = lead + cost * p2
    if cost <= p1 and ahead <= p1 * p2 + slack * p2 then return true, ahead, t, t + ahead end
    return false
  end
  local open = t < a
  local count = 0
  if open then count = b end
  if count + cost > p1 then return false end
  local ends = a
  if not open then
    if kind == 'a' or kind == 'A' then
      -- The multiple of the window after the one t falls in, such that start <= t < end holds
      -- for the rounded multiples themselves.
      local k = floor(t / p2)
      while (k + 1) * p2 <= t do k = k + 1 end
      while k * p2 > t do k = k - 1 end
      ends = (k + 1) * p2
    else
      ends = t + p2
    end
  end
  return true, ends, count + cost, ends
end

local margin = ARGV[4] + 0
-- E of a state fresh at f: f plus the margin, rounded up to a multiple of it.
local function expiry(f)
  if margin > 0 then return math.ceil((f + margin) / margin) * margin end
  return f
end
-- E of a stored state (a, b) of `kind`, which is fresh at `at + (capacity − tokens) / perMs`
-- (a bucket), at TAT = `at + ahead` (GCRA), at its end (a window).
local function stored(kind, a, b, p1, p2)
  if kind == 'b' or kind == 'B' then return expiry(b + (p1 - a) / p2) end
  if kind == 'g' or kind == 'G' then return expiry(b + a) end
  return expiry(a)
end
-- The expiry a write of a state fresh at f sets: 0 to keep the key's own (E does not move later
-- than `old`, E of the state it replaces; -1 for none), else PX in ms.
local function px(f, old)
  local e = expiry(f)
  if e <= old then return 0 end
  return floor(e - now) + 1
end
local sa, sb, ex = {}, {}, {}

if mode == 's' then
  -- Each input at its own now, never behind the batch's clock (nor a bucket's reading), on the
  -- state the inputs before it left; staged per key name, written once at the end.
  local kind, p1, p2 = ARGV[5], ARGV[6] + 0, ARGV[7] + 0
  local bucket = kind == 'b' or kind == 'B'
  local order, old, n, clock = {}, {}, 0, now
  for c = 1, m do
    local key = KEYS[c]
    local o = 6 + c * 2
    local cost = ARGV[o]
    if cost == '1' then cost = 1 else cost = cost + 0 end
    local t = ARGV[o + 1]
    if t == '' then t = now else t = t + 0 end
    if t < clock then t = clock end
    local a, b = sa[key], sb[key]
    if a == nil then
      local v = redis.call('GET', key)
      n = n + 1
      order[n] = c
      if v then
        read[n] = v
        a, b = unpack('<dd', v)
        old[key] = stored(kind, a, b, p1, p2)
      else
        read[n] = ABSENT
        old[key] = -1
        if bucket then a, b = p1, t elseif kind == 'g' or kind == 'G' then a, b = 0, t else a, b = -math.huge, 0 end
      end
      sa[key], sb[key] = a, b
    end
    if bucket and b > t then t = b end
    clock = t
    local ok, na, nb, f = step(kind, a, b, t, cost, p1, p2)
    if ok then sa[key], sb[key], ex[key] = na, nb, f end
  end
  for i = 1, n do
    local key = KEYS[order[i]]
    local f = ex[key]
    if f then
      local ms = px(f, old[key])
      if ms == 0 then redis.call('SET', key, pack('<dd', sa[key], sb[key]), 'KEEPTTL') else redis.call('SET', key, pack('<dd', sa[key], sb[key]), 'PX', ms) end
    end
  end
  return '1' .. pack('<d', now) .. table.concat(read)
end

-- A set: one clock for every charge, the caller's now, never behind the reading of a bucket it
-- touches. Each key's state is read and unpacked once.
local pa, pb = {}, {}
local t = now
for c = 1, m do
  local v = redis.call('GET', KEYS[c])
  if v then
    read[c] = v
    local a, b = unpack('<dd', v)
    pa[c], pb[c] = a, b
    local kind = ARGV[1 + c * 4]
    if (kind == 'b' or kind == 'B') and b > t then t = b end
  else
    read[c] = ABSENT
  end
end

-- Each charge sees its bucket after the latest earlier charge to it that fit (repeated charges
-- add up); found by a scan of the earlier keys, or a table in a large set. The expiry each write
-- will set is settled here, against E of the key's state before the call.
local latest = nil
if m > 16 then latest = {} end
local failed = false
for c = 1, m do
  local o = 1 + c * 4
  local kind = ARGV[o]
  local cost = ARGV[o + 1]
  if cost == '1' then cost = 1 else cost = cost + 0 end
  local p1, p2 = ARGV[o + 2] + 0, ARGV[o + 3] + 0
  local key = KEYS[c]
  local p = 0
  if latest then
    p = latest[key] or 0
  else
    for j = c - 1, 1, -1 do
      if sa[j] ~= nil and KEYS[j] == key then
        p = j
        break
      end
    end
  end
  local a, b = pa[c], pb[c]
  if p > 0 then
    a, b = sa[p], sb[p]
  elseif a == nil then
    if kind == 'b' or kind == 'B' then
      a, b = p1, t
    elseif kind == 'g' or kind == 'G' then
      a, b = 0, t
    else
      a, b = -math.huge, 0
    end
  end
  local ok, na, nb, f = step(kind, a, b, t, cost, p1, p2)
  if ok then
    local before = -1
    if pa[c] ~= nil then before = stored(kind, pa[c], pb[c], p1, p2) end
    sa[c], sb[c], ex[c] = na, nb, px(f, before)
    if latest then latest[key] = c end
  elseif kind == 'b' or kind == 'w' or kind == 'a' or kind == 'g' then
    failed = true
  end
end

local reply = pack('<d', now) .. table.concat(read)
if failed then return '0' .. reply end
-- Written in order, so a bucket charged twice keeps its last staged state.
for c = 1, m do
  local ms = ex[c]
  if ms == 0 then
    redis.call('SET', KEYS[c], pack('<dd', sa[c], sb[c]), 'KEEPTTL')
  elseif ms ~= nil then
    redis.call('SET', KEYS[c], pack('<dd', sa[c], sb[c]), 'PX', ms)
  end
end
reply = '1' .. reply
if rid ~= nil then redis.call('SET', rid, reply, 'PX', ARGV[3]) end
return reply
