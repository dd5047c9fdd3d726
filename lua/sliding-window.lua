-- Sliding-window dedup: read, decide and write for a batch of operations,
-- as one unit that no other client can interleave. Two workers handed the
-- same redelivery cannot both admit it, because the second one's read sees
-- the first one's write.
--
-- The loader (src/redis/scripts.ts) puts one line before this text:
-- `local REASON, ADMITS = { ahead = 1, first = 2, ... }, { [2] = true, ... }`,
-- the reason codes of src/core/window-reasons.ts and the set of those that
-- admit, so that both sides name them and neither spells a number. The
-- rule is decideWindow of src/core/sliding-window.ts; the contract and
-- parity tests hold the two to the same answers.
--
-- KEYS[1]    the epoch key of this call's hash slot (see "Resets").
-- KEYS[1+i]  the record of the asset of operation i. Every key of one call
--            hashes to one slot (the asset id is a hash tag, and so is the
--            epoch key's suffix), so the script runs unchanged on Redis
--            Cluster. An asset may appear more than once; its operations
--            run in the order given.
-- ARGV[1]    the rule, packed '<ddddI4': minSeconds, minMetres,
--            minHeadingDegrees (0: off), maxAheadSeconds (negative: off),
--            ttlSeconds.
-- ARGV[2]    this call, packed '<dI6': the Node-RED host's clock in epoch
--            milliseconds (the clock guard's "now": the host's, not Redis
--            TIME, so that every store and every test reads one clock), and
--            48 random bits naming the call (see "Resent calls").
-- ARGV[3]    the operations, 48 bytes each, '<BBI6ddddd': the operation
--            (1 ping, 2 reset the asset, 3 reset every asset), flags (1: the
--            ping has a heading, 2: the ping is a retried message), the
--            48-bit fingerprint of the ping's event values, then t (epoch
--            milliseconds), lat, lon, heading, accuracy as doubles. Binary,
--            so that neither side formats or parses decimal text.
--
-- Reply: one string, 34 bytes per operation, in order, '<BdddI4I4B': the
-- reason code (0 for a reset), dtSeconds, distanceMetres, headingChange,
-- the asset's accepted and suppressed counts, and which of the three
-- measures are present (1 dt, 2 distance, 4 heading change). Binary because
-- Redis truncates Lua numbers to integers on the way out.
--
-- THE RECORD is a string of 44 bytes (so Redis 7 keeps key object and value
-- in one 64-byte allocation), written with SET ... EX ttlSeconds when a
-- ping is admitted and SET ... KEEPTTL when only the suppressed count
-- changed, so it expires ttlSeconds after the last admission:
--
--   '<di4i4I4I4I6I2I6I2I2I2'
--   t          the last admitted ping's time, epoch ms, exact
--   lat, lon   its position in 1e-7 degrees (about 1 cm)
--   accepted, suppressed   the asset's counts
--   call       the last call that admitted a ping of this asset
--   first      the index i of that call's first admitted ping of the asset
--   events     the admitted ping's event fingerprint
--   heading    in 0.01 degrees, 65535 when it had none
--   accuracy   in 0.1 m (at most 6553.4)
--   epoch      the slot's epoch (mod 65536) the record was written in
--
-- followed, sometimes, by 26 bytes '<di4i4I6I2I2' (t, lat, lon, events,
-- heading, accuracy): the asset's baseline from before the call named by
-- `call`, kept when that call suppressed a ping of the asset before its
-- first admission (see below). Both stores keep the baseline at this
-- precision, so their decisions agree bit for bit.
--
-- Resets. The epoch key holds '<I4I6': a counter and the call that last
-- raised it; it never expires. A record written in another epoch reads as
-- absent. "Reset every asset" raises the counter: O(1) on the server however
-- many keys exist, atomic with respect to every decision (a decision runs
-- wholly before or wholly after it), and a record written after it can
-- never be lost to it, which a SCAN and UNLINK running alongside new writes
-- could not promise. On a Cluster each slot has its own epoch key, and the
-- client sends the reset to every slot. "Reset the asset" deletes its
-- record. Both travel in the same call as the pings around them, so they
-- take effect exactly between them.
--
-- Resent calls. A client that lost the connection after Redis ran a call
-- sends the same call again (ioredis does, for unanswered commands). The
-- second run must not report the pings the first run admitted as late
-- behind the record that run wrote. When an asset's record names this call,
-- the run is a resend for that asset: it writes nothing and re-derives the
-- first run's decisions, which depend only on the operations and the
-- baseline the first run started from. Ping `first` was admitted; every
-- later operation of the asset is replayed against the chain after it,
-- exactly as the first run decided it. Operations of the asset before
-- `first` were decided against the baseline from before the call, which is
-- why it is kept in the record's tail in that case, and only then. Admitted
-- pings are reported as 'replayed'; counts are reported as they stand. A
-- resend is recognised until another call admits a ping of the asset. A
-- reset of every asset raises the epoch once per call, resent or not.
--
-- A retried message (flag 2: the node lost the decision of this very
-- message and a Catch flow sent it again) whose ping is exactly the stored
-- baseline was admitted by the lost attempt: it is 'replayed' too.

