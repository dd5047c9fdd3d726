-- Reconnect dedup: claim, confirm and release idempotency keys, first write
-- wins, as one unit that no other client can interleave.
--
-- The loader (src/redis/scripts.ts) puts lines before this text that name
-- what both sides share: `local LEASE_EXPIRED, CLAIM_ADMITTED, ... = 16, 1, ...`
-- and `local SEEN, PENDING, RELEASED = 0, 1, 2` (the codes and entry states of
-- src/core/sensor/seen-codes.ts), `local CLAIM_OP, ..., RESET_ALL = 1, ..., 5`
-- (the operation codes), then the binary formats of src/redis/wire.ts (the
-- struct format of each argument and entry, and their sizes), so
-- that neither side spells a number. The logic is BoundedSeenSet of
-- src/core/sensor/seen-set.ts; the contract suite holds the two to the same
-- answers.
--
-- KEYS[1]    the epoch key of this call's hash slot (see "Resets").
-- KEYS[2..]  buckets, group epoch keys and (only while earlier builds'
--            entries may still be read: the last key is then the slot's
--            layout mark, see "Earlier builds") the keys they kept entries in, as the operations name them. All keys of one
--            call share a hash slot (none has a tag on one server; on a
--            Cluster each starts with the tag of its device's Cluster
--            bucket), so one burst from one device is one call and the
--            script runs unchanged on Redis Cluster.
-- ARGV[1]    SETTINGS: the Node-RED host's clock in epoch ms (leases and
--            entries expire by it), ttlSeconds, leaseMs, 1 when a claim
--            holds its key pending (confirm mode), 48 random bits naming
--            this call, and 1 when the operations name old keys.
-- ARGV[2]    the operations, OP_BYTES each (OP): the operation (CLAIM_OP,
--            CONFIRM_OP, RELEASE_OP, RESET_GROUP, RESET_ALL), the KEYS
--            index of its entry's bucket (for a group reset: of the group's
--            epoch key), of the entry's group epoch key and of its old key
--            (0: none sent), and the 48-bit token of the message it is for.
-- ARGV[2+i]  operation i's idempotency key: its entry's field in its bucket.
--
-- Reply: one integer per operation: a CLAIM code (plus LEASE_EXPIRED when
-- the claim took over a pending key whose lease had run out), a SETTLE code,
-- or 0 for a reset; then a status, LEGACY_READS when the client is to go on
-- sending old keys.
--
-- AN ENTRY is the value of its idempotency key's field in its bucket, an
-- ENTRY (when it expires, host clock, epoch ms: the TTL when seen, the
-- longer of TTL and lease when pending, one lease when released, kept only
-- so that a repeated release is recognised, plus its state, SEEN, PENDING
-- or RELEASED, times STATE_UNIT; the slot and group epochs, mod
-- EPOCH_MODULUS, it was written in; the token that holds it), plus, when
-- pending, a DEADLINE: the lease's end (epoch ms). One HSET writes it whole, its expiry with it: an entry
-- never exists without one. From its expiry on it reads as absent, whether
-- or not a sweep has removed it yet.
--
-- BUCKETS. An entry lives in one of many hashes, chosen by a hash of its
-- idempotency key (src/redis/key-names.ts), so that Redis keeps each in its
-- compact encoding: a few bytes per field beyond the field's own, where a
-- key of its own costs about a hundred. Reading an entry needs nothing but
-- the entry. A bucket is kept (PEXPIRE) a period past the end of the latest
-- period (a PERIODS_PER_TTL-th of the TTL) an entry of it expires in, so
-- that no entry outlives its bucket and a bucket nobody writes goes away by
-- itself: each write names its entry's period in a field (PERIOD_FIELD and
-- a PERIOD: the TTL and the period's index), and the bucket in its own
-- field (BUCKET_FIELD), in the same HSET, whose count of fields added says
-- whether the bucket is new (it gets its expiry) or the write is the
-- bucket's first of the period: only then is the bucket's expiry renewed
-- and the bucket swept: its entries that have expired or are of another
-- slot epoch, and the fields of earlier periods, are deleted (one HGETALL,
-- one HDEL). A bucket so holds at most about a period's worth of expired
-- entries, and neither renewal nor sweep costs a read on the way to a
-- decision.
--
-- Tokens. A token is a 48-bit number one message claims its keys under
-- (src/core/structures/call-token.ts): a new one per message, and the same
-- one again when a message whose decision was lost (Redis did not answer)
-- comes back through a Catch flow with the same _msgid and readings
-- (src/node-red/lost-decisions.ts). A claim by the same token is the same
-- message again (ioredis resending a call whose reply was lost, or that
-- retry): it is admitted again as 'replayed', never counted as a duplicate
-- of itself. Confirm and release act only when the entry still holds their
-- token, so a late confirm can never confirm another worker's newer claim;
-- both are safe to repeat. A seen (confirmed) key is kept, not released.
--
-- Resets. Epoch keys hold an EPOCH: a counter and the call that last raised
-- it. An entry written in another slot or group epoch reads as absent (and
-- is swept out of its bucket in time). "Reset every key" raises the slot's counter (it never expires;
-- on a Cluster the client sends the reset to every Cluster bucket's slot);
-- "reset a group" raises the group's, kept as long as any entry of its
-- group may live. Either is O(1) on the server however many keys exist,
-- atomic with respect to every claim, and never loses an entry written
-- after it. A resent call raises a counter once.
--
-- Earlier builds kept an entry per reading in a string key of its own
-- (LEGACY_ENTRY, in the slot and group epochs mod LEGACY_EPOCH_MODULUS and
-- EPOCH_MODULUS, expiring by its TTL). The first call of this layout in a
-- slot writes the slot's layout mark: its time, or 0 when the database was
-- empty. While the longer of TTL and lease has not passed since, an entry
-- missing from its bucket is read from the old key (which the client sends
-- then), and writing the entry puts it into its bucket and deletes the old
-- key. The reply says when the client may stop sending old keys.

