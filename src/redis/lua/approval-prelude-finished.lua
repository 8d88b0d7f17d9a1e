--[[
  Prepended to every approval script by store.ts, after approval-prelude-open.lua. A request that reaches a terminal
  state is also recorded outside its hash, in <prefix>:finished:<id>: the terminal state, its time,
  its state MAC and the result, as the bot wrote them. The hash alone can be rolled back — its
  earlier fields (an APPROVED state, say) were validly signed — but not this record of the end:
  a request found in another state than its marker's was put back, so it is refused, once.
]]
local function mark_finished(marker_key, request_key, ttl)
  local f = redis.call("HMGET", request_key, "state", "updatedAt", "stateMac", "result")
  redis.call("DEL", marker_key)
  redis.call("HSET", marker_key, "state", f[1], "updatedAt", f[2] or "", "stateMac", f[3] or "")
  if f[4] then
    redis.call("HSET", marker_key, "result", f[4])
  end
  redis.call("EXPIRE", marker_key, ttl)
end

--[[
  When `marker_key` says the request already ended and its hash is in another state (an earlier
  record restored), put the hash back as it ended, take the id off `index_keys` (the pending and
  approved sets), and write the refusal's audit entry from `template` the first time only. `ttl` is
  the retention of a terminal request (the record is kept that long again).
  Returns the state it ended in and whether this call wrote the refusal's entry; nil when the request
  never ended or its hash still says how it ended (then nothing is done).
]]
local function refuse_finished(marker_key, request_key, id, index_keys, template, now_iso, ttl)
  local m = redis.call("HMGET", marker_key, "state", "updatedAt", "stateMac", "result", "refusedAt")
  if not m[1] then
    return nil, false
  end
  local found = redis.call("HGET", request_key, "state")
  if not found or found == m[1] then
    return nil, false
  end
  redis.call("HSET", request_key, "state", m[1], "updatedAt", m[2], "stateMac", m[3])
  if m[4] then
    redis.call("HSET", request_key, "result", m[4])
  end
  redis.call("HDEL", request_key, "execToken")
  -- The vote keys share the request's prefix (and hash tag): derived like approval-expire.2.lua derives them.
  for _, key in ipairs({ request_key, request_key .. ":voters", request_key .. ":votes" }) do
    redis.call("EXPIRE", key, ttl)
  end
  for _, key in ipairs(index_keys) do
    redis.call("ZREM", key, id)
  end
  if m[5] then
    return m[1], false
  end
  redis.call("HSET", marker_key, "refusedAt", now_iso)
  audit_raw(template, m[1], "execution.refused",
    "the request had already ended " .. m[1] .. " (" .. m[2] .. "), but its record was found " .. found ..
    " again (an earlier, validly signed state put back in Redis); refused: it is never run again, and its record is " ..
    m[1] .. " again", found)
  return m[1], true
end
