-- The post ledger's last step: the record of what was posted replaces the claim.
-- KEYS[1] the step's record; ARGV[1] the record, ARGV[2] how long it is kept, in seconds.
return redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
