--[[
  Record one vote on a PENDING request, atomically. Enough approvals move it to APPROVED; a deny
  moves it to DENIED. Because the check and the move happen in one script, exactly one caller
  sees transitioned = 1 and enqueues the execution, however many clicks arrive at once.

  KEYS[1]  request hash            <prefix>:req:<id>
  KEYS[2]  voters set              <prefix>:req:<id>:voters   (user ids that voted)
  KEYS[3]  votes list              <prefix>:req:<id>:votes    (vote JSON, in order)
  KEYS[4]  pending sorted set      <prefix>:pending
  KEYS[5]  approved sorted set     <prefix>:approved  (member id, score approval time ms) — requests
           approved but not yet claimed by an executor, so a lost enqueue can be repaired
  KEYS[6]  finished marker         <prefix>:finished:<id>     (see approval-prelude-finished.lua)
  KEYS[7]  audit stream            (see approval-prelude-audit.lua)

  ARGV[1]  id
  ARGV[2]  voter user id
  ARGV[3]  decision: "approve" | "deny"
  ARGV[4]  now, epoch ms
  ARGV[5]  vote JSON to append
  ARGV[6]  now, ISO-8601
  ARGV[7]  retention in seconds for a request once it is terminal
  ARGV[8]  state MAC of PENDING  at ARGV[6]   (computed by the bot: Redis never holds the key)
  ARGV[9]  state MAC of APPROVED at ARGV[6]
  ARGV[10] state MAC of DENIED   at ARGV[6]
  ARGV[11] state MAC of EXPIRED  at ARGV[6]
  ARGV[12] how long the finished marker is kept, seconds
  ARGV[13] this call's nonce (random, one per call: a resent script carries the same)
  ARGV[14] audit entry template (JSON, or "")

  Returns  { status, state, approvals, transitioned }
           status: "OK" | "NOT_FOUND" | "INVALID_STATE" | "EXPIRED" | "SELF_APPROVAL" | "ALREADY_VOTED"
                   | "FINISHED" (it had ended already and its record was put back: refused, restored)
           state: the state after this call ("" when not found)
           approvals: approvals recorded so far
           transitioned: 1 when THIS call changed the state (to APPROVED, DENIED or EXPIRED), else 0

  The same call sent again (its answer was lost with the connection, and the client sent the script
  again once reconnected) is known by its nonce, kept per voter once the vote is recorded: it answers
  "OK" as the first time and changes nothing. It moved the state when its vote is the last and the
  request is no longer PENDING, so the approving vote still enqueues its execution and the voter is
  not told that votes are closed. A second click is a new call: refused as before.
]]
local STATE_MAC = { PENDING = ARGV[8], APPROVED = ARGV[9], DENIED = ARGV[10], EXPIRED = ARGV[11] }

local function finish(state)
  redis.call("HSET", KEYS[1], "state", state, "updatedAt", ARGV[6], "stateMac", STATE_MAC[state])
  redis.call("ZREM", KEYS[4], ARGV[1])
  if state == "APPROVED" then
    redis.call("ZADD", KEYS[5], ARGV[4], ARGV[1])
  else
    clear_open(KEYS[1])
    local ttl = tonumber(ARGV[7])
    redis.call("EXPIRE", KEYS[1], ttl)
    redis.call("EXPIRE", KEYS[2], ttl)
    redis.call("EXPIRE", KEYS[3], ttl)
    mark_finished(KEYS[6], KEYS[1], tonumber(ARGV[12]))
  end
end

-- The approvals recorded so far (the votes this script wrote), for the audit entry.
local function approvers()
  local out = {}
  for _, raw in ipairs(redis.call("LRANGE", KEYS[3], 0, -1)) do
    local ok, vote = pcall(cjson.decode, raw)
    if ok and type(vote) == "table" and vote["decision"] == "approve" and type(vote["voter"]) == "table"
      and type(vote["voter"]["userId"]) == "string" then
      out[#out + 1] = vote["voter"]["userId"]
    end
  end
  if #out == 0 then
    return nil
  end
  return { approvers = out }
end

local fields = redis.call("HMGET", KEYS[1], "state", "requester", "expiresAtMs", "approvalsRequired", "approvals")
-- The audit entry's result: the tally, and the voter's reason when they gave one (it is in the vote).
local function tally(count)
  local text = count .. "/" .. fields[4] .. " approvals"
  local ok, vote = pcall(cjson.decode, ARGV[5])
  if ok and type(vote) == "table" and type(vote["reason"]) == "string" then
    text = text .. "; why: " .. vote["reason"]
  end
  return text
end

local state = fields[1]
if not state then
  return { "NOT_FOUND", "", 0, 0 }
end
local ended = refuse_finished(KEYS[6], KEYS[1], ARGV[1], { KEYS[4], KEYS[5] }, ARGV[#ARGV], ARGV[6], tonumber(ARGV[7]))
if ended then
  return { "FINISHED", ended, tonumber(fields[5]) or 0, 0 }
end
local approvals = tonumber(fields[5])
if redis.call("HGET", KEYS[1], "voteNonce:" .. ARGV[2]) == ARGV[13] then
  local last = redis.call("LRANGE", KEYS[3], -1, -1)[1]
  return { "OK", state, approvals, (last == ARGV[5] and state ~= "PENDING") and 1 or 0 }
end
if state ~= "PENDING" then
  return { "INVALID_STATE", state, approvals, 0 }
end
if tonumber(ARGV[4]) >= tonumber(fields[3]) then
  finish("EXPIRED")
  audit("EXPIRED", "request.expired", "the expiry passed before this vote; nothing was changed")
  return { "EXPIRED", "EXPIRED", approvals, 1 }
end
if ARGV[2] == fields[2] then
  return { "SELF_APPROVAL", state, approvals, 0 }
end
if redis.call("SADD", KEYS[2], ARGV[2]) == 0 then
  return { "ALREADY_VOTED", state, approvals, 0 }
end
redis.call("RPUSH", KEYS[3], ARGV[5])
redis.call("HSET", KEYS[1], "voteNonce:" .. ARGV[2], ARGV[13])
if ARGV[3] == "deny" then
  finish("DENIED")
  audit("DENIED", nil, tally(approvals), nil, approvers())
  return { "OK", "DENIED", approvals, 1 }
end
approvals = redis.call("HINCRBY", KEYS[1], "approvals", 1)
if approvals >= tonumber(fields[4]) then
  finish("APPROVED")
  audit("APPROVED", nil, tally(approvals), nil, approvers())
  return { "OK", "APPROVED", approvals, 1 }
end
redis.call("HSET", KEYS[1], "updatedAt", ARGV[6], "stateMac", STATE_MAC.PENDING)
audit("PENDING", nil, tally(approvals), nil, approvers())
return { "OK", "PENDING", approvals, 0 }
