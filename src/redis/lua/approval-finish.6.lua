--[[
  End an execution: EXECUTING -> DONE | FAILED | STALE | TAMPERED, recording the result. Only the attempt
  holding the current token may finish, so an attempt that was taken over cannot overwrite the
  outcome of the one that replaced it.

  KEYS[1]  request hash            <prefix>:req:<id>
  KEYS[2]  voters set              <prefix>:req:<id>:voters
  KEYS[3]  votes list              <prefix>:req:<id>:votes
  KEYS[4]  finished marker         <prefix>:finished:<id>     (see approval-prelude-finished.lua)
  KEYS[5]  follow-up outbox        <prefix>:follow-ups:<cluster>   (sorted set: id -> ms recorded)
  KEYS[6]  audit stream            (see approval-prelude-audit.lua)

  ARGV[1]  attempt token
  ARGV[2]  final state: "DONE" | "FAILED" | "STALE" | "TAMPERED"
  ARGV[3]  result JSON
  ARGV[4]  now, ISO-8601
  ARGV[5]  retention in seconds for a request once it is terminal
  ARGV[6]  state MAC of ARGV[2] at ARGV[4]
  ARGV[7]  how long the finished marker is kept, seconds
  ARGV[8]  the request id when what follows this outcome (waits, replies) is still to run, else "":
           it goes into the outbox in this same step, so a worker that dies before running it leaves
           it to be found (by the executor's next run, or the sweep)
  ARGV[9]  now, epoch ms (the outbox score)
  ARGV[10] audit entry template (JSON, or "")

  Returns  { status, state }
           status: "OK" | "NOT_FOUND" | "INVALID_STATE" | "TOKEN_MISMATCH"; state: the state after this call

  The same finish sent again by the attempt that made it (its answer was lost with the connection,
  and the client sent the script again once reconnected) answers "OK" as the first time and changes
  nothing: the attempt goes on to say its outcome and run what follows it, which an "INVALID_STATE"
  would have left undone. The finishing token is kept for this (`finishToken`).
]]
local fields = redis.call("HMGET", KEYS[1], "state", "execToken", "finishToken")
local state = fields[1]
if not state then
  return { "NOT_FOUND", "" }
end
if state ~= "EXECUTING" then
  if state == ARGV[2] and fields[3] == ARGV[1] then
    return { "OK", state }
  end
  return { "INVALID_STATE", state }
end
if fields[2] ~= ARGV[1] then
  return { "TOKEN_MISMATCH", state }
end
local ttl = tonumber(ARGV[5])
redis.call("HSET", KEYS[1], "state", ARGV[2], "result", ARGV[3], "updatedAt", ARGV[4], "stateMac", ARGV[6],
  "finishToken", ARGV[1])
redis.call("HDEL", KEYS[1], "execToken")
clear_open(KEYS[1])
redis.call("EXPIRE", KEYS[1], ttl)
redis.call("EXPIRE", KEYS[2], ttl)
redis.call("EXPIRE", KEYS[3], ttl)
mark_finished(KEYS[4], KEYS[1], tonumber(ARGV[7]))
if ARGV[8] ~= "" then
  redis.call("ZADD", KEYS[5], tonumber(ARGV[9]), ARGV[8])
end
audit(ARGV[2])
return { "OK", ARGV[2] }
