--[[
  Create a PENDING approval request, unless another request for the same object has not ended yet
  (PENDING and unexpired, APPROVED or EXECUTING): one request per object, so a second `finalize`
  links to the first instead of racing it. Terminal transitions clear the pointer (approval-prelude-open.lua).

  KEYS[1]  request hash            <prefix>:req:<id>
  KEYS[2]  pending sorted set      <prefix>:pending   (member id, score expiresAtMs)
  KEYS[3]  open-request pointer    <prefix>:open:<target>  (id of the pending request for this object)
  KEYS[4]  audit stream            (see approval-prelude-audit.lua)

  ARGV[1]  id
  ARGV[2]  doc: JSON of the immutable part of the request (plan, requester, reason, ...)
  ARGV[3]  requester user id
  ARGV[4]  expiresAt in epoch ms
  ARGV[5]  approvals required (besides the requester)
  ARGV[6]  now, ISO-8601
  ARGV[7]  request MAC (HMAC of id and doc, computed by the bot)
  ARGV[8]  state MAC of PENDING at ARGV[6]
  ARGV[9]  request key prefix      "<prefix>:req:"
  ARGV[10] now, epoch ms
  ARGV[11] audit entry template (JSON, or "")

  Returns  { status, id }
           status 1: created (id = ARGV[1]); 0: a request with this id exists (nothing changed);
           2: another request for this object has not ended (id = that request)
]]
if redis.call("EXISTS", KEYS[1]) == 1 then
  return { 0, "" }
end
local open = redis.call("GET", KEYS[3])
if open then
  local fields = redis.call("HMGET", ARGV[9] .. open, "state", "expiresAtMs")
  local state = fields[1]
  if (state == "PENDING" and tonumber(fields[2]) > tonumber(ARGV[10]))
    or state == "APPROVED" or state == "EXECUTING" then
    return { 2, open }
  end
end
redis.call("HSET", KEYS[1],
  "doc", ARGV[2],
  "docMac", ARGV[7],
  "state", "PENDING",
  "stateMac", ARGV[8],
  "requester", ARGV[3],
  "expiresAtMs", ARGV[4],
  "approvalsRequired", ARGV[5],
  "approvals", 0,
  "execAttempts", 0,
  "updatedAt", ARGV[6],
  "openKey", KEYS[3])
redis.call("ZADD", KEYS[2], ARGV[4], ARGV[1])
-- Cleared by the request's terminal transition; the expiry only bounds a pointer whose request vanished.
redis.call("SET", KEYS[3], ARGV[1], "PX", 7 * 86400000)
audit("PENDING")
return { 1, ARGV[1] }
