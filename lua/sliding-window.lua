-- Sliding-window dedup: read, decide and write for a batch of operations,
-- as one unit that no other client can interleave. Two workers handed the
-- same redelivery cannot both admit it, because the second one's read sees
-- the first one's write.
--
-- The loader (src/redis/scripts.ts) puts lines before this text that name
-- what both sides share, so that neither spells a number: first
-- `local REASON, ADMITS = { ahead = 1, first = 2, ... }, { [2] = true, ... }`,
-- the reason codes of src/core/window/window-reasons.ts and the set of those
-- that admit; then `local RESET_ASSET, RESET_ALL = 2, 3`, the operation
-- codes; then the binary formats of src/redis/wire.ts (the struct format
-- of each argument, reply and record, their sizes, their flag bits, the
-- steps the record counts in). The rule is decideWindow of
-- src/core/window/sliding-window.ts; the contract and parity tests hold the
-- two to the same answers.
--
-- KEYS[1]    the epoch key of this call's hash slot (see "Resets").
-- KEYS[1+i]  the record of the asset of operation i. Every key of one call
--            hashes to one slot (the asset id is a hash tag, and so is the
--            epoch key's suffix), so the script runs unchanged on Redis
--            Cluster. An asset may appear more than once; its operations
--            run in the order given.
-- ARGV[1]    the rule (RULE): minSeconds, minMetres, minHeadingDegrees
--            (0: off), maxAheadSeconds (negative: off), ttlSeconds; then
--            issue 29's: mode (VALUE_MODE: value mode, else position),
--            deadband, deadbandPercent (1: the deadband is a percentage of
--            the baseline's value), maxSpeedKmh (0: the jump guard is off),
--            relocateAfterSeconds and relocateAfterPings (the client
--            resolves their defaults, so both sides compare one double).
-- ARGV[2]    this call (CALL): the Node-RED host's clock in epoch
--            milliseconds (the clock guard's "now": the host's, not Redis
--            TIME, so that every store and every test reads one clock), and
--            48 random bits naming the call (see "Resent calls").
-- ARGV[3]    the operations, OP_BYTES each (OP): the operation (a ping,
--            RESET_ASSET, RESET_ALL), flags (HAS_HEADING: the ping has a
--            heading, RETRY: the ping is a retried message, NO_FIX_FLAG or
--            POOR_FIX_FLAG: the fix's quality, which the client decides
--            when it reads the ping, as it does the event fingerprint), the
--            48-bit fingerprint of the ping's event values, then t (epoch
--            milliseconds), lat, lon, heading, accuracy and value (value
--            mode's reading; NaN when the ping has none) as doubles.
--
-- Reply: one string, one REPLY per operation, in order: the reason code (0
-- for a reset), dtSeconds, distanceMetres, headingChange, the asset's
-- accepted and suppressed counts, which of the four measures are present
-- (HAS_DT, HAS_DISTANCE, HAS_TURN, HAS_CHANGE), and valueChange (value
-- mode: the reading minus the baseline's value).
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
-- THE RECORD (RECORD, RECORD_BYTES; src/redis/wire.ts says why that size)
-- is written with SET ... EX ttlSeconds when a ping is admitted and, when
-- only the suppressed count changed, that count alone with SETRANGE at
-- SUPPRESSED_AT (which keeps the TTL); when a suppressed ping changed the
-- jump candidate (a jump, or the first ping after jumps that is none), it
-- is written whole with SET ... KEEPTTL (Redis 6.0 and later). So it
-- expires ttlSeconds after the last admission. Its fields:
--
--   t          the last admitted ping's time, epoch ms, exact
--   lat, lon   its position in 1 / DEGREE_STEPS degrees (about 1 cm)
--   accepted, suppressed   the asset's counts (at most MAX_COUNT)
--   call       the last call that admitted a ping of this asset
--   first      the index i of that call's first admitted ping of the asset
--   events     the admitted ping's event fingerprint
--   heading    in 1 / HEADING_STEPS degrees, NO_HEADING when it had none
--   accuracy   in 1 / ACCURACY_STEPS m (at most MAX_ACCURACY_STEP steps)
--   epoch      the slot's epoch (mod EPOCH_MODULUS) the record was written in
--
-- followed, sometimes, by a TAIL (t, lat, lon, events, heading, accuracy,
-- the record's bytes at TAIL_CUTS): the asset's baseline from before the
-- call named by `call`, kept when that call suppressed a ping of the asset
-- before its first admission (see below). Both stores keep the baseline at
-- this precision, so their decisions agree bit for bit.
--
-- Issue 29 adds two optional parts, each kept only while there is one: the
-- baseline's VALUE (value mode's reading, an exact double) and the jump
-- CANDIDATE (t, lat and lon in the record's steps, its count of agreeing
-- jumps, and the call that set it). A record with neither is the record
-- above, byte for byte (RECORD_BYTES, or RECORD_BYTES + TAIL_BYTES with a
-- tail): a node in position mode without the jump guard writes and reads
-- exactly what it always did. A record with either is EXTENDED: the
-- record's fields, a PARTS byte (PART_VALUE, PART_CANDIDATE, PART_TAIL,
-- PART_TAIL_VALUE, PART_TAIL_CANDIDATE), then the parts it names in that
-- order; the tail then carries the value and candidate from before the
-- call too, cut from the record as read. An extended record's length is
-- never a plain one's (redis/wire checks it), so the length tells the
-- plain forms apart and PARTS the rest; a value whose length and PARTS do
-- not agree reads as absent. Without the jump guard a candidate is neither
-- read nor written.
--
-- Resets. The epoch key holds an EPOCH: a counter and the call that last
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
-- too: every jump is a jump (the first run relocated nothing), the counts
-- are as they stand, and nothing is written.
--
-- A retried message (flag 2: the node lost the decision of this very
-- message and a Catch flow sent it again) whose ping is exactly the stored
-- baseline was admitted by the lost attempt: it is 'replayed' too.

-- HOW IT IS WRITTEN. Redis runs this body once per call, and a call's time
-- is the redis.call()s and the Lua work per ping (bench/script-cost.ts
-- measures it), so: a record is read with one GET, and written with one
-- SET or, when only the suppressed count changed, a SETRANGE of those four
-- bytes; the rules of issue 29 cost a ping in position mode without the
-- jump guard four tests (the mode, the fix's flags, the guard, the change)
-- and a double more in its op and its reply, an asset a few more fields in
-- its table, and a record without optional parts is read as before; the script defines no functions (a closure made per call costs an
-- allocation per local it uses, and a function call per ping a frame) and
-- makes no table or string per ping that it can avoid: one table per
-- asset, built whole by one constructor (a table that grows field by field
-- is rehashed as it grows), holding the baseline as the record's integer
-- steps; the tail is cut from the record as read;
-- numbers handed to redis.call are strings made once per call (Redis
-- formats a Lua number with sprintf on every call). One MGET of every
-- record of a call instead of a GET each measured about 5 % less per ping
-- at 500 pings per call, within this machine's noise; a GET per record
-- keeps a reset to the commands test/redis/reset.spec.ts counts.

local min_s, min_m, min_turn, max_ahead, ttl, mode, deadband, deadband_pct, max_speed, relocate_s, relocate_n =
  struct.unpack(RULE, ARGV[1])
local now, call = struct.unpack(CALL, ARGV[2])
local ops = ARGV[3]
local keys = KEYS
local n_ops = #keys - 1

-- From the prelude: RESET_ASSET, RESET_ALL (any other op is a ping), and
-- every format, size, flag and step (redis/wire).

local R = 6371008.8
local RAD = math.pi / 180
local NAN = 0 / 0
local sin, cos, asin, sqrt, floor, abs, min = math.sin, math.cos, math.asin, math.sqrt, math.floor, math.abs, math.min
local pack, unpack, sub = struct.pack, struct.unpack, string.sub
local call_redis = redis.call

local AHEAD, FIRST, REPLAYED, LATE = REASON.ahead, REASON.first, REASON.replayed, REASON.late
local ELAPSED, EVENT, MOVED, TURNED, WINDOW = REASON.elapsed, REASON.event, REASON.moved, REASON.turned, REASON.window
local NO_FIX, POOR_FIX, JUMP, RELOCATED = REASON['no-fix'], REASON['poor-fix'], REASON.jump, REASON.relocated
local CHANGED, UNCHANGED = REASON.changed, REASON.unchanged

if #ops ~= n_ops * OP_BYTES then
  return redis.error_reply('sliding-window: ' .. #ops .. ' bytes of operations for ' .. n_ops .. ' keys')
end

local clock_guard, ahead_ms = max_ahead >= 0, max_ahead * 1000
local value_mode, by_percent, jump_guard = mode == VALUE_MODE, deadband_pct ~= 0, max_speed > 0
local ttl_arg = tostring(ttl)
-- Where an extended record's parts start (1-based), and its smallest length.
local PARTS_AT = RECORD_BYTES + 1
local EXT_AT = PARTS_AT + PARTS_BYTES

-- The epoch of this slot, and whether this very call raised it last.
local epoch, epoch_call = 0, -1
local raw_epoch = call_redis('GET', keys[1])
if raw_epoch and #raw_epoch == EPOCH_BYTES then epoch, epoch_call = unpack(EPOCH, raw_epoch) end

-- An asset's state during this call, made on its first operation: its
-- baseline (`has`, `t`, `events`, `value` (NaN: none) and the record's
-- steps `lat_q`, `lon_q`, `heading_q`, `accuracy_q`), its jump candidate
-- (`c_t`, `c_lat_q`, `c_lon_q`, `c_count`; count 0: none, and always none
-- without the jump guard), its counts, what the record says about the call
-- that last admitted a ping (`call`, `first`), and `raw`, the record as
-- read when it holds the baseline from before this call, with where its
-- value (`v_at`), candidate (`c_at`) and tail (`tail_at`) start in it (0:
-- not there) and the tail's PARTS bits (`tail_parts`). The tail, should one
-- be needed, is cut from it.
local states, order, out = {}, {}, {}
-- Whether this run raised the epoch (a resend finds it raised by its first run).
local raised = false
local reset_reply = nil

for i = 1, n_ops do
  local op, flags, events, t, lat, lon, heading, accuracy, value = unpack(OP, ops, (i - 1) * OP_BYTES + 1)

  if op == RESET_ALL then
    if epoch_call ~= call then
      epoch, epoch_call, raised = epoch + 1, call, true
      call_redis('SET', keys[1], pack(EPOCH, epoch, call))
    end
    -- Every asset this call has touched is gone as well. A resend whose
    -- first run made this reset re-derives only its own assets: a record
    -- another call has written since is newer than the reset, and stays.
    for j = 1, #order do
      local s = states[order[j]]
      if raised or s.resend then
        s.has, s.acc, s.sup, s.write, s.value = false, 0, 0, 'del', NAN
        s.c_t, s.c_lat_q, s.c_lon_q, s.c_count = 0, 0, 0, 0
      end
    end
    reset_reply = reset_reply or pack(REPLY, 0, 0, 0, 0, 0, 0, 0, 0)
    out[i] = reset_reply
  else
    local key = keys[i + 1]
    local s = states[key]
    if not s then
      s = { has = false, t = 0, lat_q = 0, lon_q = 0, heading_q = NO_HEADING, accuracy_q = 0, events = 0, value = NAN,
            c_t = 0, c_lat_q = 0, c_lon_q = 0, c_count = 0, c_call = 0,
            acc = 0, sup = 0, call = false, first = 0, raw = false, v_at = 0, c_at = 0, tail_at = 0, tail_parts = 0,
            resend = false, echo = false, write = false, admitted = false, suppressed_before = false, tail = false }
      local raw = call_redis('GET', key)
      if raw then
        -- Which form the record has: plain (RECORD_BYTES), plain with a tail,
        -- or extended (PARTS says what follows); any other value reads as absent.
        local len, parts, v_at, c_at, tail_at, tv_at, tc_at = #raw, 0, 0, 0, 0, 0, 0
        local known = len == RECORD_BYTES
        if len == RECORD_BYTES + TAIL_BYTES then
          known, parts, tail_at = true, PART_TAIL, PARTS_AT
        elseif len > PARTS_AT then
          parts = unpack(PARTS, raw, PARTS_AT)
          local at = EXT_AT
          if parts % (2 * PART_VALUE) >= PART_VALUE then v_at, at = at, at + VALUE_BYTES end
          if parts % (2 * PART_CANDIDATE) >= PART_CANDIDATE then c_at, at = at, at + CANDIDATE_BYTES end
          if parts % (2 * PART_TAIL) >= PART_TAIL then
            tail_at, at = at, at + TAIL_BYTES
            if parts % (2 * PART_TAIL_VALUE) >= PART_TAIL_VALUE then tv_at, at = at, at + VALUE_BYTES end
            if parts >= PART_TAIL_CANDIDATE then tc_at, at = at, at + CANDIDATE_BYTES end
          end
          -- Only the bits there are, tail parts only with a tail, and at least
          -- one part the plain forms cannot hold.
          known = parts < 2 * PART_TAIL_CANDIDATE and at == len + 1 and parts ~= 0 and parts ~= PART_TAIL
            and (tail_at > 0 or parts < PART_TAIL)
        end
        if known then
          local r_t, lat_q, lon_q, acc, sup, rcall, first, r_events, heading_q, accuracy_q, rec_epoch = unpack(RECORD, raw)
          if rec_epoch == epoch % EPOCH_MODULUS then
            s.acc, s.sup, s.call, s.first = acc, sup, rcall, first
            if rcall == call then
              -- A resend: start from where the first run started.
              s.resend = true
              if tail_at > 0 then
                r_t, lat_q, lon_q, r_events, heading_q, accuracy_q = unpack(TAIL, raw, tail_at)
                s.has, s.t, s.lat_q, s.lon_q, s.events, s.heading_q, s.accuracy_q = true, r_t, lat_q, lon_q, r_events, heading_q, accuracy_q
                if tv_at > 0 then s.value = unpack(VALUE, raw, tv_at) end
                if tc_at > 0 and jump_guard then s.c_t, s.c_lat_q, s.c_lon_q, s.c_count, s.c_call = unpack(CANDIDATE, raw, tc_at) end
              end
            else
              s.raw, s.v_at, s.c_at, s.tail_at = raw, v_at, c_at, tail_at
              s.tail_parts = parts - parts % PART_TAIL
              s.has, s.t, s.lat_q, s.lon_q, s.events, s.heading_q, s.accuracy_q = true, r_t, lat_q, lon_q, r_events, heading_q, accuracy_q
              if v_at > 0 then s.value = unpack(VALUE, raw, v_at) end
              if c_at > 0 and jump_guard then
                s.c_t, s.c_lat_q, s.c_lon_q, s.c_count, s.c_call = unpack(CANDIDATE, raw, c_at)
                -- This call set the candidate and admitted no ping of the asset: a resend (see "Resent calls").
                -- (Value mode never sets one: a candidate it finds is from position mode.)
                s.echo = s.c_call == call and not value_mode
              end
            end
          end
        end
      end
      states[key] = s
      order[#order + 1] = key
    end

    if op == RESET_ASSET then
      s.has, s.acc, s.sup, s.write, s.value = false, 0, 0, 'del', NAN
      s.c_t, s.c_lat_q, s.c_lon_q, s.c_count = 0, 0, 0, 0
      reset_reply = reset_reply or pack(REPLY, 0, 0, 0, 0, 0, 0, 0, 0)
      out[i] = reset_reply
    else
      -- The rule: reason, dt, distance m, heading change turn, value change
      -- (nil where absent); `moved_c`: the ping changed the jump candidate.
      local reason, dt, m, turn, change
      local moved_c = false
      local has = s.has
      if has then dt = (t - s.t) / 1000 end
      if clock_guard and t - now > ahead_ms then
        reason = AHEAD
      elseif value_mode then
        if not has then
          reason = FIRST
        elseif flags % (2 * RETRY) >= RETRY and s.t == t and s.value == value and s.events == events then
          reason, dt = REPLAYED, nil
        elseif dt <= 0 then
          reason = LATE
        else
          local before = s.value
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
          local c_count, c_t = s.c_count, s.c_t
          local clear = true
          if dt > relocate_s then
            if m >= min_m then reason = RELOCATED end
          elseif m >= min_m and m > accuracy + s.accuracy_q / ACCURACY_STEPS and m / dt * 3.6 > max_speed then
            local count = 1
            if c_count > 0 and t > c_t then
              local c_lat = s.c_lat_q / DEGREE_STEPS
              local sc_lat = sin((lat - c_lat) * RAD / 2)
              local sc_lon = sin((lon - s.c_lon_q / DEGREE_STEPS) * RAD / 2)
              local hc = sc_lat * sc_lat + cos(c_lat * RAD) * cos(lat * RAD) * sc_lon * sc_lon
              if hc > 1 then hc = 1 end
              local d = 2 * R * asin(sqrt(hc))
              if not (d >= min_m and d > accuracy and d / ((t - c_t) / 1000) * 3.6 > max_speed) then count = c_count + 1 end
            end
            if count >= relocate_n and not s.echo then
              reason = RELOCATED
            else
              reason, clear = JUMP, false
              -- Stored when its count, time or position differs, as the memory store does.
              local q_lat, q_lon = floor(lat * DEGREE_STEPS + 0.5), floor(lon * DEGREE_STEPS + 0.5)
              if (count ~= c_count or t ~= c_t or q_lat ~= s.c_lat_q or q_lon ~= s.c_lon_q) and not s.echo then
                s.c_t, s.c_lat_q, s.c_lon_q, s.c_count, s.c_call = t, q_lat, q_lon, count, call
                moved_c = true
              end
            end
          end
          if clear and (c_count ~= 0 or c_t ~= 0) and not s.echo then
            s.c_t, s.c_lat_q, s.c_lon_q, s.c_count = 0, 0, 0, 0
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
      if s.resend then
        if i == s.first or (ADMITS[reason] and reason ~= REPLAYED) then
          reason, dt, m, turn, change = REPLAYED, nil, nil, nil, nil
          becomes = true
          -- As the first run left it: an admission in position mode clears the candidate.
          if not value_mode then s.c_t, s.c_lat_q, s.c_lon_q, s.c_count = 0, 0, 0, 0 end
        end
      elseif s.echo then
        -- A resend of a call that only suppressed pings of the asset, one of
        -- them a jump that set the candidate: answered as the first run was
        -- (a jump is a jump again, never a relocation: the first run
        -- admitted nothing), with the counts as they stand, and nothing written.
      elseif reason == REPLAYED then
        -- A retried message the lost attempt had admitted: nothing changes.
      elseif ADMITS[reason] then
        if not s.admitted then
          -- This call's first admission of the asset: the record will name it,
          -- and keep the state from before the call (baseline, value,
          -- candidate) if a ping of the asset was suppressed against it first.
          s.admitted, s.first, s.call = true, i, call
          local raw = s.raw
          if s.suppressed_before and raw then
            local parts = {}
            for k = 1, #TAIL_CUTS, 2 do parts[#parts + 1] = sub(raw, TAIL_CUTS[k], TAIL_CUTS[k + 1]) end
            local tail_parts = PART_TAIL
            if s.v_at > 0 then
              parts[#parts + 1] = sub(raw, s.v_at, s.v_at + VALUE_BYTES - 1)
              tail_parts = tail_parts + PART_TAIL_VALUE
            end
            if s.c_at > 0 and jump_guard then
              parts[#parts + 1] = sub(raw, s.c_at, s.c_at + CANDIDATE_BYTES - 1)
              tail_parts = tail_parts + PART_TAIL_CANDIDATE
            end
            s.tail, s.tail_parts = table.concat(parts), tail_parts
          else
            s.tail, s.tail_parts = false, 0
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
        -- A changed candidate rewrites the record, keeping its TTL; else the count alone.
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
        s.has, s.t, s.events, s.heading_q, s.accuracy_q, s.value = true, t, events, heading_q, accuracy_q, value
        s.lat_q, s.lon_q = floor(lat * DEGREE_STEPS + 0.5), floor(lon * DEGREE_STEPS + 0.5)
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

local epoch_field = epoch % EPOCH_MODULUS
for j = 1, #order do
  local key = order[j]
  local s = states[key]
  local write = s.write
  if write and not s.resend then
    if write == 'keep' then
      -- Only the suppressed count changed: the rest of the record, and its
      -- TTL (which runs from the last admission), stay as they are.
      call_redis('SETRANGE', key, SUPPRESSED_AT, pack(COUNT, s.sup))
    elseif write == 'del' then
      call_redis('DEL', key)
    else
      local record = pack(RECORD, s.t, s.lat_q, s.lon_q, s.acc, s.sup, s.call, s.first, s.events, s.heading_q,
        s.accuracy_q, epoch_field)
      -- The tail: this call's (an admission) or the one the record had (a new candidate only).
      local tail, tail_parts = s.tail, s.tail_parts
      if write == 'candidate' then
        tail = false
        if s.tail_at > 0 then tail = sub(s.raw, s.tail_at) end
      end
      -- The optional parts: the value, the candidate, the tail's (see redis/wire).
      local parts = tail_parts
      if not tail then parts = 0 end
      local value, c_count = s.value, s.c_count
      if value == value then parts = parts + PART_VALUE end
      if c_count > 0 then parts = parts + PART_CANDIDATE end
      if parts > PART_TAIL or (parts ~= 0 and parts < PART_TAIL) then
        record = record .. pack(PARTS, parts)
        if value == value then record = record .. pack(VALUE, value) end
        if c_count > 0 then record = record .. pack(CANDIDATE, s.c_t, s.c_lat_q, s.c_lon_q, c_count, s.c_call) end
      end
      if tail then record = record .. tail end
      if write == 'set' then
        call_redis('SET', key, record, 'EX', ttl_arg)
      else
        -- KEEPTTL: a suppression does not extend the record's life.
        call_redis('SET', key, record, 'KEEPTTL')
      end
    end
  end
end
return table.concat(out)
