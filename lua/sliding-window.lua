-- Sliding-window dedup: read, decide and write for a batch of operations,
-- as one unit that no other client can interleave. Two workers handed the
-- same redelivery cannot both admit it, because the second one's read sees
-- the first one's write.
--
-- The loader (src/redis/scripts.ts) puts lines before this text that name
-- what both sides share, so that neither spells a number: first
-- `local ADMITS, AHEAD, FIRST, ... = { false, true, ... }, 1, 2, ...`,
-- whether each reason code of src/core/window/window-reasons.ts admits (by
-- code) and each code in a local named after its reason; then
-- `local RESET_ASSET, RESET_ALL = 2, 3`, the operation codes; then the
-- binary formats of src/redis/wire.ts (the struct format of each argument,
-- reply and record, their sizes, their flag bits, the steps the record
-- counts in). The rule is decideWindow of
-- src/core/window/sliding-window.ts; the contract and parity tests hold the
-- two to the same answers.
--
-- KEYS[1]      the epoch key of this call's hash slot (see "Resets").
-- KEYS[1+i]    the bucket (a hash) holding the record of operation i's
--              asset. Every key of one call hashes to one slot (none has a
--              tag on one server; on a Cluster each starts with its
--              Cluster bucket's tag), so the script runs unchanged on Redis
--              Cluster.
-- KEYS[1+n+i]  sent only while earlier builds' records may still be read:
--              the key they kept operation i's record in; and then
-- KEYS[2+2n]   the layout mark of the slot (see "Earlier builds").
-- ARGV[1]      the rule (RULE): minSeconds, minMetres, minHeadingDegrees
--              (0: off), maxAheadSeconds (negative: off), ttlSeconds; then
--              issue 29's: mode (VALUE_MODE: value mode, else position),
--              deadband, deadbandPercent (1: the deadband is a percentage
--              of the baseline's value), maxSpeedKmh (0: the jump guard is
--              off), relocateAfterSeconds and relocateAfterPings (the
--              client resolves their defaults, so both sides compare one
--              double).
-- ARGV[2]      this call (CALL): the Node-RED host's clock in epoch
--              milliseconds (the clock guard's "now", and the clock records
--              expire by: the host's, not Redis TIME, so that every store
--              and every test reads one clock), and 48 random bits naming
--              the call (see "Resent calls").
-- ARGV[3]      the n operations, OP_BYTES each (OP): the operation (a ping,
--              RESET_ASSET, RESET_ALL), flags (HAS_HEADING: the ping has a
--              heading, RETRY: the ping is a retried message, NO_FIX_FLAG
--              or POOR_FIX_FLAG: the fix's quality, which the client
--              decides when it reads the ping, as it does the event
--              fingerprint), the 48-bit fingerprint of the ping's event
--              values, then t (epoch milliseconds), lat, lon, heading,
--              accuracy and value (value mode's reading; NaN when the ping
--              has none) as doubles.
-- ARGV[3+i]    operation i's asset id: its record's field in its bucket. An
--              asset may appear more than once; its operations run in the
--              order given.
--
-- Reply: one string, one REPLY per operation, in order: the reason code (0
-- for a reset), dtSeconds, distanceMetres, headingChange, the asset's
-- accepted and suppressed counts, which of the four measures are present
-- (HAS_DT, HAS_DISTANCE, HAS_TURN, HAS_CHANGE), and valueChange (value
-- mode: the reading minus the baseline's value); then a STATUS byte,
-- LEGACY_READS when the client is to go on sending KEYS[2+n+i].
--
-- The rule, in decideWindow's order (the first that applies wins):
--   position mode   ahead, no-fix, poor-fix, first, replayed, late,
--                   jump | relocated, elapsed, event, moved, turned, window
--   value mode      ahead, first, replayed, late, elapsed, event,
--                   changed, unchanged
-- No-fix and poor-fix come before first, so a ping that is no position
-- never becomes the baseline; on an asset with no record it writes none,
-- as ahead. The jump guard and its candidate are judgeJump's: see there.
--
-- THE RECORD (record_format(flags)) is the value of the asset id's
-- field in its bucket. It is written with HSET when a ping is admitted
-- and, when only the suppressed count or the jump candidate changed,
-- written again with its expiry as it was (what KEEPTTL did for the
-- string key of earlier builds: a suppression neither extends nor
-- shortens the record's life), so it expires ttlSeconds after the last
-- admission. Its fields:
--
--   expires    when it expires, host clock, epoch ms: from then on it reads
--              as absent, whether or not a sweep has removed it yet
--   flags      REC_FLEET: events, heading, accuracy follow; REC_BEFORE: a
--              TAIL is kept; REC_FRACTION: t is a double, not a whole
--              number of milliseconds; REC_VALUE: the baseline's value
--              follows (issue 29's value mode); REC_CANDIDATE: a jump
--              candidate is kept; REC_ORIGIN: lat and lon are both 0 and
--              left out (every record of value mode, whose pings have no
--              position: the value takes their place); any other bit: a
--              kind of record this script does not know, read as absent
--   epoch      the slot's epoch (mod EPOCH_MODULUS) it was written in
--   t          the last admitted ping's time, epoch ms, exact
--   lat, lon   its position in 1 / DEGREE_STEPS degrees (about 1 cm), but
--              with REC_ORIGIN
--   accepted, suppressed   the asset's counts (at most MAX_COUNT)
--   call       the last call that admitted a ping of this asset
--   first      the index i of that call's first admitted ping of the asset
--   and with REC_FLEET: events (the admitted ping's event fingerprint),
--   heading (in 1 / HEADING_STEPS degrees, NO_HEADING when it had none),
--   accuracy (in 1 / ACCURACY_STEPS m, at most MAX_ACCURACY_STEP steps)
--   and with REC_VALUE: value (the baseline's reading, an exact double)
--   and last, always, the suppressed count.
--
-- With REC_BEFORE, the field BEFORE_FIELD .. id of the bucket holds a TAIL
-- (t, lat, lon, events, heading, accuracy): the asset's baseline from
-- before the call named by `call`, kept when that call suppressed a ping of
-- the asset before its first admission (see below); then the baseline's
-- VALUE, and its jump CANDIDATE, when it had them (the field's length
-- says which). Both stores keep the baseline at this precision, so their
-- decisions agree bit for bit.
--
-- With REC_CANDIDATE, the field CANDIDATE_FIELD .. id holds the jump
-- CANDIDATE (t, lat and lon in the record's steps, its count of agreeing
-- jumps, and the call that set it): in the record it would take a fleet
-- record past hash-max-listpack-value and its whole bucket out of the
-- listpack encoding, and a candidate is rare and short-lived. It is read
-- only when the record says it is there and the jump guard is on; without
-- the jump guard a candidate is neither read nor written (an admission
-- drops it).
--
-- BUCKETS. A record lives in one of many hashes, chosen by a hash of its
-- asset id (src/redis/key-names.ts), so that Redis keeps each in its
-- compact encoding: a few bytes per field beyond the field's own, where a
-- key of its own costs about a hundred. Reading a record needs nothing but
-- the record. A bucket is kept (PEXPIRE) a period past the end of the
-- latest period (a PERIODS_PER_TTL-th of the TTL) a record of it expires
-- in, so that no record outlives its bucket and a bucket nobody writes goes
-- away by itself. A write that puts a record into a bucket, or moves a
-- record's expiry into another period, names that period in a field
-- (PERIOD_FIELD and a PERIOD: the TTL and the period's index), and the
-- bucket in its own field (BUCKET_FIELD), in the same HSET; its count of
-- fields added says whether the bucket is new (it gets its expiry) or the
-- write is the bucket's first of that period: only then is the bucket's
-- expiry renewed and the bucket swept: its records that have expired or
-- are of another epoch, the tails they leave, and the fields of earlier
-- periods are deleted (one HGETALL, one HDEL). A bucket so holds at most
-- about a period's worth of expired records, and neither renewal nor sweep
-- costs a read on the way to a decision.
--
-- Resets. The epoch key holds an EPOCH: a counter and the call that last
-- raised it; it never expires. A record written in another epoch reads as
-- absent (and is swept out of its bucket in time). "Reset every asset"
-- raises the counter: O(1) on the server however many records exist,
-- atomic with respect to every decision (a decision runs wholly before or
-- wholly after it), and a record written after it can never be lost to it,
-- which a SCAN and UNLINK running alongside new writes could not promise.
-- On a Cluster each Cluster bucket's slot has its own epoch key, and the
-- client sends the reset to every one. "Reset the asset" deletes its
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
-- why it is kept in a TAIL in that case, and only then. Admitted pings are
-- reported as 'replayed'; counts are reported as they stand. A resend is
-- recognised until another call admits a ping of the asset. A reset of
-- every asset raises the epoch once per call, resent or not.
--
-- The value and the candidate from before the call are in the tail with
-- the baseline; an admission clears the candidate in position mode, so
-- the chain after `first` starts without one, as the first run's did.
--
-- A call that admitted no ping of an asset changed nothing the rule reads
-- but, perhaps, the jump candidate: a resend decides its pings again
-- against the same baseline, to the same answers, and counts them again.
-- Only jumps could be answered otherwise, counted from the candidate the
-- first run left, into a relocation; so a candidate names the call that
-- set it, and when it names this call the run is a resend for the asset
-- too (an echo): every jump is a jump (the first run relocated nothing),
-- the counts are as they stand, and nothing is written.
--
-- A retried message (RETRY: the node lost the decision of this very
-- message and a Catch flow sent it again) whose ping is exactly the stored
-- baseline was admitted by the lost attempt: it is 'replayed' too.
--
-- Earlier builds kept a record per asset in a string key of its own
-- (LEGACY_RECORD, in the slot epoch mod LEGACY_EPOCH_MODULUS, expiring by
-- its TTL: docs/redis.md, "Upgrading from a key per record"). The first call of this layout in a slot writes the slot's
-- layout mark: its time, or 0 when the database was empty. While a TTL has
-- not passed since, a record missing from its bucket is read from the old
-- key (which the client sends then), and a decision against it writes the
-- record into its bucket and deletes the old key; a reset of the asset
-- deletes both. The reply says when the client may stop sending old keys.
-- An old key read is one of the plain forms (LEGACY_RECORD, with or
-- without its tail); one of issue 29's extended forms (with a value or a
-- jump candidate) reads as absent, and is deleted when the asset is written.

-- HOW IT IS WRITTEN. Redis runs this body once per call, and a call's time
-- is the redis.call()s and the Lua work per ping (bench/script-cost.ts
-- measures it), so: a record is read with one HGET and unpacked with one
-- struct.unpack, and written with one HSET (of the record as read with its
-- last field changed, when only the suppressed count changed); the script
-- defines no functions (a closure made per call costs an allocation per
-- local it uses, and a function call per ping a frame) and makes no table
-- or string per ping that it can avoid: one table per asset, built whole by
-- one constructor (a table that grows field by field is rehashed as it
-- grows) of at most sixteen fields (Lua makes the next size up twice as
-- large), holding the baseline as the record's integer steps; issue 29's
-- value and candidate, which most assets do not have, are kept by asset id
-- in tables of their own, made when first needed. A header
-- field read for every record (its epoch and the bucket's expiry in the
-- place of the record's own) cost about a fifth more per ping in
-- bench/script-cost.ts.

local min_s, min_m, min_turn, max_ahead, ttl, mode, deadband, deadband_pct, max_speed, relocate_s, relocate_n =
  struct.unpack(RULE, ARGV[1])
local now, call = struct.unpack(CALL, ARGV[2])
local ops = ARGV[3]
local keys, argv = KEYS, ARGV
local n_ops = #argv - 3
-- Whether the client sent the old keys (KEYS[1+n+i]) and the layout mark.
local legacy_sent = #keys == 2 + 2 * n_ops

-- From the prelude: RESET_ASSET, RESET_ALL (any other op is a ping), and
-- every format, size, flag and step (redis/wire).

local R = 6371008.8
local RAD = math.pi / 180
local NAN = 0 / 0
local sin, cos, asin, sqrt, floor, ceil, abs, min, max = math.sin, math.cos, math.asin, math.sqrt, math.floor, math.ceil, math.abs, math.min, math.max
local spread = unpack
local pack, unpack, sub, byte = struct.pack, struct.unpack, string.sub, string.byte
local call_redis = redis.call

-- A kind of record's struct format (RECORD_FORMATS), taken out of the
-- prelude's string the first time this call meets that kind.
local formats_met = {}
local function record_format(flags)
  local format = formats_met[flags]
  if not format then
    local at = flags * RECORD_FORMAT_WIDTH
    format = sub(RECORD_FORMATS, at + 1, at + RECORD_FORMAT_WIDTH)
    formats_met[flags] = format
  end
  return format
end

if #ops ~= n_ops * OP_BYTES or not (legacy_sent or #keys == 1 + n_ops) then
  return redis.error_reply('sliding-window: ' .. #ops .. ' bytes of operations, ' .. #keys .. ' keys and ' .. n_ops .. ' ids')
end

local clock_guard, ahead_ms = max_ahead >= 0, max_ahead * 1000
local value_mode, by_percent, jump_guard = mode == VALUE_MODE, deadband_pct ~= 0, max_speed > 0
local ttl_ms = ttl * 1000
-- When a record admitted in this call expires.
local expires_at = ceil(now + ttl_ms)

-- The epoch of this slot, and whether this very call raised it last.
local epoch, epoch_call = 0, -1
local raw_epoch = call_redis('GET', keys[1])
if raw_epoch and #raw_epoch == EPOCH_BYTES then epoch, epoch_call = unpack(EPOCH, raw_epoch) end
-- The epoch as records hold it.
local epoch_field = epoch % EPOCH_MODULUS

-- Whether a record missing from its bucket may still be in its old key.
local legacy = legacy_sent and old_keys_live(keys[2 + 2 * n_ops], now, ttl_ms)

-- An asset's state during this call, made on its first operation: its
-- baseline (`has`, `t`, `events` and the record's steps `lat_q`, `lon_q`,
-- `heading_q`, `accuracy_q`), its counts, what the record says about the
-- call that last admitted a ping (`call`, `first`), its `expires` when
-- live (false when read from its old key), and `raw`, the record as read.
local states, order, out = {}, {}, {}
-- Beside `order`, the bucket of each asset; and, by asset id, what few
-- assets have: the baseline from before this call to keep as a tail, that
-- this run is a resend for the asset, its key of an earlier build when
-- a record was read from it or the asset was reset. (An asset's table is
-- kept to sixteen fields: Lua makes the next size up twice as large.)
local buckets, tails, resends, olds = {}, false, false, false
-- Issue 29's, by asset id, made when first needed: the baseline's value
-- (none: no value), the jump candidate ({ t, lat_q, lon_q, count, call };
-- false or none: no candidate), the candidate's field as read (kept for a
-- tail, and to write it only when it changed), and the assets whose
-- candidate names this call (see "Resent calls").
local vals, cands, cands_read, echoes = false, false, false, false
-- Whether this run raised the epoch (a resend finds it raised by its first run).
local raised = false
local reset_reply = nil

for i = 1, n_ops do
  local op, flags, events, t, lat, lon, heading, accuracy, value = unpack(OP, ops, (i - 1) * OP_BYTES + 1)

  if op == RESET_ALL then
    if epoch_call ~= call then
      epoch, epoch_call, raised = epoch + 1, call, true
      epoch_field = epoch % EPOCH_MODULUS
      call_redis('SET', keys[1], pack(EPOCH, epoch, call))
    end
    -- Every asset this call has touched is gone as well. A resend whose
    -- first run made this reset re-derives only its own assets: a record
    -- another call has written since is newer than the reset, and stays.
    for j = 1, #order do
      local id = order[j]
      local s = states[id]
      if raised or (resends and resends[id]) then
        s.has, s.acc, s.sup, s.write = false, 0, 0, 'del'
        if vals then vals[id] = nil end
        if cands then cands[id] = false end
      end
    end
    reset_reply = reset_reply or pack(REPLY, 0, 0, 0, 0, 0, 0, 0, 0)
    out[i] = reset_reply
  else
    local id = argv[3 + i]
    local s = states[id]
    local resend = false
    if s then
      resend = resends and resends[id] or false
    else
      local bkey = keys[1 + i]
      s = { has = false, t = 0, lat_q = 0, lon_q = 0, heading_q = NO_HEADING, accuracy_q = 0, events = 0,
            acc = 0, sup = 0, call = false, first = 0, expires = 0, raw = false,
            write = false, admitted = false, suppressed_before = false }
      local raw = call_redis('HGET', bkey, id)
      if raw then
        local rflags = byte(raw, RECORD_FLAGS_AT) or REC_KINDS
        -- Kept even when it is not live: a tail beside it goes with it.
        s.raw = raw
        if byte(RECORD_SIZES, rflags + 1) == #raw then
          local expires, _, rec_epoch, r_t, lat_q, lon_q, acc, rcall, first, r_events, heading_q, accuracy_q, sup
          local r_value = false
          if rflags >= REC_VALUE then
            -- Issue 29's bits, or a record at 0,0 (value mode's): seldom
            -- set in position mode; its fields by position, in the order of
            -- THE RECORD above.
            local f = { unpack(record_format(rflags), raw) }
            local k = 3
            expires, rec_epoch, r_t = f[1], f[k], f[k + 1]
            k = k + 1
            if rflags >= REC_ORIGIN then lat_q, lon_q = 0, 0 else lat_q, lon_q, k = f[k + 1], f[k + 2], k + 2 end
            acc, rcall, first, k = f[k + 1], f[k + 2], f[k + 3], k + 3
            if rflags % (2 * REC_FLEET) >= REC_FLEET then
              r_events, heading_q, accuracy_q, k = f[k + 1], f[k + 2], f[k + 3], k + 3
            else
              r_events, heading_q, accuracy_q = 0, NO_HEADING, 0
            end
            if rflags % (2 * REC_VALUE) >= REC_VALUE then r_value, k = f[k + 1], k + 1 end
            sup = f[k + 1]
          elseif rflags % (2 * REC_FLEET) >= REC_FLEET then
            expires, _, rec_epoch, r_t, lat_q, lon_q, acc, rcall, first, r_events, heading_q, accuracy_q, sup = unpack(record_format(rflags), raw)
          else
            expires, _, rec_epoch, r_t, lat_q, lon_q, acc, rcall, first, sup = unpack(record_format(rflags), raw)
            r_events, heading_q, accuracy_q = 0, NO_HEADING, 0
          end
          if expires > now and rec_epoch == epoch_field then
            s.acc, s.sup, s.call, s.first, s.expires = acc, sup, rcall, first, expires
            if rcall == call then
              -- A resend: start from where the first run started (its
              -- value and candidate too, which the tail keeps with it).
              resend = true
              resends = resends or {}
              resends[id] = true
              if rflags % (2 * REC_BEFORE) >= REC_BEFORE then
                local before = call_redis('HGET', bkey, BEFORE_FIELD .. id)
                local blen = before and #before or 0
                local v_at, c_at = 0, 0
                if blen == TAIL_BYTES + VALUE_BYTES or blen == TAIL_BYTES + VALUE_BYTES + CANDIDATE_BYTES then v_at = TAIL_BYTES + 1 end
                if blen == TAIL_BYTES + CANDIDATE_BYTES then c_at = TAIL_BYTES + 1
                elseif blen == TAIL_BYTES + VALUE_BYTES + CANDIDATE_BYTES then c_at = TAIL_BYTES + VALUE_BYTES + 1 end
                if blen == TAIL_BYTES or v_at > 0 or c_at > 0 then
                  r_t, lat_q, lon_q, r_events, heading_q, accuracy_q = unpack(TAIL, before)
                  s.has, s.t, s.lat_q, s.lon_q, s.events, s.heading_q, s.accuracy_q = true, r_t, lat_q, lon_q, r_events, heading_q, accuracy_q
                  if v_at > 0 then
                    vals = vals or {}
                    vals[id] = unpack(VALUE, before, v_at)
                  end
                  if c_at > 0 and jump_guard then
                    local c_t, c_lat_q, c_lon_q, c_count, c_call = unpack(CANDIDATE, before, c_at)
                    cands = cands or {}
                    cands[id] = { t = c_t, lat_q = c_lat_q, lon_q = c_lon_q, count = c_count, call = c_call }
                  end
                end
              end
            else
              s.has, s.t, s.lat_q, s.lon_q, s.events, s.heading_q, s.accuracy_q = true, r_t, lat_q, lon_q, r_events, heading_q, accuracy_q
              if r_value then
                vals = vals or {}
                vals[id] = r_value
              end
              if jump_guard and rflags >= REC_CANDIDATE and rflags % (2 * REC_CANDIDATE) >= REC_CANDIDATE then
                local raw_c = call_redis('HGET', bkey, CANDIDATE_FIELD .. id)
                if raw_c and #raw_c == CANDIDATE_BYTES then
                  local c_t, c_lat_q, c_lon_q, c_count, c_call = unpack(CANDIDATE, raw_c)
                  cands, cands_read = cands or {}, cands_read or {}
                  cands[id], cands_read[id] = { t = c_t, lat_q = c_lat_q, lon_q = c_lon_q, count = c_count, call = c_call }, raw_c
                  -- This call set the candidate and admitted no ping of the asset: a resend (see "Resent calls").
                  -- (Value mode never sets one: a candidate it finds is from position mode.)
                  if c_call == call and not value_mode then
                    echoes = echoes or {}
                    echoes[id] = true
                  end
                end
              end
            end
          end
        end
      elseif legacy then
        local old_key = keys[1 + n_ops + i]
        local old = call_redis('GET', old_key)
        if old then
          olds = olds or {}
          olds[id] = old_key
          local len = #old
          if len == LEGACY_RECORD_BYTES or len == LEGACY_RECORD_BYTES + TAIL_BYTES then
            local r_t, lat_q, lon_q, acc, sup, rcall, first, r_events, heading_q, accuracy_q, rec_epoch = unpack(LEGACY_RECORD, old)
            if rec_epoch == epoch % LEGACY_EPOCH_MODULUS then
              -- It expires as the old key would have (read only if a suppression keeps it).
              s.acc, s.sup, s.call, s.first, s.expires = acc, sup, rcall, first, false
              s.has, s.t, s.lat_q, s.lon_q, s.events, s.heading_q, s.accuracy_q = true, r_t, lat_q, lon_q, r_events, heading_q, accuracy_q
            end
          end
        end
      end
      states[id] = s
      order[#order + 1] = id
      buckets[#order] = bkey
    end

    if op == RESET_ASSET then
      s.has, s.acc, s.sup, s.write = false, 0, 0, 'del'
      if vals then vals[id] = nil end
      if cands then cands[id] = false end
      if legacy then
        olds = olds or {}
        olds[id] = keys[1 + n_ops + i]
      end
      reset_reply = reset_reply or pack(REPLY, 0, 0, 0, 0, 0, 0, 0, 0)
      out[i] = reset_reply
    else
      -- The rule: reason, dt, distance m, heading change turn, value change
      -- (nil where absent); `moved_c`: the ping changed the jump candidate.
      local reason, dt, m, turn, change
      local moved_c = false
      local echo = echoes and echoes[id]
      local has = s.has
      if has then dt = (t - s.t) / 1000 end
      if clock_guard and t - now > ahead_ms then
        reason = AHEAD
      elseif value_mode then
        local before = vals and vals[id] or NAN
        if not has then
          reason = FIRST
        elseif flags % (2 * RETRY) >= RETRY and s.t == t and before == value and s.events == events then
          reason, dt = REPLAYED, nil
        elseif dt <= 0 then
          reason = LATE
        else
          change = value - before
          if dt >= min_s then reason = ELAPSED
          elseif events ~= s.events then reason = EVENT
          else
            local size, band = abs(change), deadband
            if by_percent then band = abs(before) * deadband / 100 end
            -- A baseline without a value (written in position mode) is no reading to stay within a band of.
            if (size > 0 and size >= band) or before ~= before then reason = CHANGED else reason = UNCHANGED end
          end
        end
      -- flags % (2 * X) >= X: the X bit (Lua 5.1 has no bit operators); flags >= X first, as it is seldom set.
      elseif flags >= NO_FIX_FLAG and flags % (2 * NO_FIX_FLAG) >= NO_FIX_FLAG then
        reason = NO_FIX
      elseif flags >= POOR_FIX_FLAG and flags % (2 * POOR_FIX_FLAG) >= POOR_FIX_FLAG then
        reason = POOR_FIX
      elseif not has then
        reason = FIRST
      elseif flags % (2 * RETRY) >= RETRY and s.t == t and s.lat_q == floor(lat * DEGREE_STEPS + 0.5)
          and s.lon_q == floor(lon * DEGREE_STEPS + 0.5) and s.events == events then
        reason, dt = REPLAYED, nil
      elseif dt <= 0 then
        -- Late: suppress and leave the baseline where it is.
        reason = LATE
      else
        local b_lat = s.lat_q / DEGREE_STEPS
        local s_lat = sin((lat - b_lat) * RAD / 2)
        local s_lon = sin((lon - s.lon_q / DEGREE_STEPS) * RAD / 2)
        local h = s_lat * s_lat + cos(b_lat * RAD) * cos(lat * RAD) * s_lon * s_lon
        if h > 1 then h = 1 end
        m = 2 * R * asin(sqrt(h))
        local b_heading = s.heading_q
        if b_heading ~= NO_HEADING and flags % (2 * HAS_HEADING) >= HAS_HEADING then
          turn = abs(b_heading / HEADING_STEPS - heading)
          if turn >= 360 then turn = turn - 360 end
          if turn > 180 then turn = 360 - turn end
        end
        if jump_guard then
          -- The jump guard (judgeJump): after a silence a move is `relocated`;
          -- else a move too fast is a `jump`, and the candidate counts the
          -- jumps that agree. Every ping judged here that is none clears it.
          local c = cands and cands[id]
          local c_count, c_t = 0, 0
          if c then c_count, c_t = c.count, c.t end
          local clear = true
          if dt > relocate_s then
            if m >= min_m then reason = RELOCATED end
          elseif m >= min_m and m > accuracy + s.accuracy_q / ACCURACY_STEPS and m / dt * 3.6 > max_speed then
            local count = 1
            if c_count > 0 and t > c_t then
              local c_lat = c.lat_q / DEGREE_STEPS
              local sc_lat = sin((lat - c_lat) * RAD / 2)
              local sc_lon = sin((lon - c.lon_q / DEGREE_STEPS) * RAD / 2)
              local hc = sc_lat * sc_lat + cos(c_lat * RAD) * cos(lat * RAD) * sc_lon * sc_lon
              if hc > 1 then hc = 1 end
              local d = 2 * R * asin(sqrt(hc))
              if not (d >= min_m and d > accuracy and d / ((t - c_t) / 1000) * 3.6 > max_speed) then count = c_count + 1 end
            end
            if count >= relocate_n and not echo then
              reason = RELOCATED
            else
              reason, clear = JUMP, false
              -- Stored when its count, time or position differs, as the memory store does.
              local q_lat, q_lon = floor(lat * DEGREE_STEPS + 0.5), floor(lon * DEGREE_STEPS + 0.5)
              if (not c or count ~= c_count or t ~= c_t or q_lat ~= c.lat_q or q_lon ~= c.lon_q) and not echo then
                cands = cands or {}
                cands[id] = { t = t, lat_q = q_lat, lon_q = q_lon, count = count, call = call }
                moved_c = true
              end
            end
          end
          if clear and c and not echo then
            cands[id] = false
            moved_c = true
          end
        end
        if reason then
          -- A jump, or relocated: decided above.
        elseif dt >= min_s then reason = ELAPSED
        elseif events ~= s.events then reason = EVENT
        elseif m >= min_m and m > accuracy + s.accuracy_q / ACCURACY_STEPS then reason = MOVED
        elseif min_turn > 0 and turn and turn >= min_turn then reason = TURNED
        else reason = WINDOW end
      end

      -- Whether the ping becomes the baseline.
      local becomes = false
      if resend then
        if i == s.first or (ADMITS[reason] and reason ~= REPLAYED) then
          reason, dt, m, turn, change = REPLAYED, nil, nil, nil, nil
          becomes = true
          -- As the first run left it: an admission in position mode clears the candidate.
          if not value_mode and cands then cands[id] = false end
        end
      elseif echo then
        -- A resend of a call that only suppressed pings of the asset, one of
        -- them a jump that set the candidate: answered as the first run was
        -- (a jump is a jump again, never a relocation: the first run
        -- admitted nothing), with the counts as they stand, and nothing written.
      elseif reason == REPLAYED then
        -- A retried message the lost attempt had admitted: nothing changes.
      elseif ADMITS[reason] then
        if not s.admitted then
          -- This call's first admission of the asset: the record will name it,
          -- and keep the baseline from before the call (still the state's,
          -- which only an admission changes) if a ping of the asset was
          -- suppressed against it first, with the value and the candidate
          -- the record had (as read: a jump before may have moved the
          -- candidate since). (A record was read when the state names a
          -- call: a resend never comes here.)
          local had = s.call
          s.admitted, s.first, s.call = true, i, call
          if s.suppressed_before and had then
            local tail = pack(TAIL, s.t, s.lat_q, s.lon_q, s.events, s.heading_q, s.accuracy_q)
            local raw = s.raw
            local rflags = byte(raw, RECORD_FLAGS_AT)
            if rflags >= REC_VALUE and rflags % (2 * REC_VALUE) >= REC_VALUE then
              tail = tail .. sub(raw, #raw - COUNT_BYTES - VALUE_BYTES + 1, #raw - COUNT_BYTES)
            end
            local c_raw = cands_read and cands_read[id]
            if c_raw then tail = tail .. c_raw end
            tails = tails or {}
            tails[id] = tail
          end
        end
        becomes = true
        if s.acc < MAX_COUNT then s.acc = s.acc + 1 end
        s.write = 'set'
      elseif s.has then
        -- A suppression counts against a record; with none (a first ping
        -- dated ahead, or with no fix) there is nothing to count it in.
        if not s.admitted then s.suppressed_before = true end
        if s.sup < MAX_COUNT then s.sup = s.sup + 1 end
        -- A changed candidate rewrites the record, keeping its expiry; else the count alone.
        if moved_c and s.write ~= 'set' then s.write = 'candidate'
        elseif not s.write then s.write = 'keep' end
      elseif not s.admitted then
        s.suppressed_before = true
      end
      if becomes then
        -- At the record's precision (as core/window/sliding-window's stored* functions).
        local accuracy_q = 0
        if accuracy > 0 then accuracy_q = min(floor(accuracy * ACCURACY_STEPS + 0.5), MAX_ACCURACY_STEP) end
        local heading_q = NO_HEADING
        if flags % (2 * HAS_HEADING) >= HAS_HEADING then
          heading_q = floor(heading * HEADING_STEPS + 0.5)
          if heading_q >= 360 * HEADING_STEPS then heading_q = heading_q - 360 * HEADING_STEPS end
        end
        s.has, s.t, s.events, s.heading_q, s.accuracy_q = true, t, events, heading_q, accuracy_q
        s.lat_q, s.lon_q = floor(lat * DEGREE_STEPS + 0.5), floor(lon * DEGREE_STEPS + 0.5)
        -- The ping's value is the baseline's (none: NaN, as a position has).
        if value == value then
          vals = vals or {}
          vals[id] = value
        elseif vals then
          vals[id] = nil
        end
      end

      local present = 0
      if dt then present = HAS_DT else dt = 0 end
      if m then present = present + HAS_DISTANCE else m = 0 end
      if turn then present = present + HAS_TURN else turn = 0 end
      if change then present = present + HAS_CHANGE else change = 0 end
      out[i] = pack(REPLY, reason, dt, m, turn, s.acc, s.sup, present, change)
    end
  end
end

-- The writes, asset by asset, in the order the call first met them.
-- Periods (see BUCKETS): their length, the period records admitted in
-- this call expire in, and (made when first needed) what the field naming
-- a period of this TTL starts with.
local period_ms = ttl_ms / PERIODS_PER_TTL
local admitted_period = floor(expires_at / period_ms)
local period_head = false
-- The buckets swept in this call.
local swept = false
for j = 1, #order do
  local id = order[j]
  local s = states[id]
  local write = s.write
  if write and not (resends and resends[id]) then
    local bkey = buckets[j]
    local tail = tails and tails[id]
    -- Whether the record as read, live or not, has a tail beside it.
    local had_tail, had_cand = false, false
    if s.raw and write ~= 'keep' then
      local rflags = byte(s.raw, RECORD_FLAGS_AT) or 0
      had_tail = rflags % (2 * REC_BEFORE) >= REC_BEFORE
      had_cand = rflags % (2 * REC_CANDIDATE) >= REC_CANDIDATE
    end
    -- The jump candidate the record is to have (false: none).
    local cand = cands and cands[id]
    if write == 'del' then
      if had_tail and had_cand then call_redis('HDEL', bkey, id, BEFORE_FIELD .. id, CANDIDATE_FIELD .. id)
      elseif had_tail then call_redis('HDEL', bkey, id, BEFORE_FIELD .. id)
      elseif had_cand then call_redis('HDEL', bkey, id, CANDIDATE_FIELD .. id)
      else call_redis('HDEL', bkey, id) end
    else
      local expires, rflags
      if write == 'set' then
        expires, rflags = expires_at, 0
        if tail then rflags = REC_BEFORE end
      else
        -- Only the suppressed count or the candidate changed: the record
        -- expires when it did (the KEEPTTL of earlier builds), its tail kept.
        expires, rflags = s.expires, 0
        if had_tail then rflags = REC_BEFORE end
        if not expires then
          -- Read from its old key: it expires as that key would have.
          expires = ceil(now + max(call_redis('PTTL', olds and olds[id]), 1))
          rflags = 0
        end
      end
      local record
      if write == 'keep' and s.expires then
        -- The record as read with its last field, the suppressed count, changed.
        local raw = s.raw
        record = sub(raw, 1, #raw - COUNT_BYTES) .. pack(COUNT, s.sup)
      else
        local t = s.t
        if t % 1 ~= 0 or t < 0 or t > MAX_WHOLE_T then rflags = rflags + REC_FRACTION end
        if cand then rflags = rflags + REC_CANDIDATE end
        local v = vals and vals[id]
        local origin = s.lat_q == 0 and s.lon_q == 0
        if v or origin then
          -- A value, or a position of 0,0 (value mode's records have both):
          -- the fields in THE RECORD's order, lat and lon left out at 0,0.
          local fields = { expires, 0, epoch_field, t }
          if origin then
            rflags = rflags + REC_ORIGIN
          else
            fields[#fields + 1] = s.lat_q
            fields[#fields + 1] = s.lon_q
          end
          fields[#fields + 1] = s.acc
          fields[#fields + 1] = s.call
          fields[#fields + 1] = s.first
          if s.events ~= 0 or s.heading_q ~= NO_HEADING or s.accuracy_q ~= 0 then
            rflags = rflags + REC_FLEET
            fields[#fields + 1] = s.events
            fields[#fields + 1] = s.heading_q
            fields[#fields + 1] = s.accuracy_q
          end
          if v then
            rflags = rflags + REC_VALUE
            fields[#fields + 1] = v
          end
          fields[#fields + 1] = s.sup
          fields[2] = rflags
          record = pack(record_format(rflags), spread(fields))
        elseif s.events ~= 0 or s.heading_q ~= NO_HEADING or s.accuracy_q ~= 0 then
          rflags = rflags + REC_FLEET
          record = pack(record_format(rflags), expires, rflags, epoch_field, t, s.lat_q, s.lon_q, s.acc, s.call, s.first,
            s.events, s.heading_q, s.accuracy_q, s.sup)
        else
          record = pack(record_format(rflags), expires, rflags, epoch_field, t, s.lat_q, s.lon_q, s.acc, s.call, s.first, s.sup)
        end
      end
      -- The record names its expiry's period when it is new to the bucket
      -- or its expiry moves into another period; a kept one never does.
      local period = false
      local old_expires = s.expires
      if expires ~= old_expires then
        if write == 'set' then
          if not old_expires or old_expires == 0 or admitted_period ~= floor(old_expires / period_ms) then period = admitted_period end
        else
          period = floor(expires / period_ms)
        end
      end
      if period then
        -- HSET counts the fields it adds: the record when none was there,
        -- the tail when none was there, the period's field when this is the
        -- bucket's first write of the period, and the bucket's own field
        -- when the bucket is new (and then the period's too).
        local field = PERIOD_FIELD .. pack(PERIOD, ttl, period)
        period_head = period_head or sub(field, 1, PERIOD_HEAD_BYTES)
        local added
        if tail then added = call_redis('HSET', bkey, id, record, BEFORE_FIELD .. id, tail, field, '', BUCKET_FIELD, '')
        else added = call_redis('HSET', bkey, id, record, field, '', BUCKET_FIELD, '') end
        if not s.raw then added = added - 1 end
        if tail and not had_tail then added = added - 1 end
        -- Kept a period past the end of the period.
        local kept = ceil((period + 2) * period_ms - now)
        if added == 2 then
          call_redis('PEXPIRE', bkey, kept)
        elseif added == 1 then
          -- Another TTL's period may have it kept longer: never shortened (PTTL
          -- first, not PEXPIRE's GT, which Redis has only since 7.0).
          if call_redis('PTTL', bkey) < kept then call_redis('PEXPIRE', bkey, kept) end
          swept = swept or {}
          if not swept[bkey] then
            swept[bkey] = true
            local all = call_redis('HGETALL', bkey)
            local dead, live = {}, {}
            for k = 1, #all, 2 do
              local name, value = all[k], all[k + 1]
              if byte(name, 1) ~= OWN_FIELD_BYTE then
                local f = byte(value, RECORD_FLAGS_AT) or REC_KINDS
                -- A record of a kind this script knows; another kind is left to the release that wrote it.
                if byte(RECORD_SIZES, f + 1) == #value then
                  local e, _, rec_epoch = unpack(record_format(f), value)
                  if e <= now or rec_epoch ~= epoch_field then dead[#dead + 1] = name
                  elseif f % (2 * REC_BEFORE) >= REC_BEFORE or f >= REC_CANDIDATE then live[name] = f end
                end
              elseif name ~= field and sub(name, 1, #period_head) == period_head then
                -- An earlier period's field of this TTL (those of another TTL are left to it).
                dead[#dead + 1] = name
              end
            end
            for k = 1, #all, 2 do
              local name = all[k]
              -- A tail or a candidate whose record has gone, or no longer keeps one.
              local head = sub(name, 1, #BEFORE_FIELD)
              if head == BEFORE_FIELD then
                local f = live[sub(name, #BEFORE_FIELD + 1)]
                if not f or f % (2 * REC_BEFORE) < REC_BEFORE then dead[#dead + 1] = name end
              elseif head == CANDIDATE_FIELD then
                local f = live[sub(name, #CANDIDATE_FIELD + 1)]
                if not f or f < REC_CANDIDATE then dead[#dead + 1] = name end
              end
            end
            for from = 1, #dead, 1000 do call_redis('HDEL', bkey, spread(dead, from, min(from + 999, #dead))) end
          end
        end
      elseif tail then
        call_redis('HSET', bkey, id, record, BEFORE_FIELD .. id, tail)
      else
        call_redis('HSET', bkey, id, record)
      end
      -- A tail from an earlier call that this record no longer needs.
      if write == 'set' and not tail and had_tail then
        call_redis('HDEL', bkey, BEFORE_FIELD .. id)
      end
      -- The candidate's own field, written only when it changed (a 'keep'
      -- leaves it as it is: a changed candidate makes the write 'candidate').
      if write ~= 'keep' then
        if cand then
          local c_raw = pack(CANDIDATE, cand.t, cand.lat_q, cand.lon_q, cand.count, cand.call)
          if not had_cand or c_raw ~= (cands_read and cands_read[id]) then call_redis('HSET', bkey, CANDIDATE_FIELD .. id, c_raw) end
        elseif had_cand then
          call_redis('HDEL', bkey, CANDIDATE_FIELD .. id)
        end
      end
    end
    -- A record read from, or reset in, its old key is in its bucket now (or gone).
    local old = olds and olds[id]
    if old then call_redis('DEL', old) end
  end
end

local status = 0
if legacy then status = LEGACY_READS end
out[n_ops + 1] = pack(STATUS, status)
return table.concat(out)
