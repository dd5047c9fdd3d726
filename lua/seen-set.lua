-- Reconnect dedup: claim idempotency keys, first write wins.
--
-- KEYS[i]  the seen-set entry of reading i. All keys of one call share a
--          hash tag (the device id), so one burst from one device is one
--          round trip and the script runs unchanged on Redis Cluster.
-- ARGV[1]  ttlSeconds
-- ARGV[2]  a token unique to this call. Each claim stores token.i; if the
--          client resends the call after a dropped connection, a key that
--          already holds this call's own token.i was claimed by this very
--          reading, and is reported as admitted again rather than as a
--          duplicate of itself. A replay later in the same burst carries a
--          different i, so it is still a duplicate.
--
-- Returns 1 (admitted) or 0 (duplicate) per key, in order.
--
-- SET NX EX is one command: the key can never exist without its TTL, which
-- SETNX followed by EXPIRE would allow if the client died in between.

local ttl = ARGV[1]
local token = ARGV[2]
local out = {}
for i, key in ipairs(KEYS) do
  local id = token .. '.' .. i
  if redis.call('SET', key, id, 'NX', 'EX', ttl) then
    out[i] = 1
  elseif redis.call('GET', key) == id then
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
