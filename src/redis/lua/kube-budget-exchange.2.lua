-- The fleet's Kubernetes request budget: give leases back and ask for new ones in one call.
-- KEYS: leases (sorted set, id -> expiry ms), waiting (process -> when it stops counting as waiting).
-- ARGV: limit, lease ms, process id, leases the process keeps, how many to give back, how long a
-- process counts as waiting (ms), the ids to give back, then the ids it would like (as many as it
-- wants). Returns the ids granted. Times are the server's, so replicas' clocks do not matter.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local held = tonumber(ARGV[4])
local nrel = tonumber(ARGV[5])
local waiting_ms = tonumber(ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
-- A lease never lives beyond one lease time from now: one scored later was not granted here (written
-- into Redis by hand) and is dropped, so it cannot hold the budget.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '(' .. (now + ttl), '+inf')
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '(' .. (now + waiting_ms), '+inf')
for i = 7, 6 + nrel do redis.call('ZREM', KEYS[1], ARGV[i]) end
local first = 7 + nrel
local want = #ARGV - first + 1
local granted = {}
if want > 0 then
  redis.call('ZADD', KEYS[2], now + waiting_ms, ARGV[3])
  local free = limit - redis.call('ZCARD', KEYS[1])
  local share = math.ceil(limit / math.max(1, redis.call('ZCARD', KEYS[2])))
  local give = math.min(want, free, share - held)
  for i = 1, give do
    redis.call('ZADD', KEYS[1], now + ttl, ARGV[first + i - 1])
    granted[i] = ARGV[first + i - 1]
  end
  if give >= want then redis.call('ZREM', KEYS[2], ARGV[3]) end
  redis.call('PEXPIRE', KEYS[2], waiting_ms)
else
  redis.call('ZREM', KEYS[2], ARGV[3])
end
if redis.call('ZCARD', KEYS[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return granted
