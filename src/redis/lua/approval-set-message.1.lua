--[[
  Remember which Slack message shows a request (not a state transition), with the bot's signature of
  it: a repaint or a reply about the request touches this message only when the signature verifies.

  KEYS[1]  request hash            <prefix>:req:<id>

  ARGV[1]  message JSON { channel, ts }
  ARGV[2]  the bot's signature of the request id, its document's signature, the channel and the ts

  Returns  1 when stored, 0 when the request does not exist (nothing created)
]]
if redis.call("EXISTS", KEYS[1]) == 0 then
  return 0
end
redis.call("HSET", KEYS[1], "message", ARGV[1], "messageMac", ARGV[2])
return 1
