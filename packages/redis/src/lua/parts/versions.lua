-- A limit replaced while the service runs (quota.lua, settle.lua, lease.lua, move.lua). Each
-- version of a limit keeps its keys' state under names of its own (src/names.ts), so a replace
-- writes nothing: a key absent under the current version is read, when the call sends them, from
-- the versions before, newest first, and its state re-based onto each later version at the
-- instant that version replaced the one before, as the quota engine's replaceLimit re-bases every
-- key at once. An old version's state is never written again, so each key's re-base is made once
-- however many processes replace the limit, and a call that reads it and writes nothing leaves
-- the next to make the same one.

-- State (a, b) of a limit of numbers (p1, p2) re-based at `t` onto numbers (n1, n2) of the same
-- algorithm, as the quota engine's `bucketRebase`, `windowRebase` and `gcraRebase` take it,
-- operation for operation (the caller leaves out a replace that kept the numbers, which keeps the
-- state as it is): a bucket keeps its level, clamped to the new capacity (its form, one number or
-- two, may change with it), a full one full; a window keeps its count, closing no later than a
-- new window from `t`; a flow keeps its TAT.
local function rebase(a, b, t, p1, p2, n1, n2)
  local from = kindOf(p1, p2)
  local into = kindOf(n1, n2)
  local na, nb = a, b
  if from == 'window' then
    if not (t < b) then
      na = 0
    else
      if a > -2 * n1 then na = -2 * n1 end
      local latest = opens(t, n2)
      if latest < b then nb = latest end
    end
  elseif from == 'gcra' then
    local lead = a - (t - b)
    if lead < 0 then lead = 0 end
    if lead == 0 then
      na = 0
    else
      local burst, interval = n1, -n2
      local tau = burst * interval
      local slack = slackOf(burst)
      local most = 2 * tau + slack * interval
      if lead < most then na = lead else na = 2 * tau end
      nb = t
    end
  else
    -- A bucket: `from` and `into` 'one' (the instant it is full again) or 'bucket' (tokens, when).
    local cap, ncap, lead, level = p1, n1, 0, 0
    if from == 'one' then
      cap = p1 - 0.5
      lead = 0 - (t - b)
      if lead < 0 then lead = 0 end
      level = cap - lead / p2
    else
      local _
      _, level = bucket(a, b, t, 0, p1, p2)
    end
    if into == 'one' then ncap = n1 - 0.5 end
    local idle = level >= cap
    if from == 'one' then idle = b <= t end
    if idle then
      na, nb = ncap, t
      if into == 'one' then na = 0 end
    elseif from == 'one' and into == 'one' and p2 == n2 then
      -- Both of one number on one tick: the tokens lacking move by the capacity's change, exactly.
      local tick = n2
      local tau = ncap * tick
      local slack = slackOf(ncap)
      local most = 2 * tau + slack * tick
      local lack = lead + (ncap - cap) * tick
      na, nb = 0, t
      if lack > 0 then
        if lack < most then nb = t + lack else nb = t + 2 * tau end
      end
    else
      if level > ncap then level = ncap elseif level < -ncap then level = -ncap end
      if into == 'one' then
        na, nb = 0, t
        if level < ncap then nb = t + (ncap - level) * n2 end
      else
        na, nb = level, t
      end
    end
  end
  return na, nb
end

-- Where each charge's entry in a call's section of versions starts, by the charge's index: the
-- section runs from ARGV[from] to ARGV[to]. An entry is the charge's index, its number of links
-- n, then five arguments a link, newest version first: the index in KEYS of the key's name in
-- that version (0: not read, as any state there has expired), its p1 and p2, the instant (ms) it
-- was replaced at, and '1' when that replace kept this charge's numbers (no re-base).
local function entries(from, to)
  local at = {}
  local i = from
  while i < to do
    at[ARGV[i] + 0] = i
    i = i + 2 + (ARGV[i + 1] + 0) * 5
  end
  return at
end

-- The state of a key absent under its limit's current numbers (p1, p2), from its entry at ARGV[i]:
-- the newest earlier version's that holds one, re-based onto each version after it in turn.
-- Whether one was found, and the state (decoded as quota.lua decodes, refused likewise).
local function earlier(i, p1, p2)
  local n = ARGV[i + 1] + 0
  local v, found = false, 0
  for j = 1, n do
    local k = ARGV[i - 3 + j * 5] + 0
    if k > 0 and found == 0 then
      v = redis.pcall('GET', KEYS[k])
      if v then found = j end
    end
  end
  local a, b = 0, 0
  if found > 0 then
    local o = i - 3 + found * 5
    local q1, q2 = ARGV[o + 1] + 0, ARGV[o + 2] + 0
    local was = kindOf(q1, q2)
    local _
    _, a, b = decode(KEYS[ARGV[o] + 0], v, was)
    for j = found, 1, -1 do
      o = i - 3 + j * 5
      local r1, r2 = p1, p2
      if j > 1 then r1, r2 = ARGV[o - 4] + 0, ARGV[o - 3] + 0 end
      if ARGV[o + 4] ~= '1' then
        a, b = rebase(a, b, ARGV[o + 3] + 0, q1, q2, r1, r2)
      end
      q1, q2 = r1, r2
    end
  end
  return found > 0, a, b
end
