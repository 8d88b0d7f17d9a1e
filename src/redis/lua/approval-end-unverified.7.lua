--[[
  End a request whose record this bot cannot trust any more (signed before approvals were signed with
  Ed25519, or not signed by any key it holds), before anything executes it: PENDING -> EXPIRED,
  APPROVED -> FAILED, with the result saying why. Only when the request is still in the state the
  caller found it in, so a request that moved meanwhile is left alone.

  KEYS[1]  request hash            <prefix>:req:<id>
  KEYS[2]  voters set              <prefix>:req:<id>:voters
  KEYS[3]  votes list              <prefix>:req:<id>:votes
  KEYS[4]  pending sorted set      <prefix>:pending
  KEYS[5]  approved sorted set     <prefix>:approved
  KEYS[6]  finished marker         <prefix>:finished:<id>     (see approval-prelude-finished.lua)
  KEYS[7]  audit stream            (see approval-prelude-audit.lua)

  ARGV[1]  id
  ARGV[2]  the state the caller found: "PENDING" | "APPROVED"
  ARGV[3]  the state to end in: "EXPIRED" | "FAILED"
  ARGV[4]  now, ISO-8601
  ARGV[5]  the end state's signature at ARGV[4], over the result ARGV[6]
  ARGV[6]  result JSON
  ARGV[7]  retention in seconds for a request once it is terminal
  ARGV[8]  how long the finished marker is kept, seconds
  ARGV[9]  audit entry template (JSON, or "")

  Returns  { status, state }: "OK" | "MOVED" (no longer in ARGV[2]: left alone) | "NOT_FOUND"
]]
local state = redis.call("HGET", KEYS[1], "state")
if not state then
  redis.call("ZREM", KEYS[4], ARGV[1])
  redis.call("ZREM", KEYS[5], ARGV[1])
  return { "NOT_FOUND", "" }
end
if state ~= ARGV[2] then
  return { "MOVED", state }
end
local ttl = tonumber(ARGV[7])
redis.call("HSET", KEYS[1], "state", ARGV[3], "result", ARGV[6], "updatedAt", ARGV[4], "stateMac", ARGV[5])
redis.call("HDEL", KEYS[1], "execToken")
redis.call("ZREM", KEYS[4], ARGV[1])
redis.call("ZREM", KEYS[5], ARGV[1])
clear_open(KEYS[1])
redis.call("EXPIRE", KEYS[1], ttl)
redis.call("EXPIRE", KEYS[2], ttl)
redis.call("EXPIRE", KEYS[3], ttl)
mark_finished(KEYS[6], KEYS[1], tonumber(ARGV[8]))
audit(ARGV[3])
return { "OK", ARGV[3] }
