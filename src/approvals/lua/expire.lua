--[[
  Sweep: every PENDING request whose expiry has passed becomes EXPIRED.
  Request keys are derived from the ids in the pending set (single-instance Redis; the keys
  share the prefix, so they would share a slot only with a hash-tagged prefix on a cluster).

  KEYS[1]  pending sorted set      <prefix>:pending

  ARGV[1]  now, epoch ms
  ARGV[2]  request key prefix      "<prefix>:req:"
  ARGV[3]  now, ISO-8601
  ARGV[4]  retention in seconds for a request once it is terminal
  ARGV[5]  at most this many requests per call

  Returns  the ids this call moved to EXPIRED (ids found in any other state are only unlisted)
]]
local due = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", ARGV[1], "LIMIT", 0, tonumber(ARGV[5]))
local ttl = tonumber(ARGV[4])
local expired = {}
for _, id in ipairs(due) do
  local key = ARGV[2] .. id
  redis.call("ZREM", KEYS[1], id)
  if redis.call("HGET", key, "state") == "PENDING" then
    redis.call("HSET", key, "state", "EXPIRED", "updatedAt", ARGV[3])
    redis.call("EXPIRE", key, ttl)
    redis.call("EXPIRE", key .. ":voters", ttl)
    redis.call("EXPIRE", key .. ":votes", ttl)
    expired[#expired + 1] = id
  end
end
return expired
