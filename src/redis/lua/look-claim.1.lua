-- Claim the next look of an edge check, so one wait reads AWS while the others wait for its look.
-- KEYS[1] the claim; ARGV[1] the wait's token, ARGV[2] the claim's life in ms. 1 when claimed.
return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0
