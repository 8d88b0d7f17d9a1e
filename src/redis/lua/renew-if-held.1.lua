-- Compare-and-extend: keep a claim or lease alive while it is still this holder's.
-- KEYS[1] the claim; ARGV[1] the holder's token, ARGV[2] the new life in ms.
-- 1 when it held the token and its life was extended, else 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
