-- What every script may use: the clock, reading a key, refusing what is not tideward's, writing.
-- A script gets each definition of src/lua/parts that it names: a value prepended, a function
-- written out at each call (scripts/link-lua.mjs says how, and what a part may do).

-- A state as the reply carries it for a key that is absent: two NaNs.
local ABSENT = '\0\0\0\0\0\0\248\127\0\0\0\0\0\0\248\127'

-- The reading a call decides at, in ms: the caller's (`arg`, the shortest decimal that reads back
-- as its double), or Redis's own TIME when `arg` is ''.
local function clock(arg)
  local now
  if arg == '' then
    local tm = redis.call('TIME')
    now = tm[1] * 1000 + tm[2] / 1000
  else
    now = arg + 0
  end
  return now
end

-- The end of every refusal of a key's value.
local NOT_OURS = ': another writer, or the state of another version under this name'

-- Refuses what `key` holds, naming the key, what it holds and what tideward keeps there (`what`):
-- `v` is the bytes it holds (a string that is not tideward state), or else a GET's error or
-- MGET's nil (then its type is asked; a key that does not exist is no refusal).
local function foreign(key, v, what)
  local shown
  if type(v) == 'string' then
    shown = v:sub(1, 24)
    if shown:find('^[ -~]*$') then shown = '"' .. shown .. '"' else shown = 'bytes ' .. shown:gsub('.', function(c) return string.format('%02x', c:byte()) end) end
    shown = #v .. ' bytes (' .. shown .. ')'
  else
    shown = redis.call('TYPE', key).ok
    if shown == 'none' then shown = nil else shown = 'a ' .. shown end
  end
  if shown then
    error('tideward: the key ' .. key .. ' holds ' .. shown .. ', not ' .. what .. NOT_OURS)
  end
end

-- A limiter's call (bucket, gcra and period.lua): its clock (ARGV[2]) and what its key (KEYS[1])
-- holds, `n` little-endian doubles (n = 2 or 3): false when absent, else the bytes and the
-- doubles, each within its bounds (lo1, hi1, …). Anything else (other bytes, numbers past the
-- bounds or NaN, another type, whose GET answers an error) is refused by name, as not `what`.
local function held(n, what, lo1, hi1, lo2, hi2, lo3, hi3)
  local now = clock(ARGV[2])
  local v = redis.pcall('GET', KEYS[1])
  local a, b, c = 0 / 0, 0 / 0, 0 / 0
  if v and #v == 8 * n then a, b, c = struct.unpack(n == 2 and '<dd' or '<ddd', v) end
  if v and not (a >= lo1 and a <= hi1 and b >= lo2 and b <= hi2 and (n == 2 or c >= lo3 and c <= hi3)) then
    foreign(KEYS[1], v, what)
  end
  return now, v, a, b, c
end

-- Writes `value` under `key` to expire in `ms` (0: keep the key's own expiry, KEEPTTL); when `nx`,
-- only if the key does not exist, answering false when it does.
local function write(key, value, ms, nx)
  local done
  if nx then
    if ms == 0 then done = redis.call('SET', key, value, 'NX', 'KEEPTTL') else done = redis.call('SET', key, value, 'NX', 'PX', ms) end
  elseif ms == 0 then
    done = redis.call('SET', key, value, 'KEEPTTL')
  else
    done = redis.call('SET', key, value, 'PX', ms)
  end
  return done
end
