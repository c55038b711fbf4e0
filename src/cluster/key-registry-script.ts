// The engine's key registry ({ns}:keys, {ns}:keys:rev, {ns}:keys:log), read and written by atomic Lua scripts (cold: a
// CLI command, a relay's key sync, a relay refilling an engine that lost its data). A change, its revision bump and
// its log entry are never seen apart: a relay that read revision N has every change up to N. The log is a sorted set
// hash -> revision of the key's last change (one member per key ever added), so a relay reads only the records changed
// since the revision it has: O(changes) per change, not the whole registry, at any number of keys.

/**
 * KEYS: {ns}:keys, {ns}:keys:rev, {ns}:keys:log. ARGV: op ('add' | 'set' | 'del'), field (key hash), value (record JSON), expected
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
redis.call('ZADD', KEYS[3], rev, ARGV[2])
redis.call('PUBLISH', ARGV[5], rev)
return rev
`;

/**
 * What changed since revision ARGV[1] (-1: everything). KEYS: {ns}:keys, {ns}:keys:rev, {ns}:keys:log.
 * Reply: {-1} when there is no registry; else {revision, full (1: every present key, 0: only the changed ones), then
 * hash, record pairs ('' = removed)}. A full answer also comes when the engine's revision is below the one asked from
 * (the engine went back: restored, or refilled by another relay): the caller then drops what the answer lacks.
 */
export const KEY_READ_SCRIPT = `
local r = redis.call('GET', KEYS[2])
if not r then return {-1} end
local rev = tonumber(r)
local since = tonumber(ARGV[1])
if rev == since then return {rev, 0} end
local full = since < 0 or rev < since
local hashes
if full then hashes = redis.call('HKEYS', KEYS[1]) else hashes = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. since, '+inf') end
local out = {rev, full and 1 or 0}
for _, h in ipairs(hashes) do
  out[#out + 1] = h
  out[#out + 1] = redis.call('HGET', KEYS[1], h) or ''
end
return out
`;

/**
 * A relay that knows engine keys finds no revision: the engine restarted without its data. It writes back what it
 * knows, unless another relay (or a CLI change) did first. KEYS: {ns}:keys, {ns}:keys:rev, {ns}:keys:log. ARGV:
 * revision, then field, value pairs. Reply: 1 written, 0 the revision exists (nothing written).
 */
export const KEY_RESEED_SCRIPT = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
for i = 2, #ARGV, 2 do
  redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1])
  redis.call('ZADD', KEYS[3], ARGV[1], ARGV[i])
end
redis.call('SET', KEYS[2], ARGV[1])
return 1
`;
