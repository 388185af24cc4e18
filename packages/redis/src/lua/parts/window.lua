-- A fixed window's step, as the quota engine's fixed window takes it, and where a window ends
-- (@tideward/limiters' Period opens its periods likewise).

-- The end (exclusive) of the window that opens at `t`: `width` ms on when `width` > 0; when
-- `width` < 0 (aligned), the multiple of -width after the one `t` falls in, such that
-- start <= t < end holds for the rounded multiples themselves.
local function opens(t, width)
  local ends
  if width > 0 then
    ends = t + width
  else
    local w = -width
    local k = math.floor(t / w)
    while (k + 1) * w <= t do k = k + 1 end
    while k * w > t do k = k - 1 end
    ends = (k + 1) * w
  end
  return ends
end

-- A window of `cap` units with `count` used, ending at `ends`, at `t`, charged `cost`: whether the
-- charge fits, and the count and the end after it (a window past its end is a fresh one, opening
-- at `t`).
local function window(count, ends, t, cost, cap, width)
  local open = t < ends
  if not open then count = 0 end
  local fits = not (count + cost > cap)
  if fits and not open then
    ends = opens(t, width)
  end
  return fits, count + cost, ends
end
