-- Take a request's follow-up from its cluster's outbox to run it, unless another runner holds it.
-- KEYS[1] the outbox (request id -> ms it may be taken from); ARGV: id, now ms, held-until ms.
-- 1 when claimed (its score moves to held-until), 0 when absent or held.
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s or tonumber(s) > tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
