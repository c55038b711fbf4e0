// `slotrelay keys revoke|restore|revoked` (cold, a one-shot command): revoke a key for every relay of the service, on
// any relay's host, through the engine named by that relay's config (cluster.url). The key is chosen by its name (in
// the config, or of a key added through the engine: keys-plan-cli.ts) or given itself (--key); the engine receives
// only its hash (engine-keys.ts). The change is published on {ns}:keys:changed: every relay applies it within one
// round trip, at most cluster.keys.pollMs when the notice is missed (key-revocations.ts). A revocation is lifted only by
// `restore`: an engine restarted without its data gets it back from the relays. Exit codes: 0 done, 1 engine
// unreachable, 2 bad usage/config.
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { ConfigError, loadConfig } from '../config/load.js';
import { keyHash, keysChannel, keysKey, revokedKey, revokedRevKey } from './engine-keys.js';
import { engineUrlForLog, errorLabel } from './engine-link.js';
import { decodeRecord } from './key-plan.js';
import { newEpoch, REVOCATION_WRITE_SCRIPT } from './revocation-script.js';

export async function runKeysCluster(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [action, ...rest] = argv;
  const { values } = parseArgs({
    args: [...rest],
    options: { config: { type: 'string' }, name: { type: 'string' }, key: { type: 'string' } },
    strict: true,
  });
  if (values.config === undefined) throw new ConfigError(`keys ${action} needs --config FILE (the relay's config: cluster.url and keys)`);
  const config = loadConfig({ file: values.config, env });
  const url = config.cluster.url;
  if (url === undefined) throw new ConfigError(`${values.config}: cluster.url is not set: keys are only revoked in a cluster (remove the key from the config otherwise)`);
  const ns = config.cluster.namespace;

  let hash: string | undefined;
  let label = '';
  if (action !== 'revoked') {
    if ((values.name === undefined) === (values.key === undefined)) throw new ConfigError(`keys ${action} needs exactly one of --name NAME or --key KEY`);
    if (values.name !== undefined) {
      const k = config.keys.find((x) => x.name === values.name);
      // Not in the config: looked up among the engine's keys once connected.
      if (k !== undefined) hash = keyHash(k.key);
      label = values.name;
    } else {
      const key = values.key as string;
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(key)) throw new ConfigError('--key must be a UUID');
      hash = keyHash(key);
      label = config.keys.find((x) => x.key.toLowerCase() === key.toLowerCase())?.name ?? `(hash ${hash.slice(0, 8)})`;
    }
  }

  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: config.cluster.commandTimeoutMs, retryStrategy: () => null });
  redis.on('error', () => undefined); // reported below, once
  try {
    await redis.connect();
    if (action !== 'revoked' && hash === undefined) {
      const all = await redis.hgetall(keysKey(ns));
      const hits = Object.entries(all).filter(([, text]) => {
        const r = decodeRecord(text);
        return !('error' in r) && r.plan.name === values.name;
      });
      if (hits.length !== 1) throw new ConfigError(hits.length === 0 ? `no key named "${values.name}" in ${values.config} or in the engine` : `"${values.name}" names ${hits.length} engine keys: use --key`);
      hash = hits[0][0];
    }
    if (action === 'revoke' || action === 'restore') {
      // One script: the change, the revision bump (revocation-script.ts) and the notice, never seen apart.
      const value = action === 'revoke' ? JSON.stringify({ at: Date.now() }) : '';
      const n = Number(await redis.eval(REVOCATION_WRITE_SCRIPT, 2, revokedKey(ns), revokedRevKey(ns), action, hash as string, value, keysChannel(ns), newEpoch()));
      if (action === 'revoke') process.stdout.write(`revoked "${label}": every relay of the service refuses it within ${config.cluster.keys.pollMs} ms\n`);
      else process.stdout.write(n > 0 ? `restored "${label}"\n` : `"${label}" was not revoked\n`);
    } else {
      const all = await redis.hgetall(revokedKey(ns));
      const byHash = new Map(config.keys.map((k) => [keyHash(k.key), k.name]));
      for (const [h, text] of Object.entries(await redis.hgetall(keysKey(ns)))) {
        const r = decodeRecord(text);
        if (!('error' in r)) byHash.set(h, r.plan.name);
      }
      for (const [h, v] of Object.entries(all)) {
        const at = (JSON.parse(v) as { at?: number }).at;
        process.stdout.write(`${byHash.get(h) ?? `(hash ${h.slice(0, 8)}, not in this config or the engine)`}\t${at === undefined ? '' : new Date(at).toISOString()}\n`);
      }
    }
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    process.stderr.write(`slotrelay: cluster engine ${engineUrlForLog(url)}: ${errorLabel(err)}\n`);
    return 1;
  } finally {
    redis.disconnect();
  }
}
