-- Keep the newest look of an edge check; give up the claim if it is still this wait's.
-- KEYS[1] the look, KEYS[2] the claim; ARGV: the look, its ms, how long it is kept (ms), the
-- wait's token ('' when it held no claim).
local old = redis.call('GET', KEYS[1])
local at = tonumber(ARGV[2])
if not old or (tonumber(string.match(old, '^(%d+)|')) or 0) <= at then
  redis.call('SET', KEYS[1], ARGV[2] .. '|' .. ARGV[1], 'PX', ARGV[3])
end
if ARGV[4] ~= '' and redis.call('GET', KEYS[2]) == ARGV[4] then redis.call('DEL', KEYS[2]) end
return 1
