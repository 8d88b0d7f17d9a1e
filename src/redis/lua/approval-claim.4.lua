--[[
  Claim the execution of an approved request: APPROVED -> EXECUTING with a fresh attempt token.
  A request already EXECUTING belongs to an attempt that died (BullMQ re-delivers a job only
  after its lock expired), so the new attempt takes it over: the token changes, which fences
  the old attempt out of `finish`. The state the request was claimed from is returned with its
  MAC so the executor can verify that the transition into it was signed by the bot.

  KEYS[1]  request hash            <prefix>:req:<id>
  KEYS[2]  approved sorted set     <prefix>:approved  (the id leaves it once claimed)
  KEYS[3]  finished marker         <prefix>:finished:<id>     (see approval-prelude-finished.lua)
  KEYS[4]  audit stream            (see approval-prelude-audit.lua)

  ARGV[1]  attempt token
  ARGV[2]  now, ISO-8601
  ARGV[3]  id
  ARGV[4]  state MAC of EXECUTING at ARGV[2]
  ARGV[5]  retention in seconds for a request once it is terminal
  ARGV[6]  audit entry template (JSON, or "")

  Returns  { status, state, attempts, priorState, priorUpdatedAt, priorStateMac, refusedNow }
           status: "CLAIMED" (was APPROVED) | "RESUMED" (was EXECUTING) | "INVALID_STATE" | "NOT_FOUND"
                   | "FINISHED" (it had ended already and its record was put back: refused, restored;
                   refusedNow = 1 for the one call that wrote the refusal's audit entry)
           state: the state after this call; attempts: how many attempts claimed it so far
           prior*: the state, transition time and state MAC found before this call ("" when absent)

  The same claim sent again by the attempt that made it (its answer was lost with the connection, and
  the client sent the script again once reconnected) answers as the first time, with the state it
  was claimed from (kept as `claimedFrom`), and changes nothing: it is not read as a take-over.
]]
local fields = redis.call("HMGET", KEYS[1], "state", "execAttempts", "updatedAt", "stateMac", "execToken", "claimedFrom")
local state = fields[1]
if not state then
  return { "NOT_FOUND", "", 0, "", "", "" }
end
local priorAt = fields[3] or ""
local priorMac = fields[4] or ""
local ended, refused_now = refuse_finished(KEYS[3], KEYS[1], ARGV[3], { KEYS[2] }, ARGV[#ARGV], ARGV[2], tonumber(ARGV[5]))
if ended then
  return { "FINISHED", ended, tonumber(fields[2]) or 0, state, priorAt, priorMac, refused_now and 1 or 0 }
end
if state == "EXECUTING" and fields[5] == ARGV[1] and fields[6] then
  local from = cjson.decode(fields[6])
  local status = from[1] == "APPROVED" and "CLAIMED" or "RESUMED"
  return { status, "EXECUTING", tonumber(fields[2]) or 0, from[1], from[2], from[3] }
end
if state ~= "APPROVED" and state ~= "EXECUTING" then
  redis.call("ZREM", KEYS[2], ARGV[3])
  return { "INVALID_STATE", state, tonumber(fields[2]) or 0, state, priorAt, priorMac }
end
local attempts = redis.call("HINCRBY", KEYS[1], "execAttempts", 1)
redis.call("HSET", KEYS[1], "state", "EXECUTING", "execToken", ARGV[1], "updatedAt", ARGV[2], "stateMac", ARGV[4],
  "claimedFrom", cjson.encode({ state, priorAt, priorMac }))
redis.call("ZREM", KEYS[2], ARGV[3])
if state == "APPROVED" then
  audit("EXECUTING", "execution.claimed", nil, "APPROVED")
  return { "CLAIMED", "EXECUTING", attempts, state, priorAt, priorMac }
end
audit("EXECUTING", "execution.resumed", "attempt " .. attempts .. " takes over from an interrupted attempt", "EXECUTING")
return { "RESUMED", "EXECUTING", attempts, state, priorAt, priorMac }
