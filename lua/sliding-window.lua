-- Sliding-window dedup: read, decide and write for a batch of pings, as one
-- unit that no other client can interleave. Two workers handed the same
-- redelivery cannot both admit it, because the second one's read sees the
-- first one's write.
--
-- KEYS[i]   the record of the asset of ping i. Every key of one call hashes
--           to one slot (the asset id is a hash tag), so the script runs
--           unchanged on Redis Cluster. An asset may appear more than once;
--           its pings are decided in the order given.
-- ARGV[1]   minSeconds   ARGV[2] minMetres   ARGV[3] ttlSeconds
-- ARGV[4]   a token unique to this call (see "Resent calls" below).
-- ARGV[5]   the pings, packed: for ping i, bytes 24(i-1)+1 .. 24i hold
--           t (epoch milliseconds), lat, lon as little-endian doubles.
--           Binary, so that neither side formats or parses decimal text.
--           (Tools that cannot send binary, such as redis-benchmark, may
--           instead pass ARGV[5 + 3(i-1) ..] = t, lat, lon of ping i as
--           decimal text, one argument each: the old layout.)
--
-- Reply: one string, 33 bytes per ping, in order: a reason code (1 byte:
-- 1 first, 2 elapsed, 3 moved, 4 replayed, 5 late, 6 window; up to 4 the
-- ping is admitted), then dtSeconds, distanceMetres, accepted, suppressed
-- as little-endian doubles. dt is 0 where there is none (first, replayed),
-- distance likewise (also late). Binary for the reasons above, and because
-- Redis truncates Lua numbers to integers on the way out.
--
-- THE RECORD is a plain string, written with SET ... EX ttlSeconds when a
-- ping is admitted and SET ... KEEPTTL when only the suppressed count
-- changed, so it expires ttlSeconds after the last admission. A string of
-- 13 to 28 bytes costs Redis one 48-byte allocation beside the key, up to
-- 44 bytes one of 64 (Redis 7.0, jemalloc); a hash of the same fields costs
-- about twice that. Two layouts, told apart by their length:
--
--   compact (28 bytes), used whenever it holds the values exactly:
--     I6 t in whole milliseconds   i4 lat * 1e7   i4 lon * 1e7
--     I3 accepted   I3 suppressed   I2 first   I6 call
--   full (42 bytes), otherwise (fractional milliseconds, more than seven
--   decimals, counts from 2^24):
--     d t   d lat   d lon   I5 accepted   I5 suppressed   I2 first   I6 call
--   either one followed, sometimes, by 24 bytes: d t  d lat  d lon of the
--   baseline as it was before the call named by `call` (see below).
--
--   t, lat, lon   the last admitted ping. The compact form is used only when
--                 decoding it gives back the identical doubles, so the
--                 decisions stay those of the memory store bit for bit.
--   accepted, suppressed   the asset's counts.
--   call          the last call that admitted a ping of this asset: the
--                 first 48 bits of the SHA-1 of its token.
--   first         the index i of that call's first admitted ping of this
--                 asset.
--
-- Resent calls. A client that lost the connection after Redis ran a call
-- sends the same call again (ioredis does, for unanswered commands). The
-- second run must not report the pings the first run admitted as late
-- behind the record that run wrote. When an asset's record names this call,
-- the run is a resend for that asset: it writes nothing and re-derives the
-- first run's decisions, which depend only on the arguments and the
-- baseline the first run started from. Ping `first` was admitted; every
-- later ping of the asset is decided against the chain of pings admitted
-- after it, exactly as the first run decided it. Pings of the asset before
-- `first` (suppressed by the first run) are decided against the baseline
-- from before the call, which is why it is kept in the record's tail in
-- that case, and only then. Admitted pings are reported as 'replayed';
-- counts are reported as they stand. A resend is recognised until another
-- call admits a ping of the asset; a record with a single "call" instead of
-- a list of every admitted index keeps the record's size fixed.
--
-- Records written in the hash layout of earlier versions read as absent and
-- are replaced on the first admission.
--
-- The rule and the distance formula are the ones in src/core; the contract
-- tests hold the two stores to the same answers.

local min_s = tonumber(ARGV[1])
local min_m = tonumber(ARGV[2])
local ttl = ARGV[3]
local call = tonumber(string.sub(redis.sha1hex(ARGV[4]), 1, 12), 16)
local packed = nil
if #ARGV == 5 then packed = ARGV[5] end

local FIRST, ELAPSED, MOVED, REPLAYED, LATE, WINDOW = 1, 2, 3, 4, 5, 6

local COMPACT = '<I6i4i4I3I3I2I6'
local FULL = '<dddI5I5I2I6'
local BASELINE = '<ddd'
local REPLY = '<Bdddd'
local SCALE = 1e7
local MAX_MS = 2 ^ 48
local MAX_COMPACT_COUNT = 2 ^ 24

local R = 6371008.8
local RAD = math.pi / 180
local sin, cos, asin, sqrt, floor = math.sin, math.cos, math.asin, math.sqrt, math.floor

