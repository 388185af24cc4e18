-- The quota engine's keys (quota.lua, lease.lua): a limit's state under its key, and a charge of it.
--
-- A key's state is two numbers, an amount and an instant, the in-process engine's own: a bucket's
-- tokens and when they were counted, a window's units used and when it ends (exclusive), a GCRA
-- flow's lead and its latest admission. Held as a string of two little-endian doubles (struct.pack
-- '<dd'): no decimal is printed or parsed on the way, so nothing is rounded.
--
-- A token bucket of one number (a limit whose ms a token is a whole number of 2^-7 ms) keeps the
-- instant it is full again, F, a double: as the decimal integer F · 4096 when that is a whole
-- number (every F from 2^40 ms, Date.now() among them, and any multiple of 2^-12 ms), which Redis
-- holds as an integer inside the value's object (16 B, where two doubles take 32 B more), printed
-- with %d and read back with tonumber exactly; otherwise as 'd' and the double's 8 bytes. Its
-- charge decides as GCRA on the capacity and that tick (`max(F − t, 0) + cost · tick ≤
-- capacity · tick`, and the slack) and moves F to `t + (lead + cost · tick)`, the in-process
-- engine's arithmetic operation for operation. Its state crosses in the reply as two doubles, 0
-- and F.
--
-- A limit crosses the wire as two numbers, p1 and p2, whose signs say its kind (src/wire.ts):
--   p1 > 0, p2 > 0   a token bucket: p1 its capacity, p2 tokens a millisecond; or, when p1 is
--                    not whole, a token bucket of one number: p1 − 0.5 its capacity, p2 its tick
--   p1 > 0, p2 < 0   GCRA: p1 its burst, -p2 the emission interval (ms)
--   p1 < 0, p2 > 0   a fixed window: -p1 its capacity, p2 the window (ms)
--   p1 < 0, p2 < 0   an aligned fixed window, likewise

-- The kind of a limit of numbers p1, p2: 'one' (a token bucket of one number), 'bucket', 'gcra'
-- or 'window'.
local function kindOf(p1, p2)
  local kind = 'window'
  if p1 > 0 and p2 > 0 then
    if p1 % 1 ~= 0 then kind = 'one' else kind = 'bucket' end
  elseif p1 > 0 then
    kind = 'gcra'
  end
  return kind
end

-- What tideward keeps under a key, for a refusal of what is there instead: a bucket of one
-- number, or any other kind.
local ONE_NUMBER = 'a token bucket of one number (an integer of 2^-12 ms, or d and a double)'
local TWO_NUMBERS = 'tideward state (two doubles, 16 bytes, within ±2^53 and ±2^46 ms)'

-- What tideward keeps under a key of `kind`.
local function kept(kind)
  local what = TWO_NUMBERS
  if kind == 'one' then what = ONE_NUMBER end
  return what
end

-- The state `v` held under `key` for a limit of `kind`, as the reply carries it (16 bytes) and as
-- its two numbers. Anything else is refused by name (`foreign`): another type, other bytes, or
-- numbers past what tideward writes (an amount past ±2^53, an instant past ±2^46 ms: a reading of
-- ±2^45 plus a span of up to 2^44; NaN fails both).
local function decode(key, v, kind)
  local bytes, a, b = v, 0, 0 / 0
  if kind == 'one' then
    if #v == 9 and v:byte(1) == 100 then
      b = struct.unpack('<d', v, 2)
    else
      b = tonumber(v)
      if b and b % 1 == 0 then b = b / 4096 else b = 0 / 0 end
    end
    bytes = struct.pack('<dd', 0, b)
  elseif #v == 16 then
    a, b = struct.unpack('<dd', v)
  end
  if not (a >= -2^53 and a <= 2^53 and b >= -2^46 and b <= 2^46) then
    local what = kept(kind)
    foreign(key, v, what)
  end
  return bytes, a, b
end

-- A state as stored: a bucket of one number as its integer of 2^-12 ms (or 'd' and the double),
-- any other as two doubles.
local function encode(a, b, kind)
  local value
  if kind == 'one' then
    local steps = b * 4096
    if steps % 1 == 0 and steps < 9.2e18 and steps > -9.2e18 then value = string.format('%d', steps) else value = 'd' .. struct.pack('<d', b) end
  else
    value = struct.pack('<dd', a, b)
  end
  return value
end

-- A fresh key's state at `t` (a bucket full, a window closed, a flow at rest).
local function fresh(t, kind, p1)
  local a, b = 0, t
  if kind == 'bucket' then a = p1 elseif kind == 'window' then b = -math.huge end
  return a, b
end

-- A key expires when its state would be a fresh key's again plus the margin, rounded up to a
-- multiple of the margin: E(state), here of a state fresh again at `f`. A write sets that expiry
-- (PX) only when it moves E later; otherwise it keeps the key's own (KEEPTTL, about half the cost).
-- Every write that sets an expiry sets E of the state it writes, so a key's expiry is never before
-- E of the state it holds.
local function expiry(f, margin)
  local e = f + margin
  if margin > 0 then e = math.ceil(e / margin) * margin end
  return e
