-- tideward quota engine: one charge set (all or nothing), a peek of one, or a batch (each charge
-- on its own, in order), in one round trip. Every key is in KEYS; nothing is named in here.
--
-- KEYS[1..n]  the state of each distinct bucket, window or GCRA flow the call touches
-- KEYS[n+1]   the request-id key, when ARGV[3] > 0
-- ARGV[1]     now in ms on the caller's clock, or "" to read the server's TIME
-- ARGV[2]     "c" commit a set, "p" peek a set, "s" a batch (sequence)
-- ARGV[3]     how long a request id is remembered (ms); 0 for none
-- ARGV[4]     the number of charges m
-- ARGV[5]     expiry margin (ms): keys expire this long after their state would be a fresh key's
-- then for a batch ("s"): its one limit as kind, capacity, refill, window (ms), burst, align, and
-- three fields per input: key index, cost, now ("" for ARGV[1]); for a set, 10 fields per charge:
--             kind (0 bucket, 1 window, 2 gcra), key index, cost, capacity, refill, window (ms),
--             burst, align (0/1), now for this charge ("" for ARGV[1]; batches only), shadow (0/1:
--             decided and charged when it fits, but never refusing the set)
--
-- The arithmetic is the in-process engine's, operation for operation (IEEE doubles both), so the
-- two decide alike. Numbers that may be fractions go back as strings: Redis truncates Lua numbers.
-- The reply is one string: allowed, failedIndex, set retryAfter, t, then per charge code,
-- remaining, retryAfter, resetAfter; comma-separated.
--
-- One token-bucket charge on the caller's clock with no request id, the hot path, has a short
-- form of its own: KEYS[1] the bucket, ARGV = now, cost, capacity, refill, window (ms), margin;
-- the reply is code, remaining, retryAfter, resetAfter.

-- One token-bucket charge with no request id, the hot path, written out inline ahead of every
-- definition below (in a script, defining a function costs about what this whole check does).
-- The same arithmetic as `step`'s bucket branch; both are pinned to the in-process engine.
if #ARGV == 6 then
  local floor, format, tonumber, call, ARGV = math.floor, string.format, tonumber, redis.call, ARGV
  local key = KEYS[1]
  local now, cost, cap, refill, width = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
  local v = call('HMGET', key, 'a', 'b')
  local tokens, at = cap, now
  if v[1] then tokens, at = tonumber(v[1]), tonumber(v[2]) end
  local t = now
  if at > t then t = at end
  if t > at then
    tokens = tokens + (t - at) * (refill / width)
    if tokens > cap then tokens = cap end
  end
  local slack = cap * 1e-9
  local interval = width / refill
  local code, x, retry = '0', tokens, '0'
  if cost <= cap and tokens + slack >= cost then
    x = tokens - cost
  elseif cost > cap then
    code, retry = '2', 'inf'
  else
    code, retry = '1', (cost - tokens) * interval
    if retry ~= floor(retry) or retry >= 1e15 or retry <= -1e15 then retry = format('%.17g', retry) else retry = format('%d', retry) end
  end
  local n = floor(x + slack)
  if n < 0 then n = 0 elseif n > cap then n = cap end
  local reset = 0
  if cap - x > slack then reset = (cap - x) * interval end
  if code == '0' then
    -- Redis writes a Lua number argument in full (shortest round-trip digits): exact, and cheap.
    call('HSET', key, 'a', x, 'b', t)
    call('PEXPIRE', key, floor(reset + tonumber(ARGV[6])) + 1)
  end
  if reset ~= floor(reset) or reset >= 1e15 or reset <= -1e15 then reset = format('%.17g', reset) else reset = format('%d', reset) end
  return code .. ',' .. format('%d', n) .. ',' .. retry .. ',' .. reset
end

local SLACK = 1e-9
local INF = math.huge
local floor, format, tonumber, call = math.floor, string.format, tonumber, redis.call
local ARGV, KEYS = ARGV, KEYS

