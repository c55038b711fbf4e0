// Key revocations shared through the engine (main/front thread, cold: one read script per cluster.keys.pollMs, and
// one when the key sync hears a `revoked` notice on {ns}:keys:changed). `slotrelay keys revoke` (keys-cli.ts) writes
// the key's hash into {ns}:revoked, bumps {ns}:revoked:rev and publishes the notice (revocation-script.ts); every relay
// reads the hashes and marks the matching KeyTable entries revoked (config and engine keys alike: lookup() then answers
// 401 as for an unknown key) or, after `keys restore`, usable again. A revocation reaches every relay within one round
// trip of the notice, at most pollMs + one engine round trip when the notice is missed. While the engine is
// unreachable the last known set stays in force. An engine that comes back without the revision this relay read (it
// restarted without persistence, or from an older snapshot) has lost revocations, not lifted them: the relay keeps its
// set and writes it back (one warning), so only `keys restore` ever lifts a revocation.
import type { KeyTable } from '../admission/key-table.js';
import type { Logger } from '../log/logger.js';
import { keysChannel, revokedKey, revokedRevKey } from './engine-keys.js';
import type { EngineLink } from './engine-link.js';
import { newEpoch, REVOCATION_READ_SCRIPT, REVOCATION_RESEED_SCRIPT } from './revocation-script.js';

export class KeyRevocations {
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  /** A notice came while a read was on its way: read again when it is done. */
  private again = false;
  /** Hash -> the engine's value ({at}) of every revocation in force here (also what a write-back writes). */
  private revoked = new Map<string, string>();
  /** The engine's epoch and revision of the set in force ('' / -1: none read, or written before revisions existed). */
  private epoch = '';
  private revision = -1;
  /** Keys revoked now (metrics). */
  revokedCount = 0;
  polls = 0;
  /** Times this relay wrote revocations back into an engine that had lost them. */
  rewrites = 0;

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
        await this.read();
      } while (this.again);
    } catch {
      // The budget agent's round trips decide the engine's state; here the last known set simply stays.
    } finally {
      this.busy = false;
    }
  }

  private async read(): Promise<void> {
    const ns = this.namespace;
    const reply = (await this.link.redis.eval(REVOCATION_READ_SCRIPT, 2, revokedKey(ns), revokedRevKey(ns))) as (number | string)[];
    this.polls++;
    const epoch = String(reply[0]);
    const revision = Number(reply[1]);
    const engine = new Map<string, string>();
    for (let i = 2; i + 1 < reply.length; i += 2) engine.set(String(reply[i]), String(reply[i + 1]));
    const missing = this.lost(epoch, revision, engine);
    if (missing.length > 0) {
      await this.writeBack(missing, epoch);
      this.again = true; // read what the engine holds now (ours, or another relay's write-back)
      return;
    }
    this.epoch = epoch;
    this.revision = revision;
    this.revoked = engine;
    this.reapply();
  }

  /**
   * The revocations in force here that the engine lost: it lacks them and is not the engine state they were read from
   * or a later one (no epoch or another one: restarted without its data; a lower revision: an older snapshot). A
   * `restore` keeps the epoch and raises the revision: it is never taken for a loss.
   */
  private lost(epoch: string, revision: number, engine: ReadonlyMap<string, string>): string[] {
    if (this.epoch === '') return []; // nothing read with a revision yet: the engine's set is the truth
    if (epoch === this.epoch && revision >= this.revision) return [];
    return [...this.revoked.keys()].filter((h) => !engine.has(h));
  }

  private async writeBack(missing: readonly string[], engineEpoch: string): Promise<void> {
    const ns = this.namespace;
    const pairs: string[] = [];
    for (const [h, v] of this.revoked) pairs.push(h, v);
    const wrote = Number(await this.link.redis.eval(REVOCATION_RESEED_SCRIPT, 2, revokedKey(ns), revokedRevKey(ns), keysChannel(ns), newEpoch(), ...pairs));
    if (wrote === 0) return; // another relay wrote them back first: read theirs
    this.rewrites++;
    // Names only (the hash's key, never the key); a revocation of a key this relay does not know is counted.
    const names = missing.map((h) => this.keys.current(h)?.name).filter((n): n is string => n !== undefined);
    this.log.warn(
      { event: 'revocations_rewritten', lost: missing.length, written: wrote, keyNames: names, engineRestarted: engineEpoch !== this.epoch },
      `the cluster engine had lost ${missing.length} key revocation${missing.length === 1 ? '' : 's'} (restarted without persistence, or from an older snapshot?): this relay wrote ${missing.length === 1 ? 'it' : 'them'} back${names.length > 0 ? ` (${names.map((n) => `"${n}"`).join(', ')})` : ''}; they stay revoked until \`slotrelay keys restore\``,
    );
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
    for (const h of this.revoked.keys()) if (this.keys.current(h) !== undefined) count++;
    this.revokedCount = count;
  }
}
