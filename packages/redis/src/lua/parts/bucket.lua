-- A token bucket's step, as @tideward/limiters' Bucket and the quota engine's token bucket take
-- it (RedisBucket, a quota charge, a lease).

-- What a limiter of `n` (a bucket's capacity, a flow's burst) forgives when comparing, in units:
-- a billionth of `n`, at most 2^-10.
local function slackOf(n)
  local slack = n * 1e-9
  if slack > 0.0009765625 then slack = 0.0009765625 end
  return slack
end

-- A bucket of `cap` tokens holding `tokens` counted at `at`, refilled at `perMs` tokens a ms up to
-- its capacity by `t` (one holding more, as after its capacity was lowered, keeps them), charged
-- `cost`: whether the charge fits, within the slack (a billionth of the capacity, at most 2^-10
-- tokens), the level at `t` before the charge, and the slack.
local function bucket(tokens, at, t, cost, cap, perMs)
  local level = tokens
  if t > at then
    level = tokens + (t - at) * perMs
    if level > cap then level = cap end
  end
  local slack = slackOf(cap)
  local fits = cost <= cap and level + slack >= cost
  return fits, level, slack
end
