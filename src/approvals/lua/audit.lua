--[[
  Prepended to every approval script by store.ts. The audit entry of a transition is written by the
  same script that makes the transition, so no crash between the two can lose an entry, and an entry
  exists only for a transition that happened.

  Convention: KEYS[#KEYS] is the audit stream; the caller's entry template (JSON, or "" for none) is
  ARGV[#ARGV], except in expire.lua, which passes one template per id. The script fills in what only
  it knows (the state after, the event for an expiry found on the way, the attempt number).
]]
local function audit_raw(raw, after, event, result, before)
  if raw == nil or raw == "" then
    return
  end
  local entry = cjson.decode(raw)
  local max_len = entry["_maxLen"] or 100000
  entry["_maxLen"] = nil
  if after ~= nil then entry["after"] = after end
  if event ~= nil then entry["event"] = event end
  if result ~= nil then entry["result"] = result end
  if before ~= nil then entry["before"] = before end
  redis.call("XADD", KEYS[#KEYS], "MAXLEN", "~", max_len, "*", "entry", cjson.encode(entry))
end

local function audit(after, event, result, before)
  audit_raw(ARGV[#ARGV], after, event, result, before)
end

