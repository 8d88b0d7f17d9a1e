--[[
  Prepended to every approval script by store.ts. The audit entry of a transition is written by the
  same script that makes the transition, so no crash between the two can lose an entry, and an entry
  exists only for a transition that happened.

  Convention: KEYS[#KEYS] is the audit stream; the caller's entry template (JSON, or "" for none) is
  ARGV[#ARGV], except in approval-expire.2.lua, which passes one template per id. The script fills in what only
  it knows (the state after, the event for an expiry found on the way, the attempt number; `extra`:
  more fields, e.g. the approvers a vote script reads).

  Every entry written is also kept in AUDIT_WRITTEN, which store.ts has each script return beside its
  own reply: the bot logs exactly what the stream received (see `logAuditEntry`).
]]
local AUDIT_WRITTEN = {}

local function audit_raw(raw, after, event, result, before, extra)
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
  if extra ~= nil then
    for k, v in pairs(extra) do entry[k] = v end
  end
  local encoded = cjson.encode(entry)
  redis.call("XADD", KEYS[#KEYS], "MAXLEN", "~", max_len, "*", "entry", encoded)
  AUDIT_WRITTEN[#AUDIT_WRITTEN + 1] = encoded
end

local function audit(after, event, result, before, extra)
  audit_raw(ARGV[#ARGV], after, event, result, before, extra)
end

