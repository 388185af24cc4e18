-- tideward reservations: settle or cancel one, in one round trip. KEYS[1] is its record (written by
-- quota.lua's reserve; parts/state.lua says what it holds), then the state of each charge it made,
-- in order. Its arguments and reply are documented beside the code that sends and reads them,
-- src/wire.ts; each charge's step is parts/adjust.lua.

local now = clock(ARGV[1])
local margin, debt = ARGV[2] + 0, ARGV[3] == 'd'
local m = #KEYS - 1
-- A status in upper case: a limit was replaced since the reserve (or a key overridden), and each
-- charge's state is under its name now (KEYS[c + 1]); then come the names as reserved (whose
-- digest the record keeps) and the names of earlier versions, and ARGV ends with a section of
-- versions (parts/versions.lua) and the number of names after the charges' own.
local status, ahead, from = ARGV[4], nil, 2
if status < 'a' then
  status = status:lower()
  m = m - ARGV[#ARGV]
  from = m + 2
  ahead = entries(5 + 4 * m, #ARGV)
end
local rec = redis.pcall('GET', KEYS[1])
-- A record of an id the engine made keeps no digest (quota.lua's mode 'w'): none to compare.
local sum = NO_DIGEST
if type(rec) ~= 'string' or rec:sub(10, RECORD) ~= NO_DIGEST then
  sum = digest(from, from + m - 1)
end
local s = reservation(KEYS[1], rec, now, sum, m)
if s ~= 'o' then
  if s == '' then s = 'U' end
  return s
end

-- Each charge in turn, on its key's state as the charges before it left it: the units it comes
-- to ('' for a limit removed since: nothing to do) against the cost it reserved, which a record of
-- its head alone (an id the engine made) leaves to the arguments.
local full = #rec > RECORD
local missed = {}
for c = 1, m do
  local o = 3 + c * 4
  local units = ARGV[o - 2]
  local delta = 0
  if units ~= '' then
    local cost = ARGV[o - 1]
    if full then cost = struct.unpack('<d', rec, RECORD + c * 16 - 15) end
    delta = units - cost
  end
  local left = 0
  if delta ~= 0 then
    local p1, p2 = ARGV[o] + 0, ARGV[o + 1] + 0
    local kind = kindOf(p1, p2)
    local key = KEYS[c + 1]
    local v = redis.pcall('GET', key)
    local a, b, old = 0, 0, -1
    if v then
      local _
      _, a, b = decode(key, v, kind)
      old = expires(a, b, kind, p1, p2, margin)
    else
      a, b = fresh(now, kind, p1)
      if ahead and ahead[c] then
        local found, ea, eb = earlier(ahead[c], p1, p2)
        if found then
          a, b, v = ea, eb, true
        end
      end
    end
    -- A record of its head alone has no window among its charges.
    local opened = 0
    if full then opened = struct.unpack('<d', rec, RECORD + c * 16 - 7) end
    local na, nb
    na, nb, left = adjust(a, b, now, delta, debt, opened, kind, p1, p2)
    -- A key with no state changes only by a top-up (a refund finds it full, closed or at rest).
    if v or delta - left > 0 then
      local f = freshAt(na, nb, kind, p1, p2)
      local ms = px(f, old, margin, now)
      local value = encode(na, nb, kind)
      write(key, value, ms)
    end
  end
  missed[c] = struct.pack('<d', left)
end
redis.call('SET', KEYS[1], status .. rec:sub(2), 'KEEPTTL')
return 'O' .. table.concat(missed)