-- HOW IT IS WRITTEN. Numbers handed to redis.call are strings made once
-- per call, as Redis would make them ('%.17g'), because Redis formats a Lua
-- number with sprintf on every call; library functions are locals.

local now, ttl, lease, pending_mode, call, legacy_sent = struct.unpack(SETTINGS, ARGV[1])
local ops = ARGV[2]
local keys, argv = KEYS, ARGV
local spread = unpack
local pack, unpack, format, byte, sub = struct.pack, struct.unpack, string.format, string.byte, string.sub
local floor, ceil, min, max = math.floor, math.ceil, math.min, math.max
local call_redis = redis.call

-- From the prelude: CLAIM_OP, CONFIRM_OP, RELEASE_OP, RESET_GROUP,
-- RESET_ALL; SEEN, PENDING, RELEASED (an entry's state byte); and every
-- format and size (redis/wire).
local ttl_ms = ttl * 1000
local pending_ms = max(ttl_ms, lease)
local pending_px = format('%.17g', pending_ms)

if #ops % OP_BYTES ~= 0 or #argv ~= 2 + #ops / OP_BYTES then
  return redis.error_reply('seen-set: ' .. #ops .. ' bytes of operations for ' .. (#argv - 2) .. ' keys')
end

-- An epoch: { count, call } of the epoch key KEYS[index], read once per call.
local epochs = {}
local function epoch_of(index)
  local key = keys[index]
  local e = epochs[key]
  if not e then
    e = { count = 0, call = -1 }
    local raw = call_redis('GET', key)
    if raw and #raw == EPOCH_BYTES then e.count, e.call = unpack(EPOCH, raw) end
    epochs[key] = e
  end
  return e
end

-- `px`: the epoch key's TTL as a string, or nil for none.
local function raise(index, px)
  local e = epoch_of(index)
  if e.call == call then return end
  e.count, e.call = e.count + 1, call
  if px then
    call_redis('SET', keys[index], pack(EPOCH, e.count, call), 'PX', px)
  else
    call_redis('SET', keys[index], pack(EPOCH, e.count, call))
  end
end

local SLOT_EPOCH = 1

-- Whether an entry missing from its bucket may still be in its old key.
local legacy = legacy_sent == 1 and old_keys_live(keys[#keys], now, pending_ms)

local refreshed = {}
-- The periods (see BUCKETS): their length, what the field naming a
-- period of this TTL starts with, the buckets swept in this call.
local period_ms = ttl_ms / PERIODS_PER_TTL
local swept = {}

-- The live entry of field `field` in bucket KEYS[b_index]: state, token,
-- deadline, whether it was read from its old key KEYS[old_index], and
-- whether its field exists (live or not); nil when absent, expired or of
-- another epoch.
local function read_entry(b_index, field, group_index, old_index)
  local raw = call_redis('HGET', keys[b_index], field)
  local slot_count = epoch_of(SLOT_EPOCH).count
  local group_count = epoch_of(group_index).count % EPOCH_MODULUS
  if raw then
    if #raw < ENTRY_BYTES then return nil, nil, nil, false, true end
    local expires_state, e_slot, e_group, token, pos = unpack(ENTRY, raw)
    local expires, state = expires_state % STATE_UNIT, floor(expires_state / STATE_UNIT)
    if expires <= now or e_slot ~= slot_count % EPOCH_MODULUS or e_group ~= group_count then return nil, nil, nil, false, true end
    local deadline = 0
    if state == PENDING and #raw >= ENTRY_BYTES + DEADLINE_BYTES then deadline = unpack(DEADLINE, raw, pos) end
    return state, token, deadline, false, true
  end
  if not legacy or old_index == 0 then return nil end
  raw = call_redis('GET', keys[old_index])
  if not raw or #raw < LEGACY_ENTRY_BYTES then return nil end
  local e_slot, e_group, state, token, pos = unpack(LEGACY_ENTRY, raw)
  if e_slot ~= slot_count % LEGACY_EPOCH_MODULUS or e_group ~= group_count then return nil end
  local deadline = 0
  if state == PENDING and #raw >= LEGACY_ENTRY_BYTES + DEADLINE_BYTES then deadline = unpack(DEADLINE, raw, pos) end
  return state, token, deadline, true
end

-- Writes the entry. `old`: it was read from its old key KEYS[old_index],
-- which goes; `exists`: its field exists in the bucket (HSET replaces it).
local function write_entry(b_index, field, group_index, state, token, old_index, old, exists)
  local bkey = keys[b_index]
  local group = epoch_of(group_index)
  local slot_field = epoch_of(SLOT_EPOCH).count % EPOCH_MODULUS
  local expires, value
  if state == PENDING then
    expires = ceil(now + pending_ms)
    value = pack(ENTRY, expires + state * STATE_UNIT, slot_field, group.count % EPOCH_MODULUS, token) .. pack(DEADLINE, now + lease)
  else
    if state == SEEN then expires = ceil(now + ttl_ms) else expires = ceil(now + lease) end
    value = pack(ENTRY, expires + state * STATE_UNIT, slot_field, group.count % EPOCH_MODULUS, token)
  end
  -- HSET counts the fields it adds: the entry when none was there, the
  -- period's field when this is the bucket's first write of the period,
  -- and the bucket's own field when the bucket is new (and then the
  -- period's too).
  local period = floor(expires / period_ms)
  local period_field = PERIOD_FIELD .. pack(PERIOD, ttl, period)
  local period_head = sub(period_field, 1, PERIOD_HEAD_BYTES)
  local added = call_redis('HSET', bkey, field, value, period_field, '', BUCKET_FIELD, '')
  if not exists then added = added - 1 end
  -- Kept a period past the end of the period.
  local kept = ceil((period + 2) * period_ms - now)
  if added == 2 then
    call_redis('PEXPIRE', bkey, kept)
  elseif added == 1 then
    -- Another TTL's period may have it kept longer: never shortened (PTTL
    -- first, not PEXPIRE's GT, which Redis has only since 7.0).
    if call_redis('PTTL', bkey) < kept then call_redis('PEXPIRE', bkey, kept) end
    if not swept[bkey] then
      swept[bkey] = true
      local all = call_redis('HGETALL', bkey)
      local dead = {}
      for k = 1, #all, 2 do
        local name, entry = all[k], all[k + 1]
        if byte(name, 1) ~= OWN_FIELD_BYTE then
          if #entry >= ENTRY_BYTES then
            local e, e_slot = unpack(ENTRY, entry)
            if e % STATE_UNIT <= now or e_slot ~= slot_field then dead[#dead + 1] = name end
          end
        elseif name ~= period_field and sub(name, 1, #period_head) == period_head then
          -- An earlier period's field of this TTL (those of another TTL are left to it).
          dead[#dead + 1] = name
        end
      end
      for from = 1, #dead, 1000 do call_redis('HDEL', bkey, spread(dead, from, min(from + 999, #dead))) end
    end
  end
  if old then call_redis('DEL', keys[old_index]) end
  -- A group epoch must outlive every entry written in it: were it to expire
  -- first, the group's counter would restart and old entries read as live.
  local group_key = keys[group_index]
  if group.count > 0 and not refreshed[group_key] then
    refreshed[group_key] = true
    call_redis('PEXPIRE', group_key, pending_px)
  end
end

local function claim(b_index, field, group_index, old_index, token)
  local state, holder, deadline, old, exists = read_entry(b_index, field, group_index, old_index)
  local flags = 0
  if state then
    if holder == token and state ~= RELEASED then
      -- The same message again; a pending one is being delivered again and gets a new lease.
      if state == PENDING then write_entry(b_index, field, group_index, PENDING, token, old_index, old, exists) end
      return CLAIM_REPLAYED
    end
    if state == SEEN then return CLAIM_DUPLICATE end
    if state == PENDING and deadline > now then return CLAIM_IN_FLIGHT end
    if state == PENDING then flags = LEASE_EXPIRED end
  end
  if pending_mode == 1 then
    write_entry(b_index, field, group_index, PENDING, token, old_index, old, exists)
  else
    write_entry(b_index, field, group_index, SEEN, token, old_index, old, exists)
  end
  return CLAIM_ADMITTED + flags
end

local function settle(op, b_index, field, group_index, old_index, token)
  local state, holder, deadline, old, exists = read_entry(b_index, field, group_index, old_index)
  if not state or holder ~= token then return SETTLE_NOT_HELD end
  if state == RELEASED then
    if op == RELEASE_OP then return SETTLE_SETTLED end
    return SETTLE_NOT_HELD
  end
  -- A confirmed delivery is never undone: a seen key is not released.
  if state == SEEN and op == RELEASE_OP then return SETTLE_KEPT end
  local late = state == PENDING and deadline <= now
  if op == CONFIRM_OP and state == PENDING then write_entry(b_index, field, group_index, SEEN, token, old_index, old, exists) end
  if op == RELEASE_OP then write_entry(b_index, field, group_index, RELEASED, token, old_index, old, exists) end
  if late then return SETTLE_LATE_SETTLED end
  return SETTLE_SETTLED
end

local out = {}
local n_ops = #ops / OP_BYTES
for i = 1, n_ops do
  local op, b_index, group_index, old_index, token = unpack(OP, ops, (i - 1) * OP_BYTES + 1)
  if op == CLAIM_OP then
    out[i] = claim(b_index, argv[2 + i], group_index, old_index, token)
  elseif op == CONFIRM_OP or op == RELEASE_OP then
    out[i] = settle(op, b_index, argv[2 + i], group_index, old_index, token)
  elseif op == RESET_GROUP then
    raise(b_index, pending_px)
    out[i] = 0
  elseif op == RESET_ALL then
    raise(SLOT_EPOCH, nil)
    out[i] = 0
  else
    return redis.error_reply('seen-set: unknown operation ' .. op)
  end
end
if legacy then out[n_ops + 1] = LEGACY_READS else out[n_ops + 1] = 0 end
return out