end

-- When a stored state (a, b) is a fresh key's again: at F = b (a bucket of one number), at
-- `b + (capacity − tokens) / perMs` (a bucket), at its TAT `b + a` (GCRA), at its end `b` (a window).
local function freshAt(a, b, kind, p1, p2)
  local f = b
  if kind == 'bucket' then f = b + (p1 - a) / p2 elseif kind == 'gcra' then f = b + a end
  return f
end

-- E of a stored state (a, b).
local function expires(a, b, kind, p1, p2, margin)
  local f = freshAt(a, b, kind, p1, p2)
  local e = expiry(f, margin)
  return e
end

-- The expiry a write of a state fresh again at `f` sets, in ms from `now`: 0 to keep the key's own
-- when E does not move later than `old` (E of the state it replaces; -1 for none), else its PX.
local function px(f, old, margin, now)
  local e = expiry(f, margin)
  local ms = 0
  if not (e <= old) then ms = math.floor(e - now) + 1 end
  return ms
end

-- One charge of `cost` on state (a, b) of a limit of `kind` (p1, p2) at `t`, as the in-process
-- engine takes it: whether it fits and, when it does, the state after it and the instant that
-- state is a fresh key's again.
local function step(a, b, t, cost, kind, p1, p2)
  local fits, na, nb, f
  if kind == 'bucket' then
    local level
    fits, level = bucket(a, b, t, cost, p1, p2)
    na, nb = level - cost, b
    if t > b then nb = t end
    local d = p1 - na
    if d < 0 then d = 0 end
    f = nb + d / p2
  elseif kind == 'window' then
    fits, na, nb = window(a, b, t, cost, -p1, p2)
    f = nb
  else
    -- GCRA, and a bucket of one number as GCRA on its capacity and tick (see above).
    local burst, interval = p1, -p2
    if kind == 'one' then burst, interval = p1 - 0.5, p2 end
    local most = reach(burst, interval)
    local ahead
    fits, ahead = gcra(a, b, t, cost, interval, burst, most)
    f = t + ahead
    na, nb = ahead, t
    if kind == 'one' then na, nb = 0, f end
  end
  return fits, na, nb, f
end

-- 16 hex digits (64 bits) of the SHA1 of the names KEYS[from] to KEYS[to], each length-prefixed:
-- what a request id's answer and a reservation's record keep in place of the names (30 to 2 000
-- bytes each). Two lists of keys agree by chance, under one id within its time to live, once in 2^64.
local function digest(from, to)
  local names = {}
  for c = from, to do names[c - from + 1] = #KEYS[c] .. ':' .. KEYS[c] end
  local sum = redis.sha1hex(table.concat(names)):sub(1, 16)
  return sum
end

-- A reservation's record (quota.lua's reserve writes it, settle.lua closes it), under a key of its
-- id on its charges' slot: its status, 'o' (open), 's' (settled) or 'c' (cancelled); the instant it
-- expires, a double on the decisions' clock; the `digest` of its keys; then two doubles a charge,
-- its cost and the end of the window it was counted in (0 for the other kinds). RECORD bytes before
-- the charges. A reserve in quota.lua's short form (an id the engine made, no window among its
-- charges) keeps those RECORD bytes alone: the process that made the id keeps its charges and
-- sends their costs to settle. Redis drops it when its time to live and the expiry margin have
-- passed.
local RECORD = 25
-- struct.pack's format of a record of up to 16 charges (a record of m: its first 7 + 2m characters).
local RECORD_FORMAT = '<c1dc16dddddddddddddddddddddddddddddddd'
-- The digest a record of an id the engine made keeps: none (an id of the engine's is unique, and
-- tells the record's keys apart by itself), in 16 characters no digest has.
local NO_DIGEST = '----------------'
local A_RECORD = 'a reservation (a status, a double, 16 hex digits, two doubles a charge)'

-- What the record `v` (GET's answer under `key`) says at `now` of a reservation of `m` charges to
-- keys of digest `sum`: '' when there is none (absent, or past the instant it expires), 'x' when it
-- was made for other keys, else its status; and that instant. Anything but a record is refused.
-- A record of no charges (its head alone) is one of an id the engine made: its digest NO_DIGEST.
local function reservation(key, v, now, sum, m)
  local s, at = '', 0
  if v then
    if type(v) == 'string' and #v >= RECORD and (#v - RECORD) % 16 == 0 then
      s = v:sub(1, 1)
      at = struct.unpack('<d', v, 2)
    end
    if not ((s == 'o' or s == 's' or s == 'c') and at == at) then
      foreign(key, v, A_RECORD)
    end
    if not (now < at) then
      s = ''
    elseif (#v ~= RECORD + 16 * m and #v ~= RECORD) or v:sub(10, RECORD) ~= sum then
      s = 'x'
    end
  end
  return s, at
end
