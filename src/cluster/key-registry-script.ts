// Writes to the engine's key registry ({ns}:keys, {ns}:keys:rev), each one atomic Lua script (cold: a CLI command, or
// a relay refilling an engine that lost its data). A change and its revision bump can never be seen apart: a relay
// that read revision N has read every change up to N (engine-key-sync.ts reads both in one MULTI).

/**
 * KEYS: {ns}:keys, {ns}:keys:rev. ARGV: op ('add' | 'set' | 'del'), field (key hash), value (record JSON), expected
 * (set: the field's value the change was computed from, '' = absent), channel ({ns}:keys:changed).
 * Reply: the new revision (published on the channel), -1 (add: exists; del: absent), -2 (set: changed meanwhile).
 */
export const KEY_WRITE_SCRIPT = `
local cur = redis.call('HGET', KEYS[1], ARGV[2])
if ARGV[1] == 'add' then
  if cur then return -1 end
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
elseif ARGV[1] == 'set' then
  if (cur or '') ~= ARGV[4] then return -2 end
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
elseif ARGV[1] == 'del' then
  if not cur then return -1 end
  redis.call('HDEL', KEYS[1], ARGV[2])
else
  return redis.error_reply('unknown op')
end
local rev = redis.call('INCR', KEYS[2])
redis.call('PUBLISH', ARGV[5], rev)
return rev
`;

/**
 * A relay that knows engine keys finds no revision: the engine restarted without its data. It writes back what it
 * knows, unless another relay (or a CLI change) did first. KEYS: {ns}:keys, {ns}:keys:rev. ARGV: revision, then
 * field, value pairs. Reply: 1 written, 0 the revision exists (nothing written).
 */
export const KEY_RESEED_SCRIPT = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
for i = 2, #ARGV, 2 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('SET', KEYS[2], ARGV[1])
return 1
`;
