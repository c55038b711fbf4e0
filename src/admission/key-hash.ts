// An API key's engine name (cold: once per key at start, once per unknown candidate): the first 128 bits of the
// SHA-256 of the lower-cased key, so that the engine, its dumps and MONITOR never see a key (src/cluster/engine-keys.ts).
import { createHash } from 'node:crypto';

export function keyHash(apiKey: string): string {
  return createHash('sha256').update(apiKey.toLowerCase()).digest('hex').slice(0, 32);
}
