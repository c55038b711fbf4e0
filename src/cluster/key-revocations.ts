// Key revocations shared through the engine (main/front thread, cold: one HGETALL per cluster.keys.pollMs, and one
// when the key sync hears a `revoked` notice on {ns}:keys:changed). `slotrelay keys revoke` (keys-cli.ts) writes the
// key's hash into {ns}:revoked and publishes the notice; every relay reads the hashes and marks the matching KeyTable
// entries revoked (config and engine keys alike: lookup() then answers 401 as for an unknown key) or, after `keys
// restore`, usable again. A revocation reaches every relay within one round trip of the notice, at most pollMs + one
// engine round trip when the notice is missed. While the engine is unreachable the last known set stays in force (a
// revoked key does not come back because the engine is down).
import type { KeyTable } from '../front/auth.js';
import type { Logger } from '../log/logger.js';
import { revokedKey } from './engine-keys.js';
import type { EngineLink } from './engine-link.js';

export class KeyRevocations {
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  /** A notice came while a read was on its way: read again when it is done. */
  private again = false;
  private revoked = new Set<string>();
  /** Keys revoked now (metrics). */
  revokedCount = 0;
  polls = 0;

  constructor(
    private readonly link: EngineLink,
    private readonly keys: KeyTable,
    private readonly namespace: string,
    private readonly pollMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
    void this.poll();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Read the set now (a `revoked` notice); a read already on its way is followed by another. */
  pollNow(): void {
    void this.poll();
  }

  private async poll(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return;
    }
    if (this.link.state === 'connecting') return;
    this.busy = true;
    try {
      do {
        this.again = false;
        const revoked = await this.link.redis.hgetall(revokedKey(this.namespace));
        this.polls++;
        this.revoked = new Set(Object.keys(revoked));
        this.reapply();
      } while (this.again);
    } catch {
      // The budget agent's round trips decide the engine's state; here the last known set simply stays.
    } finally {
      this.busy = false;
    }
  }

  /** Mark every entry by the last set read (also after the key sync put new entries in: they start unrevoked). */
  reapply(): void {
    for (const e of this.keys.entries) {
      const now = this.revoked.has(e.hash);
      if (now === e.revoked) continue;
      e.revoked = now;
      // Superseded entries (a plan changed since) follow silently; the key's name only, never the key.
      if (this.keys.current(e.hash) !== e) continue;
      this.log.warn({ event: now ? 'key_revoked' : 'key_restored', keyName: e.name }, now ? `key "${e.name}" revoked through the cluster engine` : `key "${e.name}" restored through the cluster engine`);
    }
    let count = 0;
    for (const h of this.revoked) if (this.keys.current(h) !== undefined) count++;
    this.revokedCount = count;
  }
}
