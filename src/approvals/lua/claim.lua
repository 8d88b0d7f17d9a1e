--[[
  Claim the execution of an approved request: APPROVED -> EXECUTING with a fresh attempt token.
  A request already EXECUTING belongs to an attempt that died (BullMQ re-delivers a job only
  after its lock expired), so the new attempt takes it over: the token changes, which fences
  the old attempt out of `finish`.

  KEYS[1]  request hash            <prefix>:req:<id>
  KEYS[2]  approved sorted set     <prefix>:approved  (the id leaves it once claimed)

  ARGV[1]  attempt token
  ARGV[2]  now, ISO-8601
  ARGV[3]  id

  Returns  { status, state, attempts }
           status: "CLAIMED" (was APPROVED) | "RESUMED" (was EXECUTING) | "INVALID_STATE" | "NOT_FOUND"
           state: the state after this call; attempts: how many attempts claimed it so far
]]
local fields = redis.call("HMGET", KEYS[1], "state", "execAttempts")
local state = fields[1]
if not state then
  return { "NOT_FOUND", "", 0 }
end
if state ~= "APPROVED" and state ~= "EXECUTING" then
  redis.call("ZREM", KEYS[2], ARGV[3])
  return { "INVALID_STATE", state, tonumber(fields[2]) }
end
local attempts = redis.call("HINCRBY", KEYS[1], "execAttempts", 1)
redis.call("HSET", KEYS[1], "state", "EXECUTING", "execToken", ARGV[1], "updatedAt", ARGV[2])
redis.call("ZREM", KEYS[2], ARGV[3])
if state == "APPROVED" then
  return { "CLAIMED", "EXECUTING", attempts }
end
return { "RESUMED", "EXECUTING", attempts }
