// Key revocations shared through the engine (main/front thread, cold: one HGETALL per cluster.keys.pollMs).
// `slotrelay keys revoke` (keys-cli.ts) writes the key's hash into {ns}:revoked; every relay reads the hash and marks
// the matching KeyTable entries revoked (lookup() then answers 401 as for an unknown key) or, after `keys restore`,
// usable again. A revocation reaches every relay within pollMs + one engine round trip. While the engine is
// unreachable the last known set stays in force (a revoked key does not come back because the engine is down).
import type { KeyTable } from '../front/auth.js';
import type { Logger } from '../log/logger.js';
import { keyHash, revokedKey } from './engine-keys.js';
import type { EngineLink } from './engine-link.js';

export class KeyRevocations {
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  private readonly hashes: string[];
  /** Keys revoked now (metrics). */
  revokedCount = 0;
  polls = 0;

  constructor(
    private readonly link: EngineLink,
    private readonly keys: KeyTable,
    private readonly namespace: string,
    private readonly pollMs: number,
    private readonly log: Logger,
  ) {
    this.hashes = keys.entries.map((e) => keyHash(e.config.key));
  }

  start(): void {
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
    void this.poll();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private async poll(): Promise<void> {
    if (this.busy || this.link.state === 'connecting') return;
    this.busy = true;
    try {
      const revoked = await this.link.redis.hgetall(revokedKey(this.namespace));
      this.polls++;
      this.apply(revoked);
    } catch {
      // The budget agent's round trips decide the engine's state; here the last known set simply stays.
    } finally {
      this.busy = false;
    }
  }

  private apply(revoked: Record<string, string>): void {
    let count = 0;
    this.keys.entries.forEach((e, i) => {
      const now = Object.hasOwn(revoked, this.hashes[i]);
      if (now) count++;
      if (now === e.revoked) return;
      e.revoked = now;
      // The key's name only: never the key.
      this.log.warn({ event: now ? 'key_revoked' : 'key_restored', key: e.name }, now ? `key "${e.name}" revoked through the cluster engine` : `key "${e.name}" restored through the cluster engine`);
    });
    this.revokedCount = count;
  }
}
