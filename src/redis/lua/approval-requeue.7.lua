--[[
  The sweep's repair of an approved request whose execution was never claimed (see
  `ApprovalWorkflow.requeueApproved`), in two calls around the enqueue:
  - "check": may it be queued again? A request that ended already (its finished marker says so) and
    was put back is refused (approval-prelude-finished.lua: restored, unlisted, audited once); one no longer APPROVED
    is only unlisted.
  - "count": the same checks, then count the requeue. Past the maximum the request ends FAILED,
    with one audit entry: a request the sweep keeps finding approved and unclaimed never loops.

  KEYS[1]  request hash            <prefix>:req:<id>
  KEYS[2]  voters set              <prefix>:req:<id>:voters
  KEYS[3]  votes list              <prefix>:req:<id>:votes
  KEYS[4]  approved sorted set     <prefix>:approved
  KEYS[5]  finished marker         <prefix>:finished:<id>
  KEYS[6]  requeue counter         <prefix>:requeues:<id>
  KEYS[7]  audit stream            (see approval-prelude-audit.lua)

  ARGV[1]  id
  ARGV[2]  mode: "check" | "count"
  ARGV[3]  now, ISO-8601
  ARGV[4]  retention in seconds for a request once it is terminal
  ARGV[5]  how long the finished marker is kept, seconds
  ARGV[6]  most requeues counted before the request ends FAILED
  ARGV[7]  state MAC of FAILED at ARGV[3]
  ARGV[8]  result JSON of that FAILED end
  ARGV[9]  audit entry template (JSON, or ""): of the refusal, or of the end past the maximum

  Returns  { status, state, count }
           status: "OK" (may be queued; "count": counted) | "FINISHED" (ended already: refused)
                   | "NOT_APPROVED" (unlisted) | "NOT_FOUND" | "GAVE_UP" (past the maximum: FAILED)
]]
local state = redis.call("HGET", KEYS[1], "state")
if not state then
  redis.call("ZREM", KEYS[4], ARGV[1])
  return { "NOT_FOUND", "", 0 }
end
local ttl = tonumber(ARGV[4])
local ended = refuse_finished(KEYS[5], KEYS[1], ARGV[1], { KEYS[4] }, ARGV[#ARGV], ARGV[3], ttl)
if ended then
  return { "FINISHED", ended, 0 }
end
if state ~= "APPROVED" then
  redis.call("ZREM", KEYS[4], ARGV[1])
  return { "NOT_APPROVED", state, 0 }
end
if ARGV[2] ~= "count" then
  return { "OK", state, tonumber(redis.call("GET", KEYS[6]) or "0") }
end
local count = redis.call("INCR", KEYS[6])
redis.call("EXPIRE", KEYS[6], ttl)
if count <= tonumber(ARGV[6]) then
  return { "OK", state, count }
end
redis.call("HSET", KEYS[1], "state", "FAILED", "result", ARGV[8], "updatedAt", ARGV[3], "stateMac", ARGV[7])
redis.call("HDEL", KEYS[1], "execToken")
redis.call("ZREM", KEYS[4], ARGV[1])
clear_open(KEYS[1])
redis.call("EXPIRE", KEYS[1], ttl)
redis.call("EXPIRE", KEYS[2], ttl)
redis.call("EXPIRE", KEYS[3], ttl)
mark_finished(KEYS[5], KEYS[1], tonumber(ARGV[5]))
audit("FAILED", nil, nil, "APPROVED")
return { "GAVE_UP", "FAILED", count }
