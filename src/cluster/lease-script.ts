// The shared token bucket of one key and budget class, as one atomic Lua script run by the engine (Redis 7; cold:
// one call per key in use per lease interval, pipelined). The bucket refills at the plan's rate on the ENGINE's
// clock (TIME), so relays whose clocks differ still share one budget. One call settles a relay's account and leases
// the next slice:
//   ARGV: rate per second, burst, want (tokens to lease), debt (tokens spent beyond the last lease: the overdraft),
//         returned (leased tokens not used), ttlMs (the hash expires after a full refill: an absent hash is full)
//   reply: {granted, tokensLeftAfter (floored)}
// Debt can take the bucket below zero (down to -burst): other relays then get nothing until the refill pays it.

export const LEASE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local debt = tonumber(ARGV[4])
local ret = tonumber(ARGV[5])
local v = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(v[1])
local at = tonumber(v[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000)
end
tokens = math.min(burst, tokens + ret) - debt
if tokens < -burst then tokens = -burst end
local grant = 0
if want > 0 and tokens >= 1 then grant = math.min(want, math.floor(tokens)) end
tokens = tokens - grant
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return {grant, math.floor(tokens)}
`;

export const LEASE_COMMAND = 'slotrelayLease';
