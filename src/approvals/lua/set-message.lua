--[[
  Remember which Slack message shows a request (not a state transition).

  KEYS[1]  request hash            <prefix>:req:<id>

  ARGV[1]  message JSON { channel, ts }

  Returns  1 when stored, 0 when the request does not exist (nothing created)
]]
if redis.call("EXISTS", KEYS[1]) == 0 then
  return 0
end
redis.call("HSET", KEYS[1], "message", ARGV[1])
return 1
