-- The post ledger's first step: the record if there is one, else a claim for this run (and nil).
-- KEYS[1] the step's record; ARGV[1] the run's claim token, ARGV[2] the claim's life in ms.
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
