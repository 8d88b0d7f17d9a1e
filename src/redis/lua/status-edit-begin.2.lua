-- Before a status edit: take the message's lease and decide.
-- KEYS[1] the record (hash: at, final), KEYS[2] the lease (its value: token, then ":1" when the edit
-- holding it is final). ARGV: lease token, lease ms, this edit's stamp, "1" when final.
-- Returns "send" (lease taken), "send-beside" (a final edit beside another final one in flight:
-- either landing last shows a result, so it need not wait), "drop" (a later or final edit was
-- sent), or "busy" (a progress edit holds the lease).
local rec = redis.call('HMGET', KEYS[1], 'at', 'final')
local at = tonumber(rec[1] or '0') or 0
local shown_final = rec[2] == '1'
local mine = tonumber(ARGV[3])
if (shown_final and ARGV[4] ~= '1') or at > mine then return 'drop' end
local held = redis.call('GET', KEYS[2])
-- This edit's own lease: the script ran, its answer was lost with the connection and the client sent
-- it again. The edit is this run's to send.
if held == ARGV[1] .. ':' .. ARGV[4] then return 'send' end
if held then
  if ARGV[4] == '1' and string.sub(held, -2) == ':1' then return 'send-beside' end
  return 'busy'
end
redis.call('SET', KEYS[2], ARGV[1] .. ':' .. ARGV[4], 'PX', ARGV[2])
return 'send'
