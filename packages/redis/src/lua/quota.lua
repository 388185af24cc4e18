-- tideward quota engine: one charge set (all or nothing), a peek of one, a reserve (a charge set
-- and its record, to settle by settle.lua) or a batch (each input on its own, in order), in one
-- round trip. Every key is in KEYS; nothing is named in here. Its
-- arguments and replies are documented beside the code that sends and reads them, src/wire.ts; a
-- key's state, a limit's numbers and a charge's step in parts/state.lua.
--
-- The script decides and writes; it reports what it read. The reply carries the state each key
-- held before the call (16 bytes; two NaNs when absent), and the caller computes the figures of
-- every decision (remaining, retryAfter, resetAfter, a set's retry) from that with the in-process
-- engine's own formulas. The decision here is the same arithmetic on the same doubles, operation
-- for operation; the waits, searched onto the float grid, are computed in one place only. Numbers
-- are read with `+ 0`: the same conversion as tonumber, without a function call.

local m = #KEYS
local mode = ARGV[2]
-- The short form (a set committed on the caller's clock with no request id) has its expiry margin
-- where the general form has its mode. A mode in upper case is the general form with a section of
-- versions (parts/versions.lua) at the end of ARGV, its last argument the number of names it adds
-- to KEYS (after the charges' own, before a request id's); `ahead` maps a charge to its entry.
local short = mode ~= 'c' and mode ~= 'p' and mode ~= 's' and mode ~= 'v' and mode ~= 'w' and mode ~= 'C' and mode ~= 'P' and mode ~= 'S' and mode ~= 'V' and mode ~= 'W'
local now, margin, base, rid, sum, ahead
local versions = false
if short then
  now, margin, base, mode = ARGV[1] + 0, mode + 0, 3, 'c'
  if #ARGV ~= 2 + 3 * m then
    -- A reserve in the short form (an id the engine made, on the caller's clock, a time to live
    -- and a margin of whole ms, no window among the charges): as mode 'w' below, its record's
    -- name the last of KEYS and its record's PX ARGV[3], before the charges.
    rid, base, mode, sum = KEYS[m], 4, 'w', NO_DIGEST
    m = m - 1
  end
else
  now = clock(ARGV[1])
  margin, base = ARGV[4] + 0, 5
  if mode < 'a' then
    mode = mode:lower()
    m = m - ARGV[#ARGV]
    versions = true
  end
  if ARGV[3] ~= '0' then
    -- A request id's key, or a reservation's record (mode 'v'), the last of KEYS. A request id's
    -- holds the answer it was first given, the charges as sent and the `digest` of their keys (in
    -- place of the names, so an answer of three charges keeps 145 bytes).
    rid = KEYS[#KEYS]
    m = m - 1
  end
  if mode == 'w' then
    -- A reserve under an id the engine made (mode 'w'): unique to its process, and never sent
    -- twice (an unanswered reserve is not retried), so there is no record to read first, and its
    -- id tells its keys apart without their digest.
    sum = NO_DIGEST
  elseif rid then
    sum = digest(1, m)
    local seen = redis.pcall('GET', rid)
    if mode == 'v' then
      local s, at = reservation(rid, seen, now, sum, m)
      if s == 'o' then
        -- Open with the same keys: with the same costs too, it is reserved already.
        for c = 1, m do
          local cost = ARGV[base + c * 3 - 3] + 0
          if cost < 0 then cost = -cost end
          if struct.unpack('<d', seen, RECORD + c * 16 - 15) ~= cost then s = 'x' end
        end
        if s == 'o' then return 'R' .. struct.pack('<dd', now, at) end
      end
      -- Open with other charges, settled or cancelled: the id is taken.
      if s ~= '' then return 'D' end
    elseif seen then
      if seen.err then
        foreign(rid, seen, 'a request id\'s answer')
      end
      -- Seen for charges to other keys, or in another order.
      if seen:sub(-16) ~= sum then return 'N' end
      return 'R' .. seen:sub(1, -17)
    end
  end
end

if mode == 's' then
  -- A batch against one limit: each input at its own now, never behind the batch's clock (nor a
  -- bucket's reading), on the state the inputs before it left; staged per key name, each read
  -- once and written once at the end, in the order first met.
  local p1, p2 = ARGV[5] + 0, ARGV[6] + 0
  local kind = kindOf(p1, p2)
  local sa, sb, ex, old, order, read = {}, {}, {}, {}, {}, {}
  local n, last = 0, now
  if versions then
    ahead = entries(7 + 2 * m, #ARGV)
  end
  for c = 1, m do
    local key = KEYS[c]
    local o = 5 + c * 2
    local cost = ARGV[o]
    if cost == '1' then cost = 1 else cost = cost + 0 end
    local t = ARGV[o + 1]
    if t == '' then t = now else t = t + 0 end
    if t < last then t = last end
    local a, b = sa[key], sb[key]
    if a == nil then
      local v = redis.pcall('GET', key)
      n = n + 1
      order[n] = c
      old[key] = -1
      if v then
        read[n], a, b = decode(key, v, kind)
        old[key] = expires(a, b, kind, p1, p2, margin)
      else
        read[n] = ABSENT
        a, b = fresh(t, kind, p1)
        if ahead and ahead[c] then
          local found, ea, eb = earlier(ahead[c], p1, p2)
          if found then
            a, b = ea, eb
            read[n] = struct.pack('<dd', a, b)
          end
        end
      end
      sa[key], sb[key] = a, b
    end
    -- A bucket of two numbers is never read behind its own reading (one of one number keeps none).
    if kind == 'bucket' and b > t then t = b end
    last = t
    local fits, na, nb, f = step(a, b, t, cost, kind, p1, p2)
    if fits then sa[key], sb[key], ex[key] = na, nb, f end
  end
  for i = 1, n do
    local key = KEYS[order[i]]
    local f = ex[key]
    if f then
      local ms = px(f, old[key], margin, now)
      local value = encode(sa[key], sb[key], kind)
      write(key, value, ms)
    end
  end
  return '1' .. struct.pack('<d', now) .. table.concat(read)
end

-- A set of one charge in the short form (a single check): as a set, without its tables. GET
-- answers an error for a key of another type, refused by name in `decode`.
if short and m == 1 and not rid then
  local cost, p1, p2 = ARGV[3], ARGV[4] + 0, ARGV[5] + 0
  if cost == '1' then cost = 1 else cost = cost + 0 end
  local enforced = cost > 0
  if not enforced then cost = -cost end
  local kind = kindOf(p1, p2)
  local key = KEYS[1]
  local v = redis.pcall('GET', key)
  local bytes, a, b, old = ABSENT, 0, 0, -1
  if v then
    bytes, a, b = decode(key, v, kind)
    old = expires(a, b, kind, p1, p2, margin)
  else
    a, b = fresh(now, kind, p1)
  end
  local t = now
  if kind == 'bucket' and b > t then t = b end
  local fits, na, nb, f = step(a, b, t, cost, kind, p1, p2)
  if fits then
    local ms = px(f, old, margin, now)
    local value = encode(na, nb, kind)
    write(key, value, ms)
  elseif enforced then
    return '0' .. bytes
  end
  return '1' .. bytes
end

-- A set: one clock for every charge, the caller's now, never behind the reading of a bucket it
-- touches. Each key's state is read in one MGET and decoded once: got[c] becomes the state the
-- reply carries for KEYS[c]; st[3c - 2], st[3c - 1] the two numbers read (false when absent) and
-- st[3c] the kind. The limits' numbers are read as numbers once, in place in `ch`.
local ch = { _G.unpack(ARGV, base) }
local got = redis.call('MGET', _G.unpack(KEYS, 1, m))
-- As long as `ch` from the start (a table grown a slot at a time is copied at each power of two).
local st = { _G.unpack(ARGV, base) }
local t = now
local absent = 0
-- A key absent under its limit's version, found in an earlier one: its state re-based, by charge
-- (`ma`, `mb`), used as a present key's is and written as an absent key's first write is.
local ma, mb
if versions then
  ahead = entries(base + 3 * m, #ARGV)
  ma, mb = {}, {}
end
for c = 1, m do
  local o = c * 3
  local p1, p2 = ch[o - 1] + 0, ch[o] + 0
  ch[o - 1], ch[o] = p1, p2
  local kind = kindOf(p1, p2)
  local v = got[c]
  local a, b = false, false
  if v then
    local bytes
    bytes, a, b = decode(KEYS[c], v, kind)
    got[c] = bytes
    if kind == 'bucket' and b > t then t = b end
  else
    got[c] = ABSENT
    absent = absent + 1
    if ma and ahead[c] then
      local found, ea, eb = earlier(ahead[c], p1, p2)
      if found then
        ma[c], mb[c] = ea, eb
        if kind == 'bucket' and eb > t then t = eb end
      end
    end
  end
  st[o - 2], st[o - 1], st[o] = a, b, kind
end

-- Each charge in turn (a peek decides nothing here: the caller does, from the states), on its key's
-- state after the latest earlier charge to it that fit (repeated charges add up), found by a scan
-- of the earlier keys or a table in a large set; a cost below 0 is a shadow charge of -cost, made
-- when it fits and never refusing the set. As charge c is decided, st[3c - 2], st[3c - 1] become
-- the state staged, and in `ch` the value to write (ch[3c - 2]; false: none), its expiry (`px`)
-- and whether it is the first write of a key that was absent (`nx`, counted in `fresh`).
local failed = false
local unwritten, created = 0, 0
-- A reserve's record, made as its charges are decided: two numbers a charge, its cost and, for a
-- window, the end of the window it was counted in (0 for the other kinds).
local rec = false
if (mode == 'v' or mode == 'w') and not short then
  -- Every number 0 to start with (room for four charges without growing), so a charge that is not
  -- a window's sets only its cost.
  rec = { 0, 0, 0, 0, 0, 0, 0, 0 }
  for i = 9, 2 * m do rec[i] = 0 end
end
if mode ~= 'p' then
  local latest = nil
  if m > 16 then latest = {} end
  for c = 1, m do
    local o = c * 3
    local cost, p1, p2 = ch[o - 2], ch[o - 1], ch[o]
    if cost == '1' then cost = 1 else cost = cost + 0 end
    local enforced = cost > 0
    if not enforced then cost = -cost end
    local a, b, kind = st[o - 2], st[o - 1], st[o]
    local old = -1
    if a ~= false then
      old = expires(a, b, kind, p1, p2, margin)
    end
    local key = KEYS[c]
    local p = 0
    if latest then
      p = latest[key] or 0
    else
      for j = c - 1, 1, -1 do
        if KEYS[j] == key and ch[j * 3 - 2] then
          p = j
          break
        end
      end
    end
    if p > 0 then
      a, b = st[p * 3 - 2], st[p * 3 - 1]
    elseif a == false then
      a, b = fresh(t, kind, p1)
      if ma and ma[c] then a, b = ma[c], mb[c] end
    end
    local fits, na, nb, f = step(a, b, t, cost, kind, p1, p2)
    if fits then
      local ms = px(f, old, margin, now)
      local value = encode(na, nb, kind)
      local nx = p == 0 and got[c] == ABSENT
      if nx then created = created + 1 end
      ch[o - 2], ch[o - 1], ch[o] = value, ms, nx
      st[o - 2], st[o - 1] = na, nb
      if latest then latest[key] = c end
    else
      ch[o - 2] = false
      if got[c] == ABSENT then unwritten = unwritten + 1 end
      if enforced then
        failed = true
        break
      end
    end
    if rec then
      rec[c * 2 - 1] = cost
      if kind == 'window' then rec[c * 2] = st[o - 1] end
    end
  end
end

-- MGET answers nil for a key of another type as for an absent one. A key written here that was
-- absent is written only if it still does not exist (SET NX, below); when one is not written (a
-- peek, a refusal, a shadow charge that did not fit), EXISTS says, once, whether one of them is
-- another type, which is refused by name.
if absent > 0 and (mode == 'p' or failed or unwritten > 0) then
  if redis.call('EXISTS', _G.unpack(KEYS, 1, m)) ~= m - absent then
    for c = 1, m do
      if got[c] == ABSENT then
        local what = kept(st[c * 3])
        foreign(KEYS[c], false, what)
      end
    end
  end
  created = 0
end

if ma then
  for c in pairs(ma) do got[c] = struct.pack('<dd', ma[c], mb[c]) end
end
local reply
if m == 3 then reply = got[1] .. got[2] .. got[3] else reply = table.concat(got, '', 1, m) end
if not short then reply = struct.pack('<d', now) .. reply end
if mode == 'p' then return '1' .. reply end
if failed then return '0' .. reply end

-- The absent keys' first writes, each only if the key still does not exist: one that does holds
-- another type, so those written before it are deleted (they were absent) and it is refused by
-- name, nothing else written yet. Then the other writes, in order, so a key charged twice keeps
-- its last staged state.
local left = created
for c = 1, m do
  if left == 0 then break end
  local o = c * 3
  if ch[o - 2] and ch[o] then
    local done = write(KEYS[c], ch[o - 2], ch[o - 1], true)
    if not done then
      for j = 1, c - 1 do
        if ch[j * 3 - 2] and ch[j * 3] then redis.call('DEL', KEYS[j]) end
      end
      local what = kept(st[o])
      foreign(KEYS[c], false, what)
    end
    left = left - 1
  end
end
for c = 1, m do
  local o = c * 3
  local value = ch[o - 2]
  if value and not (created > 0 and ch[o]) then
    write(KEYS[c], value, ch[o - 1])
  end
end

reply = '1' .. reply
if mode == 'v' or mode == 'w' then
  -- The reservation's record (parts/state.lua), open for its time to live of the decisions'
  -- clock (and the margin on Redis's), packed in one call.
  local ttl, ms, record
  if short then
    -- Its head alone: the process that made the id keeps the charges, and is the only one that
    -- settles it (settle.lua then reads each charge's cost from its arguments). Its time to live
    -- is the PX less 1 and the margin, exactly (whole numbers below 2^53).
    ms = ARGV[3]
    ttl = ms - 1 - margin
    record = struct.pack('<c1dc16', 'o', now + ttl, sum)
  else
    ttl = ARGV[3] + 0
    ms = math.floor(ttl + margin) + 1
    local format = RECORD_FORMAT
    if m < 17 then format = format:sub(1, 7 + 2 * m) else format = format .. string.rep('d', 2 * m - 32) end
    record = struct.pack(format, 'o', now + ttl, sum, _G.unpack(rec, 1, 2 * m))
  end
  redis.call('SET', rid, record, 'PX', ms)
elseif rid then
  -- Kept with the charges as sent (cost, p1, p2 each, 24 bytes), so that a repeat with other costs
  -- replays this answer as it was made, and `sum`.
  local sent = {}
  for c = 1, m do
    local o = base + c * 3 - 3
    sent[c] = struct.pack('<ddd', ARGV[o] + 0, ARGV[o + 1] + 0, ARGV[o + 2] + 0)
  end
  redis.call('SET', rid, reply .. table.concat(sent) .. sum, 'PX', ARGV[3])
end
return reply