local function distance(lat1, lon1, lat2, lon2)
  local s_lat = sin((lat2 - lat1) * RAD / 2)
  local s_lon = sin((lon2 - lon1) * RAD / 2)
  local h = s_lat * s_lat + cos(lat1 * RAD) * cos(lat2 * RAD) * s_lon * s_lon
  if h > 1 then h = 1 end
  return 2 * R * asin(sqrt(h))
end

-- The state of one asset during this call. has: a baseline exists (t, lat,
-- lon). pre_t etc.: the baseline before this call, kept when a ping was
-- suppressed before the call's first admission.
local function read_record(key)
  local raw = redis.pcall('GET', key)
  if type(raw) == 'string' then
    local n = #raw
    local s, pos = { has = true }, nil
    if n == 28 or n == 52 then
      local t, lat, lon
      t, lat, lon, s.acc, s.sup, s.first, s.call, pos = struct.unpack(COMPACT, raw)
      s.t, s.lat, s.lon = t, lat / SCALE, lon / SCALE
    elseif n == 42 or n == 66 then
      s.t, s.lat, s.lon, s.acc, s.sup, s.first, s.call, pos = struct.unpack(FULL, raw)
    else
      pos = nil
    end
    if pos then
      if pos <= n then s.pre_t, s.pre_lat, s.pre_lon = struct.unpack(BASELINE, raw, pos) end
      return s
    end
  end
  -- No record, or one of the earlier hash layout (GET fails: wrong type).
  return { has = false, acc = 0, sup = 0 }
end

local function encode(s)
  local head
  local lat, lon = floor(s.lat * SCALE + 0.5), floor(s.lon * SCALE + 0.5)
  if s.t >= 0 and s.t < MAX_MS and s.t == floor(s.t) and lat / SCALE == s.lat and lon / SCALE == s.lon
      and s.acc < MAX_COMPACT_COUNT and s.sup < MAX_COMPACT_COUNT then
    head = struct.pack(COMPACT, s.t, lat, lon, s.acc, s.sup, s.first, s.call)
  else
    head = struct.pack(FULL, s.t, s.lat, s.lon, s.acc, s.sup, s.first, s.call)
  end
  if s.pre_t then return head .. struct.pack(BASELINE, s.pre_t, s.pre_lat, s.pre_lon) end
  return head
end

-- The rule: reason, dtSeconds, distanceMetres against the state's baseline.
local function decide(s, t, lat, lon)
  if not s.has then return FIRST, 0, 0 end
  local d = (t - s.t) / 1000
  -- Late: suppress and leave the baseline where it is.
  if d <= 0 then return LATE, d, 0 end
  local m = distance(s.lat, s.lon, lat, lon)
  if d >= min_s then return ELAPSED, d, m end
  if m >= min_m then return MOVED, d, m end
  return WINDOW, d, m
end

local assets, order, out = {}, {}, {}
for i, key in ipairs(KEYS) do
  local t, lat, lon
  if packed then
    t, lat, lon = struct.unpack(BASELINE, packed, i * 24 - 23)
  else
    local at = 4 + (i - 1) * 3
    t, lat, lon = tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3])
  end

  local s = assets[key]
  if not s then
    s = read_record(key)
    if s.has and s.call == call then
      -- A resend: start from where the first run started.
      s.resend = true
      s.has = s.pre_t ~= nil
      s.t, s.lat, s.lon = s.pre_t, s.pre_lat, s.pre_lon
    end
    assets[key] = s
    order[#order + 1] = key
  end

  local reason, dt, dm = decide(s, t, lat, lon)
  if s.resend then
    if i == s.first or reason <= REPLAYED then
      reason, dt, dm = REPLAYED, 0, 0
      s.has, s.t, s.lat, s.lon = true, t, lat, lon
    end
  elseif reason <= REPLAYED then
    if not s.admitted then
      -- This call's first admission for the asset: the record will name it.
      s.admitted, s.first, s.call = true, i, call
      if s.suppressed_before then
        s.pre_t, s.pre_lat, s.pre_lon = s.t, s.lat, s.lon
      else
        s.pre_t, s.pre_lat, s.pre_lon = nil, nil, nil
      end
    end
    s.has, s.t, s.lat, s.lon = true, t, lat, lon
    s.acc = s.acc + 1
    s.dirty = true
  else
    if not s.admitted then s.suppressed_before = true end
    s.sup = s.sup + 1
    s.dirty = true
  end
  out[i] = struct.pack(REPLY, reason, dt, dm, s.acc, s.sup)
end

for _, key in ipairs(order) do
  local s = assets[key]
  if s.dirty then
    if s.admitted then
      redis.call('SET', key, encode(s), 'EX', ttl)
    else
      -- Only the suppressed count changed: the TTL still runs from the
      -- last admission.
      redis.call('SET', key, encode(s), 'KEEPTTL')
    end
  end
end
return table.concat(out)
