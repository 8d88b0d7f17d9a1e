--[[
  Sweep: PENDING requests whose expiry has passed become EXPIRED. The bot lists the due ids first
  and signs each transition (Redis never holds the key); this script re-checks each one, so a
  request voted on meanwhile is left alone. Request keys are derived from the ids (single-instance
  Redis; the keys share the prefix, so they would share a slot only with a hash-tagged prefix on a
  cluster).

  KEYS[1]  pending sorted set      <prefix>:pending

  ARGV[1]  now, epoch ms
  ARGV[2]  request key prefix      "<prefix>:req:"
  ARGV[3]  now, ISO-8601
  ARGV[4]  retention in seconds for a request once it is terminal
  ARGV[5]  finished marker prefix  "<prefix>:finished:" (see approval-prelude-finished.lua)
  ARGV[6]  how long the finished marker is kept, seconds
  KEYS[2]  audit stream            (see approval-prelude-audit.lua)
  ARGV[7], ARGV[8], ARGV[9], ...  triples: id, state MAC of EXPIRED at ARGV[3] for that id, its
           audit entry template (JSON, or "")

  Returns  the ids this call moved to EXPIRED (due ids found in any other state are only unlisted)
]]
local ttl = tonumber(ARGV[4])
local now = tonumber(ARGV[1])
local expired = {}
for i = 7, #ARGV - 2, 3 do
  local id = ARGV[i]
  local score = redis.call("ZSCORE", KEYS[1], id)
  if score and tonumber(score) <= now then
    local key = ARGV[2] .. id
    local marker = ARGV[5] .. id
    redis.call("ZREM", KEYS[1], id)
    if refuse_finished(marker, key, id, {}, ARGV[i + 2], ARGV[3], ttl) then
      -- It had ended already: put back as it ended, not expired a second time.
    elseif redis.call("HGET", key, "state") == "PENDING" then
      redis.call("HSET", key, "state", "EXPIRED", "updatedAt", ARGV[3], "stateMac", ARGV[i + 1])
      clear_open(key)
      redis.call("EXPIRE", key, ttl)
      redis.call("EXPIRE", key .. ":voters", ttl)
      redis.call("EXPIRE", key .. ":votes", ttl)
      mark_finished(marker, key, tonumber(ARGV[6]))
      audit_raw(ARGV[i + 2], "EXPIRED")
      expired[#expired + 1] = id
    end
  end
end
return expired