local min_s, min_m, min_turn, max_ahead, ttl = struct.unpack('<ddddI4', ARGV[1])
local now, call = struct.unpack('<dI6', ARGV[2])
local ops = ARGV[3]

local PING, RESET_ASSET, RESET_ALL = 1, 2, 3
local HAS_HEADING, RETRY = 1, 2
local HAS_DT, HAS_DISTANCE, HAS_TURN = 1, 2, 4
local OP, OP_BYTES = '<BBI6ddddd', 48
local RECORD, RECORD_BYTES = '<di4i4I4I4I6I2I6I2I2I2', 44
local TAIL, TAIL_BYTES = '<di4i4I6I2I2', 26
local REPLY = '<BdddI4I4B'
local EPOCH = '<I4I6'
local DEGREE_STEPS, HEADING_STEPS, ACCURACY_STEPS = 1e7, 100, 10
local MAX_ACCURACY_STEP, NO_HEADING, MAX_COUNT = 65534, 65535, 4294967295

local R = 6371008.8
local RAD = math.pi / 180
local sin, cos, asin, sqrt, floor, abs, min = math.sin, math.cos, math.asin, math.sqrt, math.floor, math.abs, math.min
local band = bit.band

if #ops ~= (#KEYS - 1) * OP_BYTES then
  return redis.error_reply('sliding-window: ' .. #ops .. ' bytes of operations for ' .. (#KEYS - 1) .. ' keys')
end

local function distance(lat1, lon1, lat2, lon2)
  local s_lat = sin((lat2 - lat1) * RAD / 2)
  local s_lon = sin((lon2 - lon1) * RAD / 2)
  local h = s_lat * s_lat + cos(lat1 * RAD) * cos(lat2 * RAD) * s_lon * s_lon
  if h > 1 then h = 1 end
  return 2 * R * asin(sqrt(h))
end

-- The precision of the record, as core/sliding-window's stored* functions.
local function degree_steps(x) return floor(x * DEGREE_STEPS + 0.5) end
local function heading_steps(h)
  local steps = floor(h * HEADING_STEPS + 0.5)
  if steps >= 360 * HEADING_STEPS then steps = steps - 360 * HEADING_STEPS end
  return steps
end
local function accuracy_steps(a)
  if not (a > 0) then return 0 end
  return min(floor(a * ACCURACY_STEPS + 0.5), MAX_ACCURACY_STEP)
end

local function heading_change(a, b)
  local d = abs(a - b)
  if d >= 360 then d = d - 360 end
  if d > 180 then return 360 - d end
  return d
end

-- The epoch of this slot, and whether this very call raised it last.
local epoch, epoch_call = 0, -1
local raw_epoch = redis.call('GET', KEYS[1])
if raw_epoch and #raw_epoch == 10 then epoch, epoch_call = struct.unpack(EPOCH, raw_epoch) end

-- A baseline: has, t, lat, lon, heading (nil: none), accuracy, events.
local function absent() return { has = false } end

local function unpack_baseline(t, lat, lon, events, heading, accuracy)
  local b = { has = true, t = t, lat = lat / DEGREE_STEPS, lon = lon / DEGREE_STEPS, events = events,
              accuracy = accuracy / ACCURACY_STEPS }
  if heading ~= NO_HEADING then b.heading = heading / HEADING_STEPS end
  return b
end

-- The state of one asset during this call: its baseline `b`, its counts,
-- and what the record says about the call that last admitted a ping.
local function read_state(key)
  local raw = redis.call('GET', key)
  if raw and (#raw == RECORD_BYTES or #raw == RECORD_BYTES + TAIL_BYTES) then
    local t, lat, lon, acc, sup, rcall, first, events, heading, accuracy, rec_epoch, pos = struct.unpack(RECORD, raw)
    if rec_epoch == epoch % 65536 then
      local s = { b = unpack_baseline(t, lat, lon, events, heading, accuracy), acc = acc, sup = sup, call = rcall, first = first }
      if pos <= #raw then s.tail = unpack_baseline(struct.unpack(TAIL, raw, pos)) end
      return s
    end
  end
  return { b = absent(), acc = 0, sup = 0 }
end

local function heading_field(b)
  if b.heading then return heading_steps(b.heading) end
  return NO_HEADING
end

local function encode(s)
  local b = s.b
  local head = struct.pack(RECORD, b.t, degree_steps(b.lat), degree_steps(b.lon), s.acc, s.sup, s.call, s.first,
    b.events, heading_field(b), accuracy_steps(b.accuracy), epoch % 65536)
  if not s.tail then return head end
  local p = s.tail
  return head .. struct.pack(TAIL, p.t, degree_steps(p.lat), degree_steps(p.lon), p.events, heading_field(p),
    accuracy_steps(p.accuracy))
end

-- The baseline an admitted ping becomes.
local function baseline_of(flags, t, lat, lon, heading, accuracy, events)
  local b = { has = true, t = t, lat = degree_steps(lat) / DEGREE_STEPS, lon = degree_steps(lon) / DEGREE_STEPS,
              events = events, accuracy = accuracy_steps(accuracy) / ACCURACY_STEPS }
  if band(flags, HAS_HEADING) ~= 0 then b.heading = heading_steps(heading) / HEADING_STEPS end
  return b
end

-- The rule: reason, dt, distance, heading change (nil where absent).
local function decide(b, flags, t, lat, lon, heading, accuracy, events)
  local dt = nil
  if b.has then dt = (t - b.t) / 1000 end
  if max_ahead >= 0 and t - now > max_ahead * 1000 then return REASON.ahead, dt end
  if not b.has then return REASON.first end
  if band(flags, RETRY) ~= 0 and b.t == t and b.lat == degree_steps(lat) / DEGREE_STEPS
      and b.lon == degree_steps(lon) / DEGREE_STEPS and b.events == events then
    return REASON.replayed
  end
  -- Late: suppress and leave the baseline where it is.
  if dt <= 0 then return REASON.late, dt end
  local m = distance(b.lat, b.lon, lat, lon)
  local turn = nil
  if band(flags, HAS_HEADING) ~= 0 and b.heading then turn = heading_change(b.heading, heading) end
  if dt >= min_s then return REASON.elapsed, dt, m, turn end
  if events ~= b.events then return REASON.event, dt, m, turn end
  if m >= min_m and m > accuracy + b.accuracy then return REASON.moved, dt, m, turn end
  if min_turn > 0 and turn and turn >= min_turn then return REASON.turned, dt, m, turn end
  return REASON.window, dt, m, turn
end

local function reply(reason, dt, m, turn, acc, sup)
  local present = 0
  if dt then present = present + HAS_DT else dt = 0 end
  if m then present = present + HAS_DISTANCE else m = 0 end
  if turn then present = present + HAS_TURN else turn = 0 end
  return struct.pack(REPLY, reason, dt, m, turn, acc, sup, present)
end

local function count(n)
  if n < MAX_COUNT then return n + 1 end
  return n
end

local states, order, out = {}, {}, {}
-- Whether this run raised the epoch (a resend finds it raised by its first run).
local raised = false

local function state_of(key)
  local s = states[key]
  if not s then
    s = read_state(key)
    if s.b.has and s.call == call then
      -- A resend: start from where the first run started.
      s.resend = true
      s.b = s.tail or absent()
    end
    -- The baseline before this call, kept for the tail should it be needed.
    s.before = s.b
    states[key] = s
    order[#order + 1] = key
  end
  return s
end

local function wipe(s)
  s.b = absent()
  s.acc, s.sup = 0, 0
  s.write = 'del'
end

for i = 1, #KEYS - 1 do
  local key = KEYS[i + 1]
  local op, flags, events, t, lat, lon, heading, accuracy = struct.unpack(OP, ops, (i - 1) * OP_BYTES + 1)

  if op == RESET_ALL then
    if epoch_call ~= call then
      epoch, epoch_call, raised = epoch + 1, call, true
      redis.call('SET', KEYS[1], struct.pack(EPOCH, epoch, call))
    end
    -- Every asset this call has touched is gone as well. A resend whose
    -- first run made this reset re-derives only its own assets: a record
    -- another call has written since is newer than the reset, and stays.
    for _, k in ipairs(order) do
      if raised or states[k].resend then wipe(states[k]) end
    end
    out[i] = reply(0, nil, nil, nil, 0, 0)
  elseif op == RESET_ASSET then
    wipe(state_of(key))
    out[i] = reply(0, nil, nil, nil, 0, 0)
  else
    local s = state_of(key)
    local reason, dt, m, turn = decide(s.b, flags, t, lat, lon, heading, accuracy, events)
    if s.resend then
      if i == s.first or (ADMITS[reason] and reason ~= REASON.replayed) then
        reason, dt, m, turn = REASON.replayed, nil, nil, nil
        s.b = baseline_of(flags, t, lat, lon, heading, accuracy, events)
      end
    elseif reason == REASON.replayed then
      -- A retried message the lost attempt had admitted: nothing changes.
    elseif ADMITS[reason] then
      if not s.admitted then
        -- This call's first admission of the asset: the record will name it.
        s.admitted, s.first, s.call = true, i, call
        if s.suppressed_before and s.before.has then s.tail = s.before else s.tail = nil end
      end
      s.b = baseline_of(flags, t, lat, lon, heading, accuracy, events)
      s.acc = count(s.acc)
      s.write = 'set'
    elseif s.b.has then
      -- A suppression counts against a record; with none (a first ping
      -- dated ahead) there is nothing to count it in.
      if not s.admitted then s.suppressed_before = true end
      s.sup = count(s.sup)
      if s.write ~= 'set' then s.write = 'keep' end
    elseif not s.admitted then
      s.suppressed_before = true
    end
    out[i] = reply(reason, dt, m, turn, s.acc, s.sup)
  end
end

for _, key in ipairs(order) do
  local s = states[key]
  if not s.resend then
    if s.write == 'set' then
      redis.call('SET', key, encode(s), 'EX', ttl)
    elseif s.write == 'keep' then
      -- Only the suppressed count changed: the TTL still runs from the
      -- last admission.
      redis.call('SET', key, encode(s), 'KEEPTTL')
    elseif s.write == 'del' then
      redis.call('DEL', key)
    end
  end
end
return table.concat(out)