-- Exact: 17 significant digits read back as the same double; a whole number below 1e15 as an
-- integer (printed by '%d', several times cheaper in Redis's Lua than '%.17g' or `..`).
local function fmt(x)
  if x == floor(x) and x > -1e15 and x < 1e15 then return format('%d', x) end
  if x == INF then return 'inf' end
  if x == -INF then return '-inf' end
  return format('%.17g', x)
end

-- One algorithm step on (a, b) at t for cost; returns code, new a, new b, remaining, retry, reset.
-- Codes: 0 ok, 1 exhausted, 2 too_large.
local function step(kind, a, b, t, cost, cap, refill, width, burst, align)
  if kind == 0 then
    local interval = width / refill
    local slack = cap * SLACK
    if a == nil then a, b = cap, t end
    local tokens = a
    if t > b then
      tokens = tokens + (t - b) * (refill / width)
      if tokens > cap then tokens = cap end
    end
    -- x: the tokens after the step (taken, or not); whole units and the time until full follow.
    local code, x, retry = 0, tokens, 0
    if cost <= cap and tokens + slack >= cost then
      x = tokens - cost
    elseif cost > cap then
      code, retry = 2, INF
    else
      code, retry = 1, (cost - tokens) * interval
    end
    local n = floor(x + slack)
    if n < 0 then n = 0 elseif n > cap then n = cap end
    local reset = 0
    if cap - x > slack then reset = (cap - x) * interval end
    if code == 0 then
      local at = b
      if t > b then at = t end
      return 0, x, at, n, 0, reset
    end
    return code, a, b, n, retry, reset
  elseif kind == 1 then
    if a == nil then a, b = -INF, 0 end
    local open = t < a
    local count = 0
    if open then count = b end
    if count + cost <= cap then
      local ends = a
      if not open then
        if align == 1 then
          ends = (floor(t / width) + 1) * width
          if not (ends > t) then ends = ends + width end
        else
          ends = t + width
        end
      end
      return 0, ends, count + cost, cap - count - cost, 0, ends - t
    end
    local reset = 0
    if open then reset = a - t end
    if cost > cap then return 2, a, b, cap - count, INF, reset end
    return 1, a, b, cap - count, a - t, reset
  else
    local interval = width / refill
    local tau = burst * interval
    local slack = tau * SLACK
    if a == nil then a = t end
    local base = a
    if t > a then base = t end
    local nxt = base + cost * interval
    local code, behind, retry = 0, nxt - t, 0
    if not (cost <= burst and nxt - t <= tau + slack) then
      behind = base - t
      if cost > burst then code, retry = 2, INF else code, retry = 1, nxt - t - tau end
    end
    -- Whole units that would pass back to back, `behind` ms behind the TAT.
    local n = floor(burst - (behind - slack) / interval)
    if n < 0 then n = 0 elseif n > burst then n = burst end
    if code == 0 then return 0, nxt, 0, n, 0, behind end
    return code, a, b, n, retry, behind
  end
end

local mode = ARGV[2]
local ttl = tonumber(ARGV[3])
local m = tonumber(ARGV[4])
local nkeys = #KEYS
if ttl > 0 then nkeys = nkeys - 1 end

local rid = nil
if ttl > 0 and mode == 'c' then
  rid = KEYS[#KEYS]
  local seen = call('GET', rid)
  if seen then return 'R' .. seen end
end

local now
if ARGV[1] == '' then
  local tm = call('TIME')
  now = tonumber(tm[1]) * 1000 + tonumber(tm[2]) / 1000
else
  now = tonumber(ARGV[1])
end

-- One charge, no request id: the common case, straight through (no staging, no tables).
if m == 1 and mode == 'c' and rid == nil then
  local kind = tonumber(ARGV[6])
  local key = KEYS[tonumber(ARGV[7])]
  local v = call('HMGET', key, 'a', 'b')
  local a, b = nil, nil
  if v[1] then
    a = tonumber(v[1])
    if kind ~= 2 then b = tonumber(v[2]) end
  end
  local t = now
  if kind == 0 and b ~= nil and b > t then t = b end
  local code, na, nb, rem, retry, reset = step(kind, a, b, t, tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13]))
  local allowed = '1,-1,0,'
  if code == 0 then
    if kind == 2 then
      call('HSET', key, 'a', na)
    else
      call('HSET', key, 'a', na, 'b', nb)
    end
    call('PEXPIRE', key, floor(reset + tonumber(ARGV[5])) + 1)
  else
    allowed = '0,0,0,'
  end
  return allowed .. fmt(t) .. ',' .. code .. ',' .. fmt(rem) .. ',' .. fmt(retry) .. ',' .. fmt(reset)
end

-- Staged state per key index: a, b as the engine's flat state (bucket tokens/at, window end/used,
-- GCRA tat), read once. `dirty` marks what a commit writes.
local sa, sb, loaded, dirty, expire = {}, {}, {}, {}, {}

-- The clock of the call: the caller's now, never behind the last reading of a bucket it touches
-- (a late or skewed writer cannot move a bucket back in time). A batch's clock only moves forward.
local base = 6
local margin = tonumber(ARGV[5])
local clock = now
local batch = mode == 's'
-- A batch names its one limit once: kind, capacity, refill, window, burst, align; then three
-- fields an input: key index, cost, now.
local bkind, bcap, brefill, bwidth, bburst, balign
if batch then
  bkind, bcap, brefill, bwidth = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
  bburst, balign = tonumber(ARGV[10]), tonumber(ARGV[11])
