-- The layout mark, shared by both scripts (the loader, src/redis/scripts.ts,
-- puts this text after a script's prelude and before the script itself).
--
-- Whether the keys of earlier builds (a key per record or reading) may
-- still hold state in this slot: the first call of this layout in a slot
-- writes `mark` with its time, or 0 when the database was empty then (a new
-- install reads no old keys at all); an old key can only hold what an
-- earlier build wrote within `life_ms` (its TTL) before that time.
local function old_keys_live(mark, now, life_ms)
  local since
  local raw_mark = redis.call('GET', mark)
  if raw_mark and #raw_mark == MARK_BYTES then
    since = struct.unpack(MARK, raw_mark)
  else
    -- This call has written nothing yet, so a database that holds anything
    -- holds what earlier builds wrote.
    since = 0
    if redis.call('DBSIZE') > 0 then since = math.floor(now) end
    redis.call('SET', mark, struct.pack(MARK, since))
  end
  return since > 0 and now < since + life_ms
end

