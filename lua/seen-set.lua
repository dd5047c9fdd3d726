-- Reconnect dedup: claim, confirm and release idempotency keys, first write
-- wins, as one unit that no other client can interleave.
--
-- The loader (src/redis/scripts.ts) puts lines before this text that name
-- what both sides share: `local CLAIM, LEASE_EXPIRED, SETTLE = {...}, 16, {...}`
-- and `local SEEN, PENDING, RELEASED = 0, 1, 2` (the codes and entry states of
-- src/core/sensor/seen-codes.ts), `local CLAIM_OP, ..., RESET_ALL = 1, ..., 5`
-- (the operation codes), then the binary formats of src/redis/wire.ts (the
-- struct format of each argument and entry, and their sizes), so that
-- neither side spells a number. The logic is BoundedSeenSet of
-- src/core/sensor/seen-set.ts; the contract suite holds the two to the same
-- answers.
--
-- KEYS[1]    the epoch key of this call's hash slot (see "Resets").
-- KEYS[2..]  seen-set entries and group epoch keys, as the operations name
--            them. All keys of one call share a hash slot (the device id, or
--            the key itself, is a hash tag), so one burst from one device is
--            one call and the script runs unchanged on Redis Cluster.
-- ARGV[1]    SETTINGS: the Node-RED host's clock in epoch ms, ttlSeconds,
--            leaseMs, 1 when a claim holds its key pending (confirm mode),
--            and 48 random bits naming this call.
-- ARGV[2]    the operations, OP_BYTES each (OP): the operation (CLAIM_OP,
--            CONFIRM_OP, RELEASE_OP, RESET_GROUP, RESET_ALL), the KEYS index
--            of its entry (for a group reset: of the group's epoch key),
--            the KEYS index of the entry's group epoch key, and the 48-bit
--            token of the message it is for.
--
-- Reply: one integer per operation: a CLAIM code (plus LEASE_EXPIRED when
-- the claim took over a pending key whose lease had run out), a SETTLE code,
-- or 0 for a reset.
--
-- AN ENTRY is a string, an ENTRY (the slot epoch and the group epoch, each
-- mod EPOCH_MODULUS, it was written in; its state, SEEN, PENDING or
-- RELEASED; the token that holds it), plus, when pending, a DEADLINE: the
-- lease's end (epoch ms). It is written with SET ... PX: the TTL when seen,
-- the longer of TTL and lease when pending, one lease when released (kept
-- only so that a repeated release is recognised). One SET: the key never
-- exists without its expiry, which SETNX followed by EXPIRE would allow if
-- the client died in between.
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
-- it. An entry written in another epoch reads as absent. "Reset every key"
-- raises the slot's counter (it never expires; on a Cluster the client sends
-- the reset to every slot); "reset a group" raises the group's, kept as
-- long as any entry of its group may live. Either is O(1) on the server
-- however many keys exist, atomic with respect to every claim, and never
-- loses an entry written after it. A resent call raises a counter once.

-- HOW IT IS WRITTEN. Numbers handed to redis.call are strings made once
-- per call, as Redis would make them ('%.17g'), because Redis formats a Lua
-- number with sprintf on every call; library functions are locals.

local now, ttl, lease, pending_mode, call = struct.unpack(SETTINGS, ARGV[1])
local ops = ARGV[2]
local keys = KEYS
local pack, unpack, format = struct.pack, struct.unpack, string.format
local call_redis = redis.call

