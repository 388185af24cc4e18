-- tideward quota engine: one charge set (all or nothing), a peek of one, or a batch (each input on
-- its own, in order), in one round trip. Every key is in KEYS; nothing is named in here.
--
-- A key's state is a string of two little-endian doubles (struct.pack '<dd'), the in-process
-- engine's two numbers exactly, an amount and an instant: a bucket's tokens and when they were
-- counted, a window's units used and when it ends (exclusive), a GCRA flow's lead and its latest
-- admission. No decimal is printed or parsed on the way, so nothing is rounded.
--
-- A token bucket of one number (a limit whose ms a token is a whole number of 2^-7 ms) keeps the
-- instant it is full again, F, a double: as the decimal integer F · 4096 when that is a whole
-- number (every F from 2^40 ms, Date.now() among them, and any multiple of 2^-12 ms), which Redis
-- holds as an integer inside the value's object (16 B, where two doubles take 32 B more), printed
-- with %d and read back with tonumber exactly; otherwise as 'd' and the double's 8 bytes. Its
-- charge decides as GCRA on the capacity and that tick (`max(F − t, 0) + cost · tick ≤
-- capacity · tick`, and the slack) and moves F to `t + (lead + cost · tick)`, the in-process
-- engine's arithmetic operation for operation. Anything else under its name is refused with an
-- error naming the key and what it holds. Its state crosses in the reply as two doubles, 0 and F.
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
-- A charge is three fields: cost, p1, p2, the signs saying the kind (each number is sent as the
-- shortest decimal that reads back as its double, so nothing is rounded on the way in either):
--   p1 > 0, p2 > 0   a token bucket: p1 its capacity, p2 tokens a millisecond; or, when p1 is
--                    not whole, a token bucket of one number: p1 − 0.5 its capacity, p2 its tick
--   p1 > 0, p2 < 0   GCRA: p1 its burst, -p2 the emission interval (ms)
--   p1 < 0, p2 > 0   a fixed window: -p1 its capacity, p2 the window (ms)
--   p1 < 0, p2 < 0   an aligned fixed window, likewise
--   cost < 0         a shadow charge of -cost: charged when it fits, never refusing the set
-- Numbers are read with `+ 0`: the same conversion as tonumber, without a function call.
--
-- Short form, a set committed on the caller's clock with no request id (a single check is a set
-- of one): KEYS[c] the state charge c touches (repeated when charges repeat a bucket); ARGV now
-- (ms), the expiry margin (ms: a key expires this long after its state would be a fresh key's,
-- rounded up as above), then a charge's three fields each. Reply: '1' committed or '0' refused,
-- then 16 bytes a charge.
--
-- General form: ARGV[1] now in ms, or '' to read the server's TIME; ARGV[2] 'c' commit a set,
-- 'p' peek a set, 's' a batch; ARGV[3] how long a request id is remembered (ms), '0' for none
-- (its key is the last of KEYS); ARGV[4] the expiry margin; then
--   a set: a charge's three fields each; reply '1' committed (a peek: always) or '0' refused,
--     now (8 bytes), 16 bytes a charge; or 'R' and what is stored under the request id, when it
--     was seen (nothing is charged again): the committed reply, then each charge as sent (three
--     doubles: cost, p1, p2); or 'N' when it was seen for charges to other keys or in another
--     order;
--   a batch (KEYS[i] the state input i touches): ARGV[5] p1, ARGV[6] p2 of its one limit, then
--     two fields an input: cost, now ('' for ARGV[1]'s); reply '1', now (8 bytes), 16 bytes for
--     each distinct key in the order first met.

local ABSENT = '\0\0\0\0\0\0\248\127\0\0\0\0\0\0\248\127'

-- Five arguments are the short form with one charge (every other form has more).
local cap, perMs = 0, 0
if #ARGV == 5 then cap, perMs = ARGV[4] + 0, ARGV[5] + 0 end
if cap > 0 and perMs > 0 and cap % 1 ~= 0 then
  -- One token bucket of one number: the hot path of such limits, written out likewise. A value
  -- that is not such a bucket's (another type: GET answers an error; text; an instant past
  -- what tideward writes) leaves this path for the general one below, which names it.
  local key = KEYS[1]
  local v = redis.pcall('GET', key)
  local now = ARGV[1] + 0
  local full = now
  if v then
    if #v == 9 and v:byte(1) == 100 then
      full = struct.unpack('<d', v, 2)
    else
      full = tonumber(v)
      if full and full % 1 == 0 then full = full / 4096 else full = 0 / 0 end
    end
  end
  if full >= -2^46 and full <= 2^46 then
    local cost = ARGV[3]
    if cost == '1' then cost = 1 else cost = cost + 0 end
    if cost < 0 then cost = -cost end
    local capacity, tick = cap - 0.5, perMs
    local old = -1
    local margin = ARGV[2] + 0
    if v then
      old = full + margin
      if margin > 0 then old = math.ceil(old / margin) * margin end
      v = struct.pack('<dd', 0, full)
    else
      v = ABSENT
    end
    local lead = 0 - (now - full)
    if lead < 0 then lead = 0 end
    local slack = capacity * 1e-9
    if slack > 0.0009765625 then slack = 0.0009765625 end
    local ahead = lead + cost * tick
    if cost <= capacity and ahead <= capacity * tick + slack * tick then
      local f = now + ahead
      local e = f + margin
      if margin > 0 then e = math.ceil(e / margin) * margin end
      local steps = f * 4096
      local value
      if steps % 1 == 0 and steps < 9.2e18 and steps > -9.2e18 then value = string.format('%d', steps) else value = 'd' .. struct.pack('<d', f) end
      if e <= old then
        redis.call('SET', key, value, 'KEEPTTL')
      else
        redis.call('SET', key, value, 'PX', math.floor(e - now) + 1)
      end
      return '1' .. v
    end
    return '0' .. v
  end
