-- Sliding-window dedup: read, decide and write for a batch of pings, as one
-- unit that no other client can interleave. Two workers handed the same
-- redelivery cannot both admit it, because the second one's read sees the
-- first one's write.
--
-- KEYS[i]   the record of the asset of ping i, a hash:
--             t    epoch milliseconds of the last accepted ping
--             lat  lon  its position
--             id   the call that last admitted a ping of this asset, and
--                  which of its pings it admitted: token.i or token.i,j,...
--                  (see ARGV[4])
--             acc  sup  pings accepted / suppressed for this asset
--           Every key of one call hashes to one slot (the asset id is a
--           hash tag), so the script runs unchanged on Redis Cluster.
-- ARGV[1]   minSeconds   ARGV[2] minMetres   ARGV[3] ttlSeconds
-- ARGV[4]   a token unique to this call. A client that lost the connection
--           resends the call; if the first send had run, the record's id
--           lists i under this token and ping i is reported as admitted
--           again ('replayed') instead of being suppressed as late behind
--           itself. The id keeps every i the call admitted for the asset, not
--           only the last: when one call admits two pings of one asset, the
--           first of them must also be recognised on a resend.
-- ARGV[5 + 3(i-1) ..]  t, lat, lon of ping i, in order; pings of one asset
--           are decided in the order given.
--
-- Returns five strings per ping: reason, dtSeconds, distanceMetres,
-- accepted, suppressed. Strings, because Redis truncates Lua numbers to
-- integers on the way out.
--
-- The rule and the distance formula are the ones in src/core; the contract
-- tests hold the two stores to the same answers.

local min_s = tonumber(ARGV[1])
local min_m = tonumber(ARGV[2])
local ttl = ARGV[3]
local token = ARGV[4]

local R = 6371008.8
local RAD = math.pi / 180

local function distance(lat1, lon1, lat2, lon2)
  local s_lat = math.sin((lat2 - lat1) * RAD / 2)
  local s_lon = math.sin((lon2 - lon1) * RAD / 2)
  local h = s_lat * s_lat + math.cos(lat1 * RAD) * math.cos(lat2 * RAD) * s_lon * s_lon
  if h > 1 then h = 1 end
  return 2 * R * math.asin(math.sqrt(h))
end

local function exact(n)
  return string.format('%.17g', n)
end

local prefix = token .. '.'

-- True if id (the record's id field) says this call admitted ping i.
local function admitted_by_this_call(id, i)
  if not id or string.sub(id, 1, #prefix) ~= prefix then return false end
  return string.find(',' .. string.sub(id, #prefix + 1) .. ',', ',' .. i .. ',', 1, true) ~= nil
end

local out = {}
for i, key in ipairs(KEYS) do
  local base = 4 + (i - 1) * 3
  local t_arg, lat_arg, lon_arg = ARGV[base + 1], ARGV[base + 2], ARGV[base + 3]
  local t = tonumber(t_arg)
  local rec = redis.call('HMGET', key, 't', 'lat', 'lon', 'id', 'acc', 'sup')
  local reason, dt, dm = 'first', '', ''

  if rec[1] then
    if admitted_by_this_call(rec[4], i) then
      reason = 'replayed'
    else
      local d = (t - tonumber(rec[1])) / 1000
      dt = exact(d)
      if d <= 0 then
        -- Late: suppress and leave the baseline where it is.
        reason = 'late'
      else
        local m = distance(tonumber(rec[2]), tonumber(rec[3]), tonumber(lat_arg), tonumber(lon_arg))
        dm = exact(m)
        if d >= min_s then
          reason = 'elapsed'
        elseif m >= min_m then
          reason = 'moved'
        else
          reason = 'window'
        end
      end
    end
  end

  local acc = tonumber(rec[5]) or 0
  local sup = tonumber(rec[6]) or 0
  if reason == 'late' or reason == 'window' then
    sup = redis.call('HINCRBY', key, 'sup', 1)
  elseif reason ~= 'replayed' then
    acc = acc + 1
    -- An earlier ping of this asset in this same call was admitted: add i.
    local id = prefix .. i
    if rec[4] and string.sub(rec[4], 1, #prefix) == prefix then id = rec[4] .. ',' .. i end
    redis.call('HSET', key, 't', t_arg, 'lat', lat_arg, 'lon', lon_arg, 'id', id, 'acc', acc)
    redis.call('EXPIRE', key, ttl)
  end

  out[#out + 1] = reason
  out[#out + 1] = dt
  out[#out + 1] = dm
  out[#out + 1] = tostring(acc)
  out[#out + 1] = tostring(sup)
end
return out
