-- tideward overrides: moves one key's state of a limit, of each algorithm, from the names of the
-- limit it was held to to the names of the one it is held to now (an override set, replaced or
-- taken away), re-based at that instant as the quota engine's setOverride and removeOverride
-- re-base it (parts/versions.lua). Its arguments are documented beside the code that sends them,
-- moveWire in src/wire.ts.
--
-- A state is moved only into a name that holds none, and the names it came from are deleted: so
-- however many processes make the same change, the first moves the state and re-bases it once,
-- and the others find nothing left to move.

local now = clock(ARGV[1])
local margin = ARGV[2] + 0
local ahead = {}
if ARGV[#ARGV] ~= '0' then
  ahead = entries(18, #ARGV)
end
local moved = 0
for c = 1, 3 do
  local o = c * 5 - 2
  local s1, s2, d1, d2 = ARGV[o] + 0, ARGV[o + 1] + 0, ARGV[o + 2] + 0, ARGV[o + 3] + 0
  local from = kindOf(s1, s2)
  local into = kindOf(d1, d2)
  local v = redis.pcall('GET', KEYS[3 + c])
  local found, a, b = false, 0, 0
  if v then
    local _
    _, a, b = decode(KEYS[3 + c], v, from)
    found = true
  elseif ahead[c] then
    found, a, b = earlier(ahead[c], s1, s2)
  end
  if found then
    if ARGV[o + 4] ~= '1' then
      a, b = rebase(a, b, now, s1, s2, d1, d2)
    end
    local f = freshAt(a, b, into, d1, d2)
    if f > now then
      local ms = px(f, -1, margin, now)
      local value = encode(a, b, into)
      local done = write(KEYS[c], value, ms, true)
      if done then moved = moved + 1 end
    end
  end
end
if #KEYS > 3 then redis.call('DEL', _G.unpack(KEYS, 4)) end
return moved
