-- Compare-and-delete: give a claim or lease up, unless another holder has it by now.
-- KEYS[1] the claim; ARGV[1] the holder's token. 1 when it held the token and was deleted, else 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
