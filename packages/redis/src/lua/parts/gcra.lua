-- GCRA's step, as @tideward/limiters' Gcra and the quota engine's GCRA take it, and a token bucket
-- of one number (which decides as GCRA on its capacity and the ms a token: see state.lua).

-- How far ahead of its reading a flow of `burst` may be left, in ms: `burst` intervals and the
-- slack (a billionth of the burst, at most 2^-10, in intervals).
local function reach(burst, interval)
  local slack = slackOf(burst)
  local most = burst * interval + slack * interval
  return most
end

-- A flow `ahead` ms ahead of its reading at `at`, at `t`, charged `cost` emission intervals of
-- `interval` ms: whether the charge fits (at most `burst`, leaving the flow at most `most` ms
-- ahead) and how far ahead of `t` it then is.
local function gcra(ahead, at, t, cost, interval, burst, most)
  local lead = ahead - (t - at)
  if lead < 0 then lead = 0 end
  local after = lead + cost * interval
  local fits = cost <= burst and after <= most
  return fits, after
end
