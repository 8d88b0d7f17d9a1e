-- After a status edit: record the edit sent (when it was sent) and give the lease back.
-- KEYS[1] the record, KEYS[2] the lease. ARGV: token, stamp, "1" when final, ttl s, "1" when sent.
if ARGV[5] == '1' then
  local rec = redis.call('HMGET', KEYS[1], 'at', 'final')
  local at = tonumber(rec[1] or '0') or 0
  if tonumber(ARGV[2]) >= at then
    redis.call('HSET', KEYS[1], 'at', ARGV[2])
    if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'final', '1') end
    redis.call('EXPIRE', KEYS[1], ARGV[4])
  end
end
if redis.call('GET', KEYS[2]) == ARGV[1] .. ':' .. ARGV[3] then redis.call('DEL', KEYS[2]) end
return 1