elseif cap > 0 and perMs > 0 then
  -- One token bucket: the hot path, written out ahead of every definition below (in a script,
  -- defining a function costs about what this whole check does). As above, a value that is not
  -- two doubles within what tideward writes (tokens within ±2^53, an instant within ±2^46: a
  -- reading of ±2^45 plus a span of up to 2^44) leaves for the general path, which names it.
  local key = KEYS[1]
  local v = redis.pcall('GET', key)
  local now = ARGV[1] + 0
  local tokens, at = cap, now
  if not v then
    v = ABSENT
  elseif #v == 16 then
    tokens, at = struct.unpack('<dd', v)
  else
    tokens = 0 / 0
  end
  if tokens >= -2^53 and tokens <= 2^53 and at >= -2^46 and at <= 2^46 then
    local cost = ARGV[3]
    if cost == '1' then cost = 1 else cost = cost + 0 end
    if cost < 0 then cost = -cost end
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
      local margin = ARGV[2] + 0
      -- E: full again, plus the margin, rounded up to a multiple of it (a bucket holding more
      -- than its capacity, as after the limit's capacity was lowered, is full at t).
      local e = cap - level
      if e < 0 then e = 0 end
      e = t + e / perMs + margin
      if margin > 0 then e = math.ceil(e / margin) * margin end
      local old = -1
      if v ~= ABSENT then
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
end

-- A set of token buckets in the short form, each key once (the atomic charge of several
-- dimensions): written out here too, before any function or table the paths below make, with the
-- set's own arithmetic (see there). It leaves to them a set with another kind, a key charged twice,
-- or a key holding anything else (refused there, by name), and a set of more than 16 charges
-- (each key is compared with the ones before it; the general path keeps a table there).
local n = #KEYS
if n > 1 and n <= 16 and #ARGV == 2 + 3 * n and ARGV[2] ~= 'c' and ARGV[2] ~= 'p' and ARGV[2] ~= 's' then
  -- The charges' fields as numbers, in place: cost, p1, p2 each.
  local ch = { _G.unpack(ARGV, 3) }
  local hot = true
  for c = 1, n do
    local o = c * 3
    local cost = ch[o - 2]
    if cost == '1' then ch[o - 2] = 1 else ch[o - 2] = cost + 0 end
    local p1, p2 = ch[o - 1] + 0, ch[o] + 0
    ch[o - 1], ch[o] = p1, p2
    if not (p1 > 0 and p2 > 0) then hot = false break end
    local key = KEYS[c]
    for j = 1, c - 1 do
      if KEYS[j] == key then hot = false break end
    end
    if not hot then break end
  end
  if hot then
    local now, margin = ARGV[1] + 0, ARGV[2] + 0
    local spack = struct.pack
    -- got[c] becomes what the reply carries for KEYS[c]; st holds each state read (a, b).
    local got = redis.call('MGET', _G.unpack(KEYS))
    local st = {}
    local t = now
    -- Keys MGET finds absent; then EXISTS, once, says whether one of them is another type (MGET
    -- answers nil for a hash), which the general path names.
    local gone = 0
    for c = 1, n do
      local v = got[c]
      local p1 = ch[c * 3 - 1]
      local a, b = 0, 0
      if not v then
        got[c] = ABSENT
        gone = gone + 1
      elseif p1 % 1 ~= 0 then
        if #v == 9 and v:byte(1) == 100 then
          b = struct.unpack('<d', v, 2)
        else
          b = tonumber(v)
          if b and b % 1 == 0 then b = b / 4096 else b = 0 / 0 end
        end
        st[c * 2 - 1], st[c * 2] = 0, b
        got[c] = spack('<dd', 0, b)
      elseif #v == 16 then
        a, b = struct.unpack('<dd', v)
        st[c * 2 - 1], st[c * 2] = a, b
        if b > t then t = b end
      else
        a = 0 / 0
      end
      if not (a >= -2^53 and a <= 2^53 and b >= -2^46 and b <= 2^46) then hot = false break end
    end
    if hot and gone > 0 and redis.call('EXISTS', _G.unpack(KEYS)) ~= n - gone then hot = false end
    if hot then
      local reply
      if n == 3 then reply = got[1] .. got[2] .. got[3] else reply = table.concat(got, '', 1, n) end
      -- Each charge decided in turn; ch[c * 3 - 2] becomes the value to write (false: nothing),
      -- ch[c * 3 - 1] its PX in ms (0: keep the key's own).
      for c = 1, n do
        local o = c * 3
        local cost, p1, p2 = ch[o - 2], ch[o - 1], ch[o]
        local enforced = cost > 0
        if not enforced then cost = -cost end
        local oa, ob = st[c * 2 - 1], st[c * 2]
        local value, ms = false, 0
        if p1 % 1 ~= 0 then
          local capacity = p1 - 0.5
          local b = ob
          if b == nil then b = t end
          local lead = 0 - (t - b)
          if lead < 0 then lead = 0 end
          local slack = capacity * 1e-9
          if slack > 0.0009765625 then slack = 0.0009765625 end
          local ahead = lead + cost * p2
          if cost <= capacity and ahead <= capacity * p2 + slack * p2 then
            local f = t + ahead
            local e = f + margin
            if margin > 0 then e = math.ceil(e / margin) * margin end
            ms = math.floor(e - now) + 1
            if ob ~= nil then
              local old = ob + margin
              if margin > 0 then old = math.ceil(old / margin) * margin end
              if e <= old then ms = 0 end
            end
            local steps = f * 4096
            if steps % 1 == 0 and steps < 9.2e18 and steps > -9.2e18 then value = string.format('%d', steps) else value = 'd' .. spack('<d', f) end
          elseif enforced then
            return '0' .. reply
          end
        else
          local a, b = oa, ob
          if a == nil then a, b = p1, t end
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
            local e = p1 - level
            if e < 0 then e = 0 end
            e = since + e / p2 + margin
            if margin > 0 then e = math.ceil(e / margin) * margin end
            ms = math.floor(e - now) + 1
            if oa ~= nil then
              local old = ob + (p1 - oa) / p2 + margin
              if margin > 0 then old = math.ceil(old / margin) * margin end
              if e <= old then ms = 0 end
            end
            value = spack('<dd', level, since)
          elseif enforced then
            return '0' .. reply
          end
        end
        ch[o - 2], ch[o - 1] = value, ms
      end
      for c = 1, n do
        local value, ms = ch[c * 3 - 2], ch[c * 3 - 1]
        if value then
          if ms == 0 then redis.call('SET', KEYS[c], value, 'KEEPTTL') else redis.call('SET', KEYS[c], value, 'PX', ms) end
        end
      end
      return '1' .. reply
    end
  end
end

local mode = ARGV[2]
local short = mode ~= 'c' and mode ~= 'p' and mode ~= 's'
local unpack, pack, floor = struct.unpack, struct.pack, math.floor

-- Refuses what `key` holds, `v` (a string that is not tideward state; else a GET's error or
-- MGET's nil), naming the key and what it holds; a key that does not exist returns.
local function foreign(key, v, what)
  local shown
  if type(v) == 'string' then
    shown = v:sub(1, 24)
    if shown:find('^[ -~]*$') then shown = '"' .. shown .. '"' else shown = 'bytes ' .. shown:gsub('.', function(c) return string.format('%02x', c:byte()) end) end
    shown = #v .. ' bytes (' .. shown .. ')'
  else
    shown = redis.call('TYPE', key).ok
    if shown == 'none' then return end
    shown = 'a ' .. shown
  end
  error('tideward: the key ' .. key .. ' holds ' .. shown .. ', not ' .. (what or 'tideward state (two doubles, 16 bytes, within ±2^53 and ±2^46 ms)') .. ': another writer, or the state of another version under this name')
end

-- Which keys a request id's charges touch, in order: 16 hex digits (64 bits) of the SHA1 of
-- their names, each length-prefixed. Stored with the answer in place of the names themselves
-- (30 to 2 000 bytes each), so a record of three charges keeps 145 bytes; two lists of keys
-- agree by chance, under one id within its TTL, once in 2^64.
local function digest(m)
  local names = {}
  for c = 1, m do names[c] = #KEYS[c] .. ':' .. KEYS[c] end
  return redis.sha1hex(table.concat(names)):sub(1, 16)
end

local m = #KEYS
local rid = nil
local now, margin, base
if short then
  now, margin, base = ARGV[1] + 0, ARGV[2] + 0, 3
else
  if ARGV[3] ~= '0' then
    rid = KEYS[m]
    m = m - 1
    local seen = redis.pcall('GET', rid)
    if seen then
      if seen.err then foreign(rid, seen, 'a request id\'s answer') end
      -- 'N': the id was first used for charges to other keys, or in another order.
      if seen:sub(-16) ~= digest(m) then return 'N' end
      return 'R' .. seen:sub(1, -17)
    end
  end
  if ARGV[1] == '' then
    local tm = redis.call('TIME')
    now = tm[1] * 1000 + tm[2] / 1000
  else
    now = ARGV[1] + 0
  end
  margin, base = ARGV[4] + 0, 5
end

local read = {}

-- The stored state of KEYS[c] as the reply carries it (16 bytes) and as two numbers: a bucket of
-- one number (p1 not whole) from its integer. Anything else is refused (`foreign`): another
-- type, other bytes, or numbers past what tideward writes (an amount past ±2^53, an instant past
-- ±2^46: a reading of ±2^45 plus a span of up to 2^44; NaN fails both).
local function decode(key, v, p1, p2)
  local a, b = 0, 0 / 0
  if p1 > 0 and p2 > 0 and p1 % 1 ~= 0 then
    if #v == 9 and v:byte(1) == 100 then
      b = unpack('<d', v, 2)
    else
      b = tonumber(v)
      if b and b % 1 == 0 then b = b / 4096 else b = 0 / 0 end
    end
    if not (b >= -2^46 and b <= 2^46) then foreign(key, v, 'a token bucket of one number (an integer of 2^-12 ms, or d and a double)') end
    return pack('<dd', 0, b), 0, b
  end
  if #v == 16 then a, b = unpack('<dd', v) end
  if not (a >= -2^53 and a <= 2^53 and b >= -2^46 and b <= 2^46) then foreign(key, v) end
  return v, a, b
end
-- A state as stored: a bucket of one number as its integer of 2^-12 ms (or 'd' and the double),
-- anything else as two doubles.
local function encode(a, b, p1, p2)
  if p1 > 0 and p2 > 0 and p1 % 1 ~= 0 then
    local steps = b * 4096
    if steps % 1 == 0 and steps < 9.2e18 and steps > -9.2e18 then return string.format('%d', steps) end
    return 'd' .. pack('<d', b)
  end
  return pack('<dd', a, b)
end

if mode == 'p' then
  for c = 1, m do
    local v = redis.pcall('GET', KEYS[c])
    if v then
      local o = base + c * 3 - 3
      v = decode(KEYS[c], v, ARGV[o + 1] + 0, ARGV[o + 2] + 0)
    end
    read[c] = v or ABSENT
  end
  return '1' .. pack('<d', now) .. table.concat(read)
end

-- The steps of every kind and the expiry helpers, made on first use: a set of token buckets (the
-- common case, written out below) never pays for making them.
local step, fresh, stored, px
local function helpers()
  -- One step on state (a, b) at t for cost, as the in-process engine takes it (the kind in the
  -- signs of p1 and p2, see above): whether it fits and, if so, the state after it and the instant
  -- that state is a fresh key's.
  function step(a, b, t, cost, p1, p2)
    if p1 > 0 and p2 > 0 and p1 % 1 ~= 0 then
      -- A bucket of one number, full again at b (the in-process engine's fullDecide).
      local capacity, tick = p1 - 0.5, p2
      local lead = 0 - (t - b)
      if lead < 0 then lead = 0 end
      local slack = capacity * 1e-9
      if slack > 0.0009765625 then slack = 0.0009765625 end
      local ahead = lead + cost * tick
      if cost <= capacity and ahead <= capacity * tick + slack * tick then
        local f = t + ahead
        return true, 0, f, f
      end
      return false
    elseif p1 > 0 and p2 > 0 then
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
        local d = p1 - level
        if d < 0 then d = 0 end
        return true, level, since, since + d / p2
      end
      return false
    elseif p1 > 0 then
      local interval = -p2
      local lead = a - (t - b)
      if lead < 0 then lead = 0 end
      local slack = p1 * 1e-9
      if slack > 0.0009765625 then slack = 0.0009765625 end
      local ahead = lead + cost * interval
      if cost <= p1 and ahead <= p1 * interval + slack * interval then return true, ahead, t, t + ahead end
      return false
    end
    local cap = -p1
    local open = t < b
    local count = 0
    if open then count = a end
    if count + cost > cap then return false end
    local ends = b
    if not open then
      if p2 < 0 then
        -- The multiple of the window after the one t falls in, such that start <= t < end holds
        -- for the rounded multiples themselves.
        local width = -p2
        local k = floor(t / width)
        while (k + 1) * width <= t do k = k + 1 end
        while k * width > t do k = k - 1 end
        ends = (k + 1) * width
      else
        ends = t + p2
      end
    end
    return true, count + cost, ends, ends
  end

  -- A fresh key's state at t.
  function fresh(t, p1, p2)
    if p1 > 0 and p2 > 0 and p1 % 1 ~= 0 then return 0, t end
    if p1 > 0 and p2 > 0 then return p1, t end
    if p1 > 0 then return 0, t end
    return 0, -math.huge
  end

  -- E of a state fresh at f: f plus the margin, rounded up to a multiple of it.
  local function expiry(f)
    if margin > 0 then return math.ceil((f + margin) / margin) * margin end
    return f
  end
  -- E of a stored state (a, b), which is fresh at F = b (a bucket of one number), at
  -- `at + (capacity − tokens) / perMs` (a bucket),
  -- at TAT = `at + ahead` (GCRA), at its end `b` (a window).
  function stored(a, b, p1, p2)
    if p1 > 0 and p2 > 0 and p1 % 1 ~= 0 then return expiry(b) end
    if p1 > 0 and p2 > 0 then return expiry(b + (p1 - a) / p2) end
    if p1 > 0 then return expiry(b + a) end
    return expiry(b)
  end
  -- The expiry a write of a state fresh at f sets: 0 to keep the key's own (E does not move later
  -- than `old`, E of the state it replaces; -1 for none), else PX in ms.
  function px(f, old)
    local e = expiry(f)
    if e <= old then return 0 end
    return floor(e - now) + 1
  end
  return step, fresh, stored, px
end

local sa, sb, ex = {}, {}, {}

if mode == 's' then
  helpers()
  -- Each input at its own now, never behind the batch's clock (nor a bucket's reading), on the
  -- state the inputs before it left; staged per key name, written once at the end.
  local p1, p2 = ARGV[5] + 0, ARGV[6] + 0
  -- A bucket of two numbers never reads behind its own reading; one of one number has none.
  local bucket = p1 > 0 and p2 > 0 and p1 % 1 == 0
  local order, old, n, clock = {}, {}, 0, now
  for c = 1, m do
    local key = KEYS[c]
    local o = 5 + c * 2
    local cost = ARGV[o]
    if cost == '1' then cost = 1 else cost = cost + 0 end
    local t = ARGV[o + 1]
    if t == '' then t = now else t = t + 0 end
    if t < clock then t = clock end
    local a, b = sa[key], sb[key]
    if a == nil then
      local v = redis.pcall('GET', key)
      n = n + 1
      order[n] = c
      if v then
        read[n], a, b = decode(key, v, p1, p2)
        old[key] = stored(a, b, p1, p2)
      else
        read[n] = ABSENT
        old[key] = -1
        a, b = fresh(t, p1, p2)
      end
      sa[key], sb[key] = a, b
    end
    if bucket and b > t then t = b end
    clock = t
    local ok, na, nb, f = step(a, b, t, cost, p1, p2)
    if ok then sa[key], sb[key], ex[key] = na, nb, f end
  end
  for i = 1, n do
    local key = KEYS[order[i]]
    local f = ex[key]
    if f then
      local ms = px(f, old[key])
      if ms == 0 then redis.call('SET', key, encode(sa[key], sb[key], p1, p2), 'KEEPTTL') else redis.call('SET', key, encode(sa[key], sb[key], p1, p2), 'PX', ms) end
    end
  end
  return '1' .. pack('<d', now) .. table.concat(read)
end

-- A set: one clock for every charge, the caller's now, never behind the reading of a bucket it
-- touches. Each key's state is read (in one MGET: a call less a key) and unpacked once.
local pa, pb = {}, {}
local t = now
local got = redis.call('MGET', _G.unpack(KEYS, 1, m))
local gone = 0
for c = 1, m do
  local v = got[c]
  if v then
    local o = base + c * 3
    local p1, p2 = ARGV[o - 2] + 0, ARGV[o - 1] + 0
    local a, b
    read[c], a, b = decode(KEYS[c], v, p1, p2)
    pa[c], pb[c] = a, b
    if b > t and p1 > 0 and p2 > 0 and p1 % 1 == 0 then t = b end
  else
    read[c] = ABSENT
    gone = gone + 1
  end
end
-- MGET answers nil for a key of another type: EXISTS, once, says whether one is.
if gone > 0 and redis.call('EXISTS', _G.unpack(KEYS, 1, m)) ~= m - gone then
  for c = 1, m do
    if not got[c] then foreign(KEYS[c]) end
  end
end

-- Each charge sees its bucket after the latest earlier charge to it that fit (repeated charges
-- add up); found by a scan of the earlier keys, or a table in a large set. The expiry each write
-- will set is settled here, against E of the key's state before the call.
local latest = nil
if m > 16 then latest = {} end
-- Which staged states are a bucket of one number's (written as its integer).
local one = {}
local failed = false
for c = 1, m do
  local o = base + c * 3 - 3
  local cost = ARGV[o]
  if cost == '1' then cost = 1 else cost = cost + 0 end
  local enforced = cost > 0
  if not enforced then cost = -cost end
  local p1, p2 = ARGV[o + 1] + 0, ARGV[o + 2] + 0
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
  if p > 0 then a, b = sa[p], sb[p] end
  if p1 > 0 and p2 > 0 and p1 % 1 ~= 0 then
    -- A token bucket of one number, full again at b, written out likewise (the same arithmetic
    -- as `step`, and its expiry as `px` and `stored` make it).
    local capacity = p1 - 0.5
    if a == nil then a, b = 0, t end
    local lead = 0 - (t - b)
    if lead < 0 then lead = 0 end
    local slack = capacity * 1e-9
    if slack > 0.0009765625 then slack = 0.0009765625 end
    local ahead = lead + cost * p2
    if cost <= capacity and ahead <= capacity * p2 + slack * p2 then
      local f = t + ahead
      local e = f + margin
      if margin > 0 then e = math.ceil(e / margin) * margin end
      local ms = floor(e - now) + 1
      local ob = pb[c]
      if ob ~= nil then
        local old = ob + margin
        if margin > 0 then old = math.ceil(old / margin) * margin end
        if e <= old then ms = 0 end
      end
      sa[c], sb[c], ex[c], one[c] = 0, f, ms, true
      if latest then latest[key] = c end
    elseif enforced then
      failed = true
    end
  elseif p1 > 0 and p2 > 0 then
    -- A token bucket, the common charge, written out (the same arithmetic as `step`).
    if a == nil then a, b = p1, t end
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
      local e = p1 - level
      if e < 0 then e = 0 end
      e = since + e / p2 + margin
      if margin > 0 then e = math.ceil(e / margin) * margin end
      local ms = floor(e - now) + 1
      local oa = pa[c]
      if oa ~= nil then
        local old = pb[c] + (p1 - oa) / p2 + margin
        if margin > 0 then old = math.ceil(old / margin) * margin end
        if e <= old then ms = 0 end
      end
      sa[c], sb[c], ex[c] = level, since, ms
      if latest then latest[key] = c end
    elseif enforced then
      failed = true
    end
  else
    if step == nil then helpers() end
    if a == nil then a, b = fresh(t, p1, p2) end
    local ok, na, nb, f = step(a, b, t, cost, p1, p2)
    if ok then
      local before = -1
      if pa[c] ~= nil then before = stored(pa[c], pb[c], p1, p2) end
      sa[c], sb[c], ex[c] = na, nb, px(f, before)
      if latest then latest[key] = c end
    elseif enforced then
      failed = true
    end
  end
end

local reply
if m == 3 then reply = read[1] .. read[2] .. read[3] else reply = table.concat(read) end
if not short then reply = pack('<d', now) .. reply end
if failed then return '0' .. reply end
-- Written in order, so a bucket charged twice keeps its last staged state.
for c = 1, m do
  local ms = ex[c]
  if ms ~= nil then
    local value
    if one[c] then
      local steps = sb[c] * 4096
      if steps % 1 == 0 and steps < 9.2e18 and steps > -9.2e18 then value = string.format('%d', steps) else value = 'd' .. pack('<d', sb[c]) end
    else
      value = pack('<dd', sa[c], sb[c])
    end
    if ms == 0 then redis.call('SET', KEYS[c], value, 'KEEPTTL') else redis.call('SET', KEYS[c], value, 'PX', ms) end
  end
end
reply = '1' .. reply
if rid ~= nil then
  -- Stored with the charges as sent (cost, p1, p2 each, 24 bytes), so that a repeat with other
  -- costs replays this answer as it was made, and the digest of their keys (see `digest`).
  local sent = {}
  for c = 1, m do
    local o = base + c * 3 - 3
    sent[c] = pack('<ddd', ARGV[o] + 0, ARGV[o + 1] + 0, ARGV[o + 2] + 0)
  end
  redis.call('SET', rid, reply .. table.concat(sent) .. digest(m), 'PX', ARGV[3])
end
return reply
