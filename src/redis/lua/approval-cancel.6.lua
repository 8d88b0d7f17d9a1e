--[[
  Cancel a PENDING request; only its requester may.

  KEYS[1]  request hash            <prefix>:req:<id>
  KEYS[2]  voters set              <prefix>:req:<id>:voters
  KEYS[3]  votes list              <prefix>:req:<id>:votes
  KEYS[4]  pending sorted set      <prefix>:pending
  KEYS[5]  finished marker         <prefix>:finished:<id>     (see approval-prelude-finished.lua)
  KEYS[6]  audit stream            (see approval-prelude-audit.lua)

  ARGV[1]  id
  ARGV[2]  actor user id
  ARGV[3]  now, epoch ms
  ARGV[4]  now, ISO-8601
  ARGV[5]  retention in seconds for a request once it is terminal
  ARGV[6]  state MAC of CANCELLED at ARGV[4]
  ARGV[7]  state MAC of EXPIRED   at ARGV[4]
  ARGV[8]  how long the finished marker is kept, seconds
  ARGV[9]  audit entry template (JSON, or "")

  Returns  { status, state }
           status: "OK" | "NOT_FOUND" | "NOT_REQUESTER" | "INVALID_STATE" | "EXPIRED"
           ("EXPIRED": it was past its expiry, so this call marked it EXPIRED instead)
]]
local function finish(state)
  local ttl = tonumber(ARGV[5])
  local mac = ARGV[6]
  if state == "EXPIRED" then
    mac = ARGV[7]
  end
  redis.call("HSET", KEYS[1], "state", state, "updatedAt", ARGV[4], "stateMac", mac)
  clear_open(KEYS[1])
  redis.call("ZREM", KEYS[4], ARGV[1])
  redis.call("EXPIRE", KEYS[1], ttl)
  redis.call("EXPIRE", KEYS[2], ttl)
  redis.call("EXPIRE", KEYS[3], ttl)
  mark_finished(KEYS[5], KEYS[1], tonumber(ARGV[8]))
end

local fields = redis.call("HMGET", KEYS[1], "state", "requester", "expiresAtMs")
local state = fields[1]
if not state then
  return { "NOT_FOUND", "" }
end
local ended = refuse_finished(KEYS[5], KEYS[1], ARGV[1], { KEYS[4] }, ARGV[#ARGV], ARGV[4], tonumber(ARGV[5]))
if ended then
  return { "INVALID_STATE", ended }
end
if ARGV[2] ~= fields[2] then
  return { "NOT_REQUESTER", state }
end
if state ~= "PENDING" then
  return { "INVALID_STATE", state }
end
if tonumber(ARGV[3]) >= tonumber(fields[3]) then
  finish("EXPIRED")
  audit("EXPIRED", "request.expired", "the expiry passed before the cancel; nothing was changed")
  return { "EXPIRED", "EXPIRED" }
end
finish("CANCELLED")
audit("CANCELLED")
return { "OK", "CANCELLED" }