end
for c = 0, m - 1 do
  local kind, i
  if batch then
    kind, i = bkind, tonumber(ARGV[12 + c * 3])
  else
    local o = base + c * 10
    kind, i = tonumber(ARGV[o]), tonumber(ARGV[o + 1])
  end
  if not loaded[i] then
    loaded[i] = true
    local v = call('HMGET', KEYS[i], 'a', 'b')
    if v[1] then
      sa[i] = tonumber(v[1])
      if kind ~= 2 then sb[i] = tonumber(v[2]) end
    end
  end
  if kind == 0 and sb[i] ~= nil and sb[i] > clock and mode ~= 's' then clock = sb[i] end
end

local out, n = {}, 0
local failed = -1
for c = 0, m - 1 do
  local o, kind, i, cost, cap, refill, width, burst, align
  local t = clock
  if batch then
    o = 12 + c * 3
    kind, i, cost = bkind, tonumber(ARGV[o]), tonumber(ARGV[o + 1])
    cap, refill, width, burst, align = bcap, brefill, bwidth, bburst, balign
    if ARGV[o + 2] ~= '' then t = tonumber(ARGV[o + 2]) end
    if t < clock then t = clock end
    if kind == 0 and sb[i] ~= nil and sb[i] > t then t = sb[i] end
    clock = t
  else
    o = base + c * 10
    kind, i, cost = tonumber(ARGV[o]), tonumber(ARGV[o + 1]), tonumber(ARGV[o + 2])
    cap, refill, width = tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4]), tonumber(ARGV[o + 5])
    burst, align = tonumber(ARGV[o + 6]), tonumber(ARGV[o + 7])
  end
  local code, a, b, rem, retry, reset = step(kind, sa[i], sb[i], t, cost, cap, refill, width, burst, align)
  if code == 0 then
    sa[i], sb[i] = a, b
    dirty[i] = kind
    expire[i] = reset
  elseif failed < 0 and not batch and ARGV[o + 9] ~= '1' then
    failed = c
  end
  out[n + 1], out[n + 2], out[n + 3], out[n + 4] = code, fmt(rem), fmt(retry), fmt(reset)
  n = n + 4
end

local setRetry = 0
if mode ~= 's' and failed >= 0 then
  -- When the whole set would fit: for each distinct state, the wait until it holds the set's
  -- total demand on it, read from the stored state (the staged one never committed).
  local totals, first, order = {}, {}, {}
  for c = 0, m - 1 do
    local o = base + c * 10
    local i = tonumber(ARGV[o + 1])
    if ARGV[o + 9] == '1' then
      -- a shadow charge never holds the set back
    elseif totals[i] == nil then
      totals[i] = 0
      first[i] = o
      order[#order + 1] = i
      totals[i] = tonumber(ARGV[o + 2])
    else
      totals[i] = totals[i] + tonumber(ARGV[o + 2])
    end
  end
  for _, i in ipairs(order) do
    local o = first[i]
    local kind = tonumber(ARGV[o])
    local v = call('HMGET', KEYS[i], 'a', 'b')
    local a, b = nil, nil
    if v[1] then
      a = tonumber(v[1])
      if kind ~= 2 then b = tonumber(v[2]) end
    end
    local code, _, _, _, retry = step(kind, a, b, clock, totals[i], tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4]), tonumber(ARGV[o + 5]), tonumber(ARGV[o + 6]), tonumber(ARGV[o + 7]))
    if code ~= 0 and retry > setRetry then setRetry = retry end
  end
end

local commit = mode == 's' or (mode == 'c' and failed < 0)
if commit then
  for i = 1, nkeys do
    local kind = dirty[i]
    -- Numbers as arguments: Redis writes them in full (shortest round-trip digits), exact.
    if kind == 2 then
      call('HSET', KEYS[i], 'a', sa[i])
    elseif kind ~= nil then
      call('HSET', KEYS[i], 'a', sa[i], 'b', sb[i])
    end
    -- Expire once the state would be a fresh key's again (bucket full, window closed, GCRA at
    -- rest), late by the margin rather than early: early would admit what a kept key refuses.
    if kind ~= nil then call('PEXPIRE', KEYS[i], floor(expire[i] + margin) + 1) end
  end
end

local allowed = 1
if failed >= 0 and mode ~= 's' then allowed = 0 end
local reply = allowed .. ',' .. failed .. ',' .. fmt(setRetry) .. ',' .. fmt(clock) .. ',' .. table.concat(out, ',')
if rid ~= nil and allowed == 1 then call('SET', rid, reply, 'PX', ttl) end
return reply
