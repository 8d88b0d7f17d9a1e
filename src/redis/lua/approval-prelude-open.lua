--[[
  Prepended to every approval script by store.ts, after approval-prelude-audit.lua. One request per object: approval-create.4.lua
  points <prefix>:open:<subject> at the new request and records that key in the request hash
  ("openKey"); every terminal transition clears the pointer while it still names this request, so the
  object is free for a new request the moment this one ends.
]]
local function clear_open(request_key)
  local open_key = redis.call("HGET", request_key, "openKey")
  if not open_key then
    return
  end
  local id = redis.call("GET", open_key)
  if id and string.sub(request_key, -(#id + 5)) == ":req:" .. id then
    redis.call("DEL", open_key)
  end
end
