--[[
  Create a PENDING approval request.

  KEYS[1]  request hash            <prefix>:req:<id>
  KEYS[2]  pending sorted set      <prefix>:pending   (member id, score expiresAtMs)

  ARGV[1]  id
  ARGV[2]  doc: JSON of the immutable part of the request (plan, requester, reason, ...)
  ARGV[3]  requester user id
  ARGV[4]  expiresAt in epoch ms
  ARGV[5]  approvals required (besides the requester)
  ARGV[6]  now, ISO-8601

  Returns  1 when created, 0 when a request with this id already exists (nothing changed).
]]
if redis.call("EXISTS", KEYS[1]) == 1 then
  return 0
end
redis.call("HSET", KEYS[1],
  "doc", ARGV[2],
  "state", "PENDING",
  "requester", ARGV[3],
  "expiresAtMs", ARGV[4],
  "approvalsRequired", ARGV[5],
  "approvals", 0,
  "execAttempts", 0,
  "updatedAt", ARGV[6])
redis.call("ZADD", KEYS[2], ARGV[4], ARGV[1])
return 1
