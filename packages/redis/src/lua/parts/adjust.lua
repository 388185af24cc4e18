-- A settle's step (settle.lua): a reservation's charge settled for `delta` units more than it
-- reserved (a top-up) or fewer (a refund, `delta` below 0), as the quota engine's settle takes it
-- (algorithms.ts `adjust`, with bucket.ts, fixed-window.ts and gcra.ts), operation for operation.

-- The units a top-up of `delta` takes where there is room for `room`: all, what fits, or none.
local function take(delta, room)
  local taken = 0
  if delta < room then taken = delta elseif room > 0 then taken = room end
  return taken
end

-- State (a, b) of a limit of `kind` (p1, p2: see state.lua) settled at `t` for `delta` units,
-- owing one limit's worth at most when `debt` (else taking only what it holds), a window's charge
-- having been counted in the window ending at `opened`. A refund adds tokens back, never above
-- the capacity; lowers a window's count only while that window is open; moves a flow's TAT back,
-- never before `t`. A top-up is never refused. Answers the state after and the units not taken.
local function adjust(a, b, t, delta, debt, opened, kind, p1, p2)
  local na, nb, missed = a, b, 0
  if kind == 'bucket' then
    local _, level, slack = bucket(a, b, t, 0, p1, p2)
    if t > b then nb = t end
    if delta <= 0 then
      na = level - delta
      if not (na < p1) then na = p1 end
    else
      local room = math.floor(level + slack)
      if debt then room = room + p1 end
      local taken = take(delta, room)
      na = level - taken
      missed = delta - taken
    end
  elseif kind == 'one' then
    -- A bucket of one number, full again at b: its lead moves as a flow's.
    local cap, tick = p1 - 0.5, p2
    local slack = slackOf(cap)
    local lead = 0 - (t - b)
    if lead < 0 then lead = 0 end
    na = 0
    if delta <= 0 then
      local back = lead + delta * tick
      if lead == 0 then nb = b elseif back > 0 then nb = t + back else nb = t end
    else
      local room = math.floor(cap - (lead - slack * tick) / tick)
      if debt then room = room + cap end
      local taken = take(delta, room)
      if taken ~= 0 then nb = t + (lead + taken * tick) end
      missed = delta - taken
    end
  elseif kind == 'window' then
    local most = -p1
    if debt then most = -2 * p1 end
    if t < b and b == opened then
      if delta <= 0 then
        na = a + delta
        if not (na > 0) then na = 0 end
      else
        local taken = take(delta, most - a)
        na = a + taken
        missed = delta - taken
      end
    elseif delta > 0 then
      -- Closed since: the top-up counts in the window open at `t`, opening one as a charge would.
      local count = a
      if not (t < b) then count = 0 end
      local taken = take(delta, most - count)
      if taken > 0 then
        na = count + taken
        if not (t < b) then
          nb = opens(t, p2)
        end
      end
      missed = delta - taken
    end
  else
    local burst, interval = p1, -p2
    local slack = slackOf(burst)
    local lead = a - (t - b)
    if lead < 0 then lead = 0 end
    if delta <= 0 then
      if lead ~= 0 then
        na = lead + delta * interval
        if not (na > 0) then na = 0 end
        nb = t
      end
    else
      local room = math.floor(burst - (lead - slack * interval) / interval)
      if debt then room = room + burst end
      local taken = take(delta, room)
      if taken > 0 then na, nb = lead + taken * interval, t end
      missed = delta - taken
    end
  end
  return na, nb, missed
end
