// The engine's revocations ({ns}:revoked, {ns}:revoked:rev), read and written by atomic Lua scripts (cold: a `keys
// revoke|restore` command, a relay's poll, a relay writing back what an engine restarted without its data lost).
// {ns}:revoked:rev is a hash {epoch, rev}: `epoch` is a random id set when the engine first holds revocations (after a
// restart without data, a new one), `rev` counts the changes since. With it a relay tells "nobody is revoked" (its
// epoch, a revision at least the one it read: `restore` lifted them) from "the engine forgot" (no epoch, another one,
// or a lower revision: restarted empty, or from an older snapshot). An empty {ns}:revoked alone looks the same in both
// cases; reading it as the first un-revoked every key after a restart (issue 30, item 1).
import { randomBytes } from 'node:crypto';

/** A fresh epoch for {ns}:revoked:rev (written only when the engine has none). */
export const newEpoch = (): string => randomBytes(8).toString('hex');

/**
 * `keys revoke|restore`. KEYS: {ns}:revoked, {ns}:revoked:rev. ARGV: op ('revoke' | 'restore'), key hash, value
 * (revoke: JSON {at}), channel ({ns}:keys:changed), a fresh epoch (used when the engine has none).
 * Reply: 1 changed, 0 restore of a key not revoked. A change bumps the revision and publishes 'revoked'.
 */
export const REVOCATION_WRITE_SCRIPT = `
local n
if ARGV[1] == 'revoke' then
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
  n = 1
elseif ARGV[1] == 'restore' then
  n = redis.call('HDEL', KEYS[1], ARGV[2])
else
  return redis.error_reply('unknown op')
end
if n == 1 then
  redis.call('HSETNX', KEYS[2], 'epoch', ARGV[5])
  redis.call('HINCRBY', KEYS[2], 'rev', 1)
  redis.call('PUBLISH', ARGV[4], 'revoked')
end
return n
`;

/**
 * A relay's read. KEYS: {ns}:revoked, {ns}:revoked:rev. Reply: {epoch ('' = none), revision (-1 = none), then hash,
 * value pairs}.
 */
export const REVOCATION_READ_SCRIPT = `
local m = redis.call('HMGET', KEYS[2], 'epoch', 'rev')
local out = {m[1] or '', tonumber(m[2] or '-1')}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all do out[#out + 1] = all[i] end
return out
`;

/**
 * A relay found the engine without revocations it had read there (see above): it writes them back, keeping whatever
 * the engine holds now (HSETNX: revocations are only ever added here; only `restore` removes one), bumps the revision
 * (an epoch when there is none) and publishes 'revoked'. Two relays doing it at once write the same: the second adds
 * nothing. KEYS: {ns}:revoked, {ns}:revoked:rev. ARGV: channel, a fresh epoch, then hash, value pairs.
 * Reply: how many revocations were added (0: another relay had written them back already; nothing bumped).
 */
export const REVOCATION_RESEED_SCRIPT = `
local wrote = 0
for i = 3, #ARGV, 2 do wrote = wrote + redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end
if wrote == 0 then return 0 end
redis.call('HSETNX', KEYS[2], 'epoch', ARGV[2])
redis.call('HINCRBY', KEYS[2], 'rev', 1)
redis.call('PUBLISH', ARGV[1], 'revoked')
return wrote
`;
