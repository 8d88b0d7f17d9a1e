-- Keep a process's Kubernetes request leases alive while their requests run.
-- KEYS[1] the leases. ARGV: lease ms, then the ids to keep alive (only those still held: XX).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + ttl, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ttl)
return 0
