-- A shared edge look: `<ms>|<look>` or nil. KEYS[1] the look.
return redis.call('GET', KEYS[1])