-- From the prelude: CLAIM_OP, CONFIRM_OP, RELEASE_OP, RESET_GROUP,
-- RESET_ALL; SEEN, PENDING, RELEASED (an entry's state byte); and every
-- format and size (redis/wire).
local ttl_ms = ttl * 1000
local pending_ms = math.max(ttl_ms, lease)
local ttl_px, pending_px, lease_px = format('%.17g', ttl_ms), format('%.17g', pending_ms), format('%.17g', lease)

if #ops % OP_BYTES ~= 0 then
  return redis.error_reply('seen-set: ' .. #ops .. ' bytes of operations are not whole operations')
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
local refreshed = {}

-- The live entry of KEYS[index]: state, token, deadline; nil when absent or of another epoch.
local function read_entry(index, group_index)
  local raw = call_redis('GET', keys[index])
  if not raw or #raw < ENTRY_BYTES then return nil end
  local e_slot, e_group, state, token, pos = unpack(ENTRY, raw)
  if e_slot ~= epoch_of(SLOT_EPOCH).count % EPOCH_MODULUS or e_group ~= epoch_of(group_index).count % EPOCH_MODULUS then return nil end
  local deadline = 0
  if state == PENDING and #raw >= ENTRY_BYTES + DEADLINE_BYTES then deadline = unpack(DEADLINE, raw, pos) end
  return state, token, deadline
end

local function write_entry(index, group_index, state, token)
  local group = epoch_of(group_index)
  local value = pack(ENTRY, epoch_of(SLOT_EPOCH).count % EPOCH_MODULUS, group.count % EPOCH_MODULUS, state, token)
  local px = ttl_px
  if state == PENDING then
    value = value .. pack(DEADLINE, now + lease)
    px = pending_px
  elseif state == RELEASED then
    px = lease_px
  end
  local key = keys[index]
  call_redis('SET', key, value, 'PX', px)
  -- A group epoch must outlive every entry written in it: were it to expire
  -- first, the group's counter would restart and old entries read as live.
  local group_key = keys[group_index]
  if group.count > 0 and not refreshed[group_key] then
    refreshed[group_key] = true
    call_redis('PEXPIRE', group_key, pending_px)
  end
end

local function claim(key_index, group_index, token)
  local state, holder, deadline = read_entry(key_index, group_index)
  local flags = 0
  if state then
    if holder == token and state ~= RELEASED then
      -- The same message again; a pending one is being delivered again and gets a new lease.
      if state == PENDING then write_entry(key_index, group_index, PENDING, token) end
      return CLAIM.replayed
    end
    if state == SEEN then return CLAIM.duplicate end
    if state == PENDING and deadline > now then return CLAIM.inFlight end
    if state == PENDING then flags = LEASE_EXPIRED end
  end
  if pending_mode == 1 then
    write_entry(key_index, group_index, PENDING, token)
  else
    write_entry(key_index, group_index, SEEN, token)
  end
  return CLAIM.admitted + flags
end

local function settle(op, key_index, group_index, token)
  local state, holder, deadline = read_entry(key_index, group_index)
  if not state or holder ~= token then return SETTLE.notHeld end
  if state == RELEASED then
    if op == RELEASE_OP then return SETTLE.settled end
    return SETTLE.notHeld
  end
  -- A confirmed delivery is never undone: a seen key is not released.
  if state == SEEN and op == RELEASE_OP then return SETTLE.kept end
  local late = state == PENDING and deadline <= now
  if op == CONFIRM_OP and state == PENDING then write_entry(key_index, group_index, SEEN, token) end
  if op == RELEASE_OP then write_entry(key_index, group_index, RELEASED, token) end
  if late then return SETTLE.lateSettled end
  return SETTLE.settled
end

local out = {}
for i = 1, #ops / OP_BYTES do
  local op, key_index, group_index, token = unpack(OP, ops, (i - 1) * OP_BYTES + 1)
  if op == CLAIM_OP then
    out[i] = claim(key_index, group_index, token)
  elseif op == CONFIRM_OP or op == RELEASE_OP then
    out[i] = settle(op, key_index, group_index, token)
  elseif op == RESET_GROUP then
    raise(key_index, pending_px)
    out[i] = 0
  elseif op == RESET_ALL then
    raise(SLOT_EPOCH, nil)
    out[i] = 0
  else
    return redis.error_reply('seen-set: unknown operation ' .. op)
  end
end
return out
